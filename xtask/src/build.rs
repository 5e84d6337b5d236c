//! `cargo xtask build`: every generated kernel through nvcc into a cubin.
//!
//! Each file is built as its test says ([`gridcheck_kernelgen::build_plan`]):
//! a litmus test for the architecture being built with no extra flags (a
//! CDP1 one, with `devicesync`, only below sm_90 and with the CDP1 flags), a
//! runtime test with its own `arch` and `flags` into a cubin, a host test's
//! whole program into an executable `<test>.host` beside the cubins. Files
//! not built for this architecture are listed in a note, not an error.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use gridcheck_toolchain::{Nvcc, Toolchain, find_nvcc};

use crate::Result;

/// One generated file to build.
pub struct Job {
    pub src: PathBuf,
    pub arch: String,
    pub flags: Vec<String>,
    /// A host test's program: an executable, not a cubin.
    pub executable: bool,
}

/// Builds the generated file of every litmus and runtime test into
/// `target/kernels/<arch>/<test>.cubin` (a host test's into `<test>.host`),
/// skipping files whose output is newer than the source and the headers and
/// was built by the same nvcc with the same architecture and flags. Returns
/// what was built.
pub fn run(root: &Path, arch: &str) -> Result<Vec<PathBuf>> {
    run_with(root, arch, None)
}

/// [`run`] with an installed toolchain (`--toolchain`): its nvcc, into
/// `target/kernels-nvcc-<release>/<arch>/`; `None`, the default nvcc into
/// `target/kernels/<arch>/`. Either way `toolchain.json` beside the cubins
/// names the toolchain, for the GPU tier's records.
pub fn run_with(root: &Path, arch: &str, tc: Option<&Toolchain>) -> Result<Vec<PathBuf>> {
    let spec = crate::load_spec(root)?;
    let build_dir = crate::toolchain::kernels_dir(root, tc);
    let tc = match tc {
        Some(t) => t.clone(),
        None => Toolchain::of_nvcc(find_nvcc(root)?),
    };
    let nvcc = tc.nvcc.clone();
    let src_dir = root.join(gridcheck_kernelgen::GENERATED_DIR);
    let include = root.join(gridcheck_kernelgen::INCLUDE_DIR);
    let out_dir = build_dir.join(arch);
    let obj_dir = build_dir.join("obj").join(arch);
    for d in [&out_dir, &obj_dir] {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    let mut jobs = Vec::new();
    let mut missing = Vec::new();
    let mut wanted = std::collections::BTreeSet::new();
    let mut skipped = Vec::new();
    for test in &spec.tests {
        if !gridcheck_kernelgen::has_generated_file(test) {
            continue;
        }
        let file = gridcheck_kernelgen::file_name(test);
        wanted.insert(file.clone());
        let flags = match gridcheck_kernelgen::build_plan(test, arch) {
            Ok(Some(flags)) => flags,
            Ok(None) => continue,
            Err(why) => {
                skipped.push(format!("{file}: {why}"));
                continue;
            }
        };
        let src = src_dir.join(&file);
        if !src.is_file() {
            missing.push(src.display().to_string());
            continue;
        }
        jobs.push(Job {
            src,
            arch: arch.to_string(),
            flags,
            executable: gridcheck_kernelgen::builds_executable(test),
        });
    }
    if !skipped.is_empty() {
        println!(
            "build: not building {} files for {arch}:\n  {}",
            skipped.len(),
            skipped.join("\n  ")
        );
    }
    if !missing.is_empty() {
        return Err(format!(
            "generated kernels are missing (run `cargo xtask codegen`):\n  {}",
            missing.join("\n  ")
        ));
    }
    if let Ok(entries) = std::fs::read_dir(&src_dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".cu") && !wanted.contains(&name) {
                println!(
                    "build: not building {}: no test of the spec generates it (run `cargo xtask codegen`)",
                    e.path().display()
                );
            }
        }
    }
    let results = compile(&nvcc, &jobs, &include, &obj_dir, &out_dir);
    crate::toolchain::record(&tc)
        .write_into(&out_dir)
        .map_err(|e| format!("the kernels' toolchain: {e}"))?;
    let mut cubins = Vec::new();
    let mut errors = Vec::new();
    for r in results {
        match r {
            Ok(c) => cubins.push(c),
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return Err(errors.join("\n"));
    }
    println!(
        "build: {} cubins and {} host programs for {arch} in {} (nvcc {} via {})",
        cubins
            .iter()
            .filter(|c| c.extension().is_some_and(|e| e == "cubin"))
            .count(),
        cubins
            .iter()
            .filter(|c| c.extension().is_some_and(|e| e == "host"))
            .count(),
        out_dir.display(),
        nvcc.version,
        nvcc.found_via
    );
    Ok(cubins)
}

