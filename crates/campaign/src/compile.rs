//! A campaign's batches compiled: each `batch.cu` written from the batch's
//! programs (left alone where it already says the same), and compiled once
//! (`nvcc -rdc=true -cubin`, then `nvcc -dlink -cubin -lcudadevrt` into
//! `batch.cubin`), the batches in parallel, each nvcc under a time limit.
//! A cubin is kept where its key (`batch.key`: the hash of the source, the
//! header, the architecture and nvcc's version) says it was built from what
//! is there now: by content, not by file times, so that batches compiled on
//! one machine and copied to another are not compiled again. With the
//! stand-in GPU nothing is compiled.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Instant;

use gridcheck_toolchain::Nvcc;

use crate::batch::{Batch, CUBIN, CampaignProgram, SOURCE, write_batch, write_source};
use crate::fake::FAKE_GPU;
use gridcheck_child::run_with_timeout;

/// The architecture a campaign compiles for (the H100 and H200).
pub const ARCH: &str = "sm_90";

/// The file holding the key of the inputs a batch's cubin was built from.
const KEY: &str = "batch.key";

/// The key of a batch's inputs: its source, the header it includes, the
/// architecture and the compiler's version.
fn key(n: &Nvcc, inputs: &[PathBuf]) -> Result<String, String> {
    let mut bytes = format!("{ARCH}\n{}\n", n.version).into_bytes();
    for i in inputs {
        bytes.extend(std::fs::read(i).map_err(|e| format!("cannot read {}: {e}", i.display()))?);
        bytes.push(0);
    }
    Ok(format!("{:016x}", gridcheck_toolchain::fnv1a64(&bytes)))
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
    write_source(dir)?;
    let key_file = dir.join(KEY);
    let key = key(n, &[src.clone(), include.join("gridcheck.cuh")])?;
    let built = std::fs::read_to_string(&key_file).is_ok_and(|k| k.trim() == key);
    if built && cubin.is_file() {
        return Ok(());
    }
    let _ = std::fs::remove_file(&key_file);
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
    )?;
    let _ = std::fs::remove_file(&obj);
    std::fs::write(&key_file, key).map_err(|e| format!("cannot write {}: {e}", key_file.display()))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A cubin's key follows what it was built from, not when: the same
    /// inputs copied elsewhere give the same key; another source, header
    /// or compiler another.
    #[test]
    fn a_key_names_the_inputs_and_the_compiler() {
        let dir = std::env::temp_dir().join(format!("gridcheck-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (src, hdr) = (dir.join("batch.cu"), dir.join("gridcheck.cuh"));
        std::fs::write(&src, "kernel a").unwrap();
        std::fs::write(&hdr, "header").unwrap();
        let nvcc = |v: &str| Nvcc {
            path: "/x/nvcc".into(),
            version: v.into(),
            lib_dir: "/x/lib".into(),
            found_via: "test".into(),
        };
        let inputs = [src.clone(), hdr.clone()];
        let k = key(&nvcc("13.0.88"), &inputs).unwrap();
        // Written again with the same text (a copy to another machine).
        std::fs::write(&src, "kernel a").unwrap();
        assert_eq!(key(&nvcc("13.0.88"), &inputs).unwrap(), k);
        assert_ne!(key(&nvcc("13.5.37"), &inputs).unwrap(), k, "another nvcc");
        std::fs::write(&hdr, "header 2").unwrap();
        assert_ne!(key(&nvcc("13.0.88"), &inputs).unwrap(), k, "another header");
        std::fs::remove_file(&hdr).unwrap();
        assert!(key(&nvcc("13.0.88"), &inputs).is_err(), "a missing input");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
