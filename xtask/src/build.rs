//! `cargo xtask build`: every generated kernel through nvcc, for every
//! architecture its test's plan allows, plus its PTX.
//!
//! Each file is built as its test says ([`gridcheck_kernelgen::build_plan`]):
//! a litmus test for every architecture asked for (a CDP1 one, with
//! `devicesync`, only below sm_90 and with the CDP1 flags; a PDL one from
//! sm_90 on), a runtime test likewise into a cubin, a host test's whole
//! program into an executable `<test>.host` beside the cubins. Besides, each
//! litmus and runtime test's relocatable PTX for the lowest architecture
//! its plan allows ([`gridcheck_kernelgen::ptx_arch`]), which the harness
//! JIT-links with the `libcudadevrt.a` copied beside the architectures.
//! Layout: `gridcheck_toolchain::binary`; the kernels root is one
//! parameter (default `target/kernels`). Files not built for an
//! architecture are counted in a note, not an error.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Instant, SystemTime};

use gridcheck_toolchain::kernels_dir;
use gridcheck_toolchain::{Nvcc, Toolchain, find_nvcc};

use crate::Result;

/// What a job makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// `-rdc=true -c`, then `-dlink -cubin` with cudadevrt.
    Cubin,
    /// A host test's whole program.
    Executable,
    /// `-arch=compute_<N> -rdc=true -ptx`.
    Ptx,
}

/// One generated file to build for one architecture.
pub struct Job {
    pub src: PathBuf,
    pub arch: String,
    pub flags: Vec<String>,
    pub output: Output,
}

/// Which architectures to build: `--arch all` (every one nvcc targets,
/// the default) or a comma-separated list.
pub fn archs(nvcc: &Nvcc, arg: &str, kernels: &Path) -> Result<Vec<String>> {
    let (targets, missing) = targets(nvcc, kernels)?;
    match arg {
        "all" => return Ok(targets),
        // The PTX only (for a device nvcc does not target).
        "none" => return Ok(Vec::new()),
        _ => {}
    }
    let mut out = Vec::new();
    for a in arg.split(',').map(str::trim).filter(|a| !a.is_empty()) {
        if let Some((_, why)) = missing.iter().find(|(m, _)| m == a) {
            return Err(format!(
                "--arch {a}: nvcc {}'s libcudadevrt.a cannot be linked for it ({why})",
                nvcc.version
            ));
        }
        if !targets.iter().any(|t| t == a) {
            return Err(format!(
                "--arch {a}: nvcc {} does not target it (it targets {}, or `all`)",
                nvcc.version,
                targets.join(" ")
            ));
        }
        out.push(a.to_string());
    }
    if out.is_empty() {
        return Err("--arch: no architecture named".into());
    }
    Ok(out)
}

/// An architecture left out, and why.
pub type LeftOut = (String, String);

/// The architectures to build for: those nvcc targets
/// ([`Nvcc::gpu_archs`]) whose device runtime links (a probe each, its
/// answer kept in `<kernels>/obj/targets` for this nvcc), and those left
/// out with the reason (printed once, when probed).
pub fn targets(nvcc: &Nvcc, kernels: &Path) -> Result<(Vec<String>, Vec<LeftOut>)> {
    let (listed, note) = nvcc.gpu_archs();
    let cache = kernels.join("obj/targets");
    let key = format!("nvcc {} {}\n", nvcc.path.display(), nvcc.version);
    let mut missing: Vec<LeftOut> = Vec::new();
    if let Some(body) = std::fs::read_to_string(&cache)
        .ok()
        .and_then(|t| t.strip_prefix(&key).map(String::from))
    {
        for line in body.lines() {
            if let Some((a, why)) = line.split_once(' ') {
                missing.push((a.to_string(), why.to_string()));
            }
        }
    } else {
        if let Some(n) = note {
            println!("build: note: {n}");
        }
        let work = kernels.join("obj/probe");
        let answers: Vec<(String, std::result::Result<(), String>)> = std::thread::scope(|s| {
            let hs: Vec<_> = listed
                .iter()
                .map(|a| {
                    let work = &work;
                    s.spawn(move || (a.clone(), nvcc.links_device_runtime(a, work)))
                })
                .collect();
            hs.into_iter().filter_map(|h| h.join().ok()).collect()
        });
        for (a, r) in answers {
            if let Err(why) = r {
                println!("build: note: leaving out {a}: its device runtime does not link ({why})");
                missing.push((a, why.replace('\n', " ")));
            }
        }
        let body: String = missing.iter().map(|(a, w)| format!("{a} {w}\n")).collect();
        std::fs::create_dir_all(kernels.join("obj"))
            .and_then(|()| std::fs::write(&cache, format!("{key}{body}")))
            .map_err(|e| format!("cannot write {}: {e}", cache.display()))?;
    }
    let targets = listed
        .into_iter()
        .filter(|a| !missing.iter().any(|(m, _)| m == a))
        .collect();
    Ok((targets, missing))
}

