//! A campaign's batches compiled: each `batch.cu` written from the batch's
//! programs where it is missing or older than they are, and compiled once
//! (`nvcc -rdc=true -cubin`, then `nvcc -dlink -cubin -lcudadevrt` into
//! `batch.cubin`), the batches in parallel, each nvcc under a time limit.
//! A cubin newer than its source and the header is kept. With the stand-in
//! GPU nothing is compiled.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Instant;

use gridcheck_toolchain::Nvcc;

use crate::batch::{Batch, CUBIN, CampaignProgram, PROGRAMS, SOURCE, write_batch, write_source};
use crate::fake::FAKE_GPU;
use gridcheck_child::run_with_timeout;

/// The architecture a campaign compiles for (the H100 and H200).
pub const ARCH: &str = "sm_90";

/// Whether `cubin` is newer than every input.
fn fresh(cubin: &Path, inputs: &[PathBuf]) -> bool {
    let m = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    match m(cubin) {
        Some(c) => inputs.iter().all(|i| m(i).is_some_and(|t| t < c)),
        None => false,
    }
}

/// One nvcc run under `timeout` seconds: `Err` holds its command and words.
fn nvcc(n: &Nvcc, args: &[String], timeout: u64) -> Result<(), String> {
    let mut cmd = Command::new(&n.path);
    cmd.args(args);
    let line = format!("{} {}", n.path.display(), args.join(" "));
    match run_with_timeout(cmd, timeout) {
        None => Err(format!("{line}: killed after {timeout} s")),
        Some((Ok(st), _, _)) if st.success() => Ok(()),
        Some((st, out, err)) => {
            let tail: Vec<&str> = out.lines().chain(err.lines()).rev().take(12).collect();
            Err(format!(
                "{line}: {}\n{}",
                st.map(|s| s.to_string()).unwrap_or_else(|e| e),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            ))
        }
    }
}

/// Compiles one batch directory into its `batch.cubin`.
pub fn batch(n: &Nvcc, include: &Path, dir: &Path, timeout: u64) -> Result<(), String> {
    let src = dir.join(SOURCE);
    let obj = dir.join("batch.o");
    let cubin = dir.join(CUBIN);
    if !fresh(&src, &[dir.join(PROGRAMS)]) {
        write_source(dir)?;
    }
    if fresh(&cubin, &[src.clone(), include.join("gridcheck.cuh")]) {
        return Ok(());
    }
    let s = |p: &Path| p.display().to_string();
    nvcc(
        n,
        &[
            format!("-arch={ARCH}"),
            "-rdc=true".into(),
            format!("-I{}", include.display()),
            "-cubin".into(),
            s(&src),
            "-o".into(),
            s(&obj),
        ],
        timeout,
    )?;
    nvcc(
        n,
        &[
            format!("-arch={ARCH}"),
            "-dlink".into(),
            "-cubin".into(),
            s(&obj),
            format!("-L{}", n.lib_dir.display()),
            "-lcudadevrt".into(),
            "-o".into(),
            s(&cubin),
        ],
        timeout,
    )
}

/// Compiles every batch with `jobs` nvcc at a time: per batch, `Ok` or why
/// not; and the seconds it took.
pub fn all(
    n: &Nvcc,
    include: &Path,
    dirs: &[PathBuf],
    jobs: usize,
    timeout: u64,
) -> (Vec<Result<(), String>>, f64) {
    let start = Instant::now();
    let next = Mutex::new(0usize);
    let results: Mutex<Vec<Option<Result<(), String>>>> = Mutex::new(vec![None; dirs.len()]);
    std::thread::scope(|s| {
        for _ in 0..jobs.min(dirs.len()).max(1) {
            s.spawn(|| {
                loop {
                    let i = {
                        let mut g = next.lock().unwrap_or_else(|e| e.into_inner());
                        let i = *g;
                        *g += 1;
                        i
                    };
                    let Some(d) = dirs.get(i) else { break };
                    let r = batch(n, include, d, timeout);
                    results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
                }
            });
        }
    });
    let r = results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("not compiled".into())))
        .collect();
    (r, start.elapsed().as_secs_f64())
}

/// Whether batches are compiled at all: the stand-in GPU (`fake.rs`) loads
/// no module.
pub fn needed() -> bool {
    std::env::var_os(FAKE_GPU).is_none()
}

/// `programs` written as a batch in `dir`, compiled (where [`needed`]) and
/// read back.
pub fn prepared(
    root: &Path,
    dir: &Path,
    programs: &[CampaignProgram],
    timeout: u64,
) -> Result<Batch, String> {
    write_batch(dir, programs)?;
    if needed() {
        let nvcc = gridcheck_toolchain::find_nvcc(root)?;
        batch(
            &nvcc,
            &root.join(gridcheck_kernelgen::INCLUDE_DIR),
            dir,
            timeout,
        )?;
    }
    Batch::read(dir)
}