/// Compiles the jobs in parallel (a thread per core), each skipped when its
/// output is current.
pub fn compile(
    nvcc: &Nvcc,
    jobs: &[Job],
    include: &Path,
    obj_dir: &Path,
    out_dir: &Path,
) -> Vec<Result<PathBuf>> {
    let newest_header = std::fs::read_dir(include)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.metadata().ok()?.modified().ok())
        .max();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let chunks: Vec<&[Job]> = jobs.chunks(jobs.len().div_ceil(threads).max(1)).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .iter()
            .map(|chunk| {
                let (nvcc, include, out_dir, obj_dir) = (nvcc, include, out_dir, obj_dir);
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|job| one(nvcc, job, include, obj_dir, out_dir, newest_header))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|_| vec![Err("a build thread panicked".into())])
            })
            .collect()
    })
}

/// What a cubin was built with; a cubin whose stamp differs is rebuilt.
fn stamp(nvcc: &Nvcc, job: &Job) -> String {
    format!(
        "nvcc {} {}\narch {}\nflags {}\nexecutable {}\n",
        nvcc.path.display(),
        nvcc.version,
        job.arch,
        job.flags.join(" "),
        job.executable
    )
}

fn one(
    nvcc: &Nvcc,
    job: &Job,
    include: &Path,
    obj_dir: &Path,
    out_dir: &Path,
    newest_header: Option<SystemTime>,
) -> Result<PathBuf> {
    let src = &job.src;
    let stem = src
        .file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let obj = obj_dir.join(format!("{stem}.o"));
    let cubin = out_dir.join(if job.executable {
        format!("{stem}.host")
    } else {
        format!("{stem}.cubin")
    });
    let stamp_file = obj_dir.join(format!("{stem}.stamp"));
    let stamp = stamp(nvcc, job);
    let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if let (Some(c), Some(s)) = (mtime(&cubin), mtime(src))
        && c > s
        && newest_header.is_none_or(|h| c > h)
        && std::fs::read_to_string(&stamp_file).ok().as_deref() == Some(stamp.as_str())
    {
        return Ok(cubin);
    }
    // A build that fails half-way must not leave a cubin that looks current.
    let _ = std::fs::remove_file(&stamp_file);
    let step = |out: gridcheck_toolchain::CompileOutput, what: &str| {
        if out.success {
            Ok(())
        } else {
            Err(format!(
                "{} does not {what}:\n{}\n$ {}",
                src.display(),
                out.output.trim(),
                out.command
            ))
        }
    };
    if job.executable {
        step(
            nvcc.build_host_program(src, include, &job.arch, &job.flags, &cubin),
            "build",
        )?;
    } else {
        step(
            nvcc.compile_rdc(src, include, &job.arch, &job.flags, &obj),
            "compile",
        )?;
        step(nvcc.dlink_cubin(&obj, &job.arch, &cubin), "link")?;
    }
    std::fs::write(&stamp_file, stamp)
        .map_err(|e| format!("cannot write {}: {e}", stamp_file.display()))?;
    Ok(cubin)
}