/// Builds the generated file of every litmus, runtime and host test for
/// each of `archs` into `<kernels>/<arch>/`, and each litmus and runtime
/// test's PTX (for the lowest architecture nvcc targets that its plan
/// allows), skipping outputs that are newer than the source and the headers
/// and were built by the same nvcc with the same architecture and flags;
/// `jobs` nvcc processes at a time. Returns what was built.
pub fn run(
    root: &Path,
    kernels: &Path,
    arch_arg: &str,
    jobs: usize,
    toolchain: Option<&Toolchain>,
) -> Result<Vec<PathBuf>> {
    let started = Instant::now();
    let spec = crate::load_spec(root)?;
    let toolchain = match toolchain {
        Some(t) => t.clone(),
        None => Toolchain::of_nvcc(find_nvcc(root)?),
    };
    let nvcc = toolchain.nvcc.clone();
    let archs = archs(&nvcc, arch_arg, kernels)?;
    let (targets, _) = targets(&nvcc, kernels)?;
    let src_dir = root.join(gridcheck_kernelgen::GENERATED_DIR);
    let include = root.join(gridcheck_kernelgen::INCLUDE_DIR);
    let (mut work, skipped) = plan_jobs(&spec, &src_dir, &archs, &targets)?;
    // PTX first, then one architecture after another: an interrupted build
    // leaves whole architectures.
    let rank = |j: &Job| {
        (
            j.output != Output::Ptx,
            archs.iter().position(|a| *a == j.arch),
        )
    };
    work.sort_by_key(rank);
    std::fs::create_dir_all(kernels)
        .map_err(|e| format!("cannot create {}: {e}", kernels.display()))?;
    // The device runtime the PTX is linked with at JIT time: this toolkit's.
    let devrt = kernels.join(gridcheck_toolchain::binary::DEVRT);
    crate::copy(
        &nvcc.lib_dir.join(gridcheck_toolchain::binary::DEVRT),
        &devrt,
    )?;
    let results = compile(&nvcc, &work, &include, kernels, jobs);
    let mut built = Vec::new();
    let mut errors = Vec::new();
    for r in results {
        match r {
            Ok(c) => built.push(c),
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return Err(errors.join("\n"));
    }
    let count = |o: Output| work.iter().filter(|j| j.output == o).count();
    println!(
        "build: {} cubins, {} host programs and {} PTX for {} in {} ({skipped} test-architecture \
         pairs not built: their plan excludes them; {:.1} s, {jobs} jobs; nvcc {} via {})",
        count(Output::Cubin),
        count(Output::Executable),
        count(Output::Ptx),
        archs.join(" "),
        kernels.display(),
        started.elapsed().as_secs_f64(),
        nvcc.version,
        nvcc.found_via
    );
    built.push(devrt);
    built.extend(stamp_toolchain(&toolchain, kernels, &archs)?);
    Ok(built)
}

/// The jobs: each generated file for each architecture its plan allows,
/// and its PTX; with the count of test-architecture pairs a plan excludes.
/// A missing generated file is an error; a generated file no test makes is
/// noted.
fn plan_jobs(
    spec: &gridcheck_spec::Spec,
    src_dir: &Path,
    archs: &[String],
    targets: &[String],
) -> Result<(Vec<Job>, usize)> {
    let mut work = Vec::new();
    let mut missing = Vec::new();
    let mut wanted = std::collections::BTreeSet::new();
    let mut skipped = 0;
    for test in &spec.tests {
        if !gridcheck_kernelgen::has_generated_file(test) {
            continue;
        }
        let file = gridcheck_kernelgen::file_name(test);
        wanted.insert(file.clone());
        let src = src_dir.join(&file);
        if !src.is_file() {
            missing.push(src.display().to_string());
            continue;
        }
        let executable = gridcheck_kernelgen::builds_executable(test);
        for arch in archs {
            match gridcheck_kernelgen::build_plan(test, arch) {
                Ok(Some(flags)) => work.push(Job {
                    src: src.clone(),
                    arch: arch.clone(),
                    flags,
                    output: if executable {
                        Output::Executable
                    } else {
                        Output::Cubin
                    },
                }),
                Ok(None) => {}
                Err(_) => skipped += 1,
            }
        }
        if let Some(arch) = gridcheck_kernelgen::ptx_arch(test, targets)
            && let Ok(Some(flags)) = gridcheck_kernelgen::build_plan(test, arch)
        {
            work.push(Job {
                src: src.clone(),
                arch: arch.to_string(),
                flags,
                output: Output::Ptx,
            });
        }
    }
    if !missing.is_empty() {
        return Err(format!(
            "generated kernels are missing (run `cargo xtask codegen`):\n  {}",
            missing.join("\n  ")
        ));
    }
    if let Ok(entries) = std::fs::read_dir(src_dir) {
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
    Ok((work, skipped))
}

/// The toolchain that built the kernels, beside every architecture's
/// kernels and at the root (the PTX's), for the GPU tier's records.
/// Returns the files written, which travel with the kernels (a bundle's
/// records name the toolchain that built its kernels).
fn stamp_toolchain(
    toolchain: &Toolchain,
    kernels: &Path,
    archs: &[String],
) -> Result<Vec<PathBuf>> {
    let stamp = crate::toolchain::record(toolchain);
    let mut written = Vec::new();
    for dir in std::iter::once(kernels.to_path_buf()).chain(archs.iter().map(|a| kernels.join(a))) {
        if dir.is_dir() {
            stamp
                .write_into(&dir)
                .map_err(|e| format!("the kernels' toolchain: {e}"))?;
            written.push(dir.join(gridcheck_report::TOOLCHAIN_FILE));
        }
    }
    Ok(written)
}

/// Compiles the jobs, `jobs` at a time (each thread takes the next job),
/// each skipped when its output is current. Outputs go to
/// `<kernels>/<arch>/`, objects and stamps to `<kernels>/obj/<arch>/`.
pub fn compile(
    nvcc: &Nvcc,
    work: &[Job],
    include: &Path,
    kernels: &Path,
    jobs: usize,
) -> Vec<Result<PathBuf>> {
    let newest_header = std::fs::read_dir(include)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.metadata().ok()?.modified().ok())
        .max();
    let mut archs: Vec<&str> = work.iter().map(|j| j.arch.as_str()).collect();
    archs.sort();
    archs.dedup();
    for a in archs {
        for d in [kernels.join(a), kernels.join("obj").join(a)] {
            if let Err(e) = std::fs::create_dir_all(&d) {
                return vec![Err(format!("cannot create {}: {e}", d.display()))];
            }
        }
    }
    let next = AtomicUsize::new(0);
    let threads = jobs.clamp(1, work.len().max(1));
    let mut results: Vec<(usize, Result<PathBuf>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let next = &next;
                s.spawn(move || {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(job) = work.get(i) else { break };
                        done.push((i, one(nvcc, job, include, kernels, newest_header)));
                    }
                    done
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|_| vec![(usize::MAX, Err("a build thread panicked".into()))])
            })
            .collect()
    });
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// The default number of nvcc processes: one per core.
/// The options of `build` and `gpu-bundle`: `--arch all|sm_XX[,..]`
/// (default all), `--jobs N` (default one per core) and `--toolchain
/// 13.5[,..]` (repeatable: each toolchain found among the installed ones,
/// in order; none: the default nvcc).
#[derive(Debug)]
pub struct Args {
    pub arch: String,
    pub jobs: usize,
    pub toolchains: Vec<Toolchain>,
}

impl Args {
    /// Reads `args` of the command `command` (for the usage line).
    pub fn parse(root: &Path, args: &[String], command: &str) -> Result<Args> {
        let (mut arch, mut jobs) = ("all".to_string(), default_jobs());
        let mut releases = Vec::new();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            match (a.as_str(), it.next()) {
                ("--arch", Some(v)) => arch = v.clone(),
                ("--jobs", Some(v)) => {
                    jobs = v
                        .parse()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or_else(|| format!("--jobs: `{v}` is not a positive number"))?
                }
                ("--toolchain", Some(v)) => gridcheck_toolchain::add_releases(&mut releases, v)
                    .map_err(|e| format!("--toolchain {v}: {e}"))?,
                _ => {
                    return Err(format!(
                        "usage: cargo xtask {command} [--arch all|sm_XX[,sm_YY]] [--jobs N] \
                         [--toolchain 13.5[,..]]"
                    ));
                }
            }
        }
        let toolchains = releases
            .iter()
            .map(|r| gridcheck_toolchain::find_toolchain(root, r))
            .collect::<Result<_>>()?;
        Ok(Args {
            arch,
            jobs,
            toolchains,
        })
    }
}

/// `cargo xtask build`: once a toolchain named, each into its kernels root,
/// else with the default nvcc into `target/kernels`.
pub fn command(args: &[String]) -> Result<()> {
    let root = crate::root();
    let a = Args::parse(&root, args, "build")?;
    if a.toolchains.is_empty() {
        let kernels = kernels_dir(&root, None);
        return run(&root, &kernels, &a.arch, a.jobs, None).map(|_| ());
    }
    for t in &a.toolchains {
        let kernels = kernels_dir(&root, Some(&t.name));
        run(&root, &kernels, &a.arch, a.jobs, Some(t))?;
    }
    Ok(())
}

pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// What an output was built with; one whose stamp differs is rebuilt.
fn stamp(nvcc: &Nvcc, job: &Job) -> String {
    format!(
        "nvcc {} {}\narch {}\nflags {}\noutput {:?}\n",
        nvcc.path.display(),
        nvcc.version,
        job.arch,
        job.flags.join(" "),
        job.output
    )
}

fn one(
    nvcc: &Nvcc,
    job: &Job,
    include: &Path,
    kernels: &Path,
    newest_header: Option<SystemTime>,
) -> Result<PathBuf> {
    let src = &job.src;
    let stem = src
        .file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let obj_dir = kernels.join("obj").join(&job.arch);
    let obj = obj_dir.join(format!("{stem}.rdc.cubin"));
    let ext = match job.output {
        Output::Cubin => "cubin",
        Output::Executable => "host",
        Output::Ptx => "ptx",
    };
    let out = kernels.join(&job.arch).join(format!("{stem}.{ext}"));
    let stamp_file = obj_dir.join(format!("{stem}.{ext}.stamp"));
    let stamp = stamp(nvcc, job);
    let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if let (Some(c), Some(s)) = (mtime(&out), mtime(src))
        && c > s
        && newest_header.is_none_or(|h| c > h)
        && std::fs::read_to_string(&stamp_file).ok().as_deref() == Some(stamp.as_str())
    {
        return Ok(out);
    }
    // A build that fails half-way must not leave an output that looks current.
    let _ = std::fs::remove_file(&stamp_file);
    let step = |o: gridcheck_toolchain::CompileOutput, what: &str| {
        if o.success {
            Ok(())
        } else {
            Err(format!(
                "{} does not {what} for {}:\n{}\n$ {}",
                src.display(),
                job.arch,
                o.output.trim(),
                o.command
            ))
        }
    };
    match job.output {
        Output::Executable => step(
            nvcc.build_host_program(src, include, &job.arch, &job.flags, &out),
            "build",
        )?,
        Output::Ptx => step(
            nvcc.compile_ptx(src, include, &job.arch, &job.flags, &out),
            "compile to PTX",
        )?,
        Output::Cubin => {
            step(
                nvcc.compile_rdc_cubin(src, include, &job.arch, &job.flags, &obj),
                "compile",
            )?;
            step(nvcc.dlink_cubin(&obj, &job.arch, &out), "link")?;
        }
    }
    std::fs::write(&stamp_file, stamp)
        .map_err(|e| format!("cannot write {}: {e}", stamp_file.display()))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_options_of_a_build() {
        let root = Path::new("/nonexistent");
        let a = Args::parse(root, &v(&["--arch", "sm_90", "--jobs", "3"]), "build").unwrap();
        assert_eq!(
            (a.arch.as_str(), a.jobs, a.toolchains.len()),
            ("sm_90", 3, 0)
        );
        let a = Args::parse(root, &[], "build").unwrap();
        assert_eq!((a.arch.as_str(), a.jobs), ("all", default_jobs()));
        let e = Args::parse(root, &v(&["--toolchain", "13.0,13.5"]), "build").unwrap_err();
        assert!(e.contains("toolchain install 13.0"), "{e}");
        let e = Args::parse(root, &v(&["--toolchain", "thirteen"]), "build").unwrap_err();
        assert!(
            e.starts_with("--toolchain thirteen: `thirteen` is not a toolchain"),
            "{e}"
        );
        let e = Args::parse(root, &v(&["--jobs", "0"]), "build").unwrap_err();
        assert!(e.contains("not a positive number"), "{e}");
        let e = Args::parse(root, &v(&["--tier", "gpu"]), "gpu-bundle").unwrap_err();
        assert!(e.starts_with("usage: cargo xtask gpu-bundle "), "{e}");
    }
}
