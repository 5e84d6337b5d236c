//! `cargo xtask library build`: every program of `kernels/cccl/` for every
//! installed release (or those asked for), with that release's own nvcc and
//! headers, for each target and variant of `gridcheck_library`'s contract,
//! in parallel; binaries already newer than their inputs are kept (unless
//! `--force`); `target/library/<release>/build.json` records each build.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Instant, SystemTime};

use gridcheck_library::{
    InstalledRelease, NOPDL, NOPDL_PATCH, PROGRAMS_DIR, PTX_CONTROLS, Patches, SHIPPED, TARGETS,
    binary, build_record, cccl_version, honors_disable_pdl, is_nopdl, materialize, nvcc_flags,
    releases_installed, source,
};
use serde_json::json;

use crate::Result;

const USAGE: &str = "usage: cargo xtask library build [--release 13.0,13.3] [--target sm_90,compute_80] [--program P,..] [--variant shipped,-nopdl,-sass80,..] [--jobs N] [--force]";

/// nvcc's time limit for one program (seconds).
const NVCC_TIMEOUT_S: u64 = 1200;

/// `build`'s options.
#[derive(Debug)]
struct BuildArgs {
    releases: Vec<String>,
    targets: Vec<String>,
    programs: Vec<String>,
    /// Only these variants (`shipped` for the one as shipped); empty: all.
    variants: Vec<String>,
    jobs: usize,
    force: bool,
}

fn list_arg(v: Option<&String>, flag: &str) -> Result<Vec<String>> {
    let v = v.ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
    Ok(v.split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect())
}

fn parse_build(args: &[String]) -> Result<BuildArgs> {
    let mut b = BuildArgs {
        releases: Vec::new(),
        targets: TARGETS.iter().map(|t| t.to_string()).collect(),
        programs: Vec::new(),
        variants: Vec::new(),
        jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
        force: false,
    };
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--release" => b.releases = list_arg(args.get(i + 1), "--release")?,
            "--target" => b.targets = list_arg(args.get(i + 1), "--target")?,
            "--program" => b.programs = list_arg(args.get(i + 1), "--program")?,
            "--variant" => b.variants = list_arg(args.get(i + 1), "--variant")?,
            "--jobs" => {
                b.jobs = args
                    .get(i + 1)
                    .and_then(|j| j.parse().ok())
                    .filter(|&j| j > 0)
                    .ok_or("--jobs needs a number from 1")?
            }
            "--force" => {
                b.force = true;
                i += 1;
                continue;
            }
            other => return Err(format!("unknown option `{other}`\n{USAGE}")),
        }
        i += 2;
    }
    if let Some(t) = b.targets.iter().find(|t| !TARGETS.contains(&t.as_str())) {
        return Err(format!("--target: `{t}` is not one of {TARGETS:?}"));
    }
    Ok(b)
}

/// One nvcc run: a program of a release for a target and a variant, against
/// the release's headers or a patched copy.
struct Job {
    release: usize,
    program: String,
    target: String,
    variant: String,
    include: PathBuf,
    out: PathBuf,
}

/// What came of a job.
struct Done {
    ok: bool,
    skipped: bool,
    seconds: f64,
    error: Option<String>,
    log: String,
    command: String,
}

/// Every `kernels/cccl/*.cu`, by name.
fn programs(root: &Path) -> Result<Vec<String>> {
    let dir = root.join(PROGRAMS_DIR);
    let rd = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut v: Vec<String> = rd
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_string_lossy()
                .strip_suffix(".cu")
                .map(str::to_string)
        })
        .collect();
    v.sort();
    Ok(v)
}

pub fn build(root: &Path, args: &[String]) -> Result<()> {
    let b = parse_build(args)?;
    let (mut installed, bad) = releases_installed(root);
    for e in &bad {
        eprintln!("skipped: {e}");
    }
    if !b.releases.is_empty() {
        if let Some(r) = b
            .releases
            .iter()
            .find(|r| !installed.iter().any(|i| &i.release == *r))
        {
            return Err(format!(
                "release {r} has no headers and nvcc under .toolchains/{r}"
            ));
        }
        installed.retain(|i| b.releases.contains(&i.release));
    }
    if installed.is_empty() {
        return Err(
            "no installed release to build with: run `cargo xtask toolchain install 13.0`".into(),
        );
    }
    let mut progs = programs(root)?;
    if !b.programs.is_empty() {
        if let Some(p) = b.programs.iter().find(|p| !progs.contains(p)) {
            return Err(format!("--program: no {}", source(root, p).display()));
        }
        progs.retain(|p| b.programs.contains(p));
    }
    let mut jobs = plan(root, &installed, &progs, &b.targets)?;
    if !b.variants.is_empty() {
        let name = |v: &str| {
            if v.is_empty() {
                "shipped".to_string()
            } else {
                v.to_string()
            }
        };
        let known: Vec<String> = jobs.iter().map(|j| name(&j.variant)).collect();
        if let Some(v) = b.variants.iter().find(|v| !known.contains(v)) {
            return Err(format!(
                "--variant: no build `{v}` for these releases, targets and programs"
            ));
        }
        jobs.retain(|j| b.variants.contains(&name(&j.variant)));
    }
    println!(
        "{} builds ({} releases), {} at a time",
        jobs.len(),
        installed.len(),
        b.jobs
    );
    let start = Instant::now();
    let done = run_jobs(root, &installed, &jobs, b.jobs, b.force);
    report(
        root,
        &installed,
        &jobs,
        &done,
        start.elapsed().as_secs_f64(),
    )
}

/// The jobs of every release, program, target and variant; patched header
/// copies made first (sm_90 only: compute_80 PTX has no wait to move).
fn plan(
    root: &Path,
    installed: &[InstalledRelease],
    progs: &[String],
    targets: &[String],
) -> Result<Vec<Job>> {
    let patches = Patches::load(root)?;
    let mut jobs = Vec::new();
    for (ri, r) in installed.iter().enumerate() {
        for target in targets {
            let mut variants: Vec<(String, PathBuf, Vec<String>)> = vec![
                (SHIPPED.into(), r.include.clone(), progs.to_vec()),
                (
                    NOPDL.into(),
                    nopdl_headers(root, r, &patches)?,
                    progs.to_vec(),
                ),
            ];
            if target == "compute_80" {
                for v in PTX_CONTROLS {
                    let include = if is_nopdl(v) {
                        nopdl_headers(root, r, &patches)?
                    } else {
                        r.include.clone()
                    };
                    variants.push((v.into(), include, progs.to_vec()));
                }
            } else {
                let moved = patches.patches.iter().filter(|p| p.name != NOPDL_PATCH);
                for p in moved.filter(|p| p.release == r.release) {
                    let wanted: Vec<String> = progs
                        .iter()
                        .filter(|x| p.programs.contains(x))
                        .cloned()
                        .collect();
                    if !wanted.is_empty() {
                        variants.push((
                            format!("-{}", p.name),
                            materialize(root, &r.include, p)?,
                            wanted,
                        ));
                    }
                }
            }
            for (variant, include, wanted) in variants {
                for program in wanted {
                    jobs.push(Job {
                        release: ri,
                        out: binary(root, &r.release, target, &program, &variant),
                        program,
                        target: target.clone(),
                        variant: variant.clone(),
                        include: include.clone(),
                    });
                }
            }
        }
    }
    Ok(jobs)
}

/// The headers the `-nopdl` variant builds against: the release's own where
/// they honor `-DCCCL_DISABLE_PDL`, else a copy with its `nopdl` patch
/// (CCCL 3.0 has no such switch), else an error: a control that is not one
/// is never built.
fn nopdl_headers(root: &Path, r: &InstalledRelease, patches: &Patches) -> Result<PathBuf> {
    if honors_disable_pdl(&r.include) {
        return Ok(r.include.clone());
    }
    let p = patches
        .patches
        .iter()
        .find(|p| p.release == r.release && p.name == NOPDL_PATCH)
        .ok_or_else(|| {
            format!(
                "release {}: its headers ignore CCCL_DISABLE_PDL and kernels/cccl/patches.toml has no `{NOPDL_PATCH}` patch for it",
                r.release
            )
        })?;
    materialize(root, &r.include, p)
}

fn mtime(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).ok()?.modified().ok()
}

/// Whether a binary is current: newer than its source, the shared header,
/// the patches and its nvcc, and recorded in the release's `build.json` as
/// built by this very command (a binary built with other flags, another
/// include folder, a patch's headers, or another nvcc is rebuilt, however
/// new its file).
fn up_to_date(root: &Path, r: &InstalledRelease, job: &Job, command: &str) -> bool {
    let Some(built) = mtime(&job.out) else {
        return false;
    };
    let inputs = [
        source(root, &job.program),
        root.join(PROGRAMS_DIR).join("library.cuh"),
        root.join(gridcheck_library::PATCHES_FILE),
        r.toolchain.nvcc.path.clone(),
    ];
    inputs.iter().all(|p| mtime(p).is_none_or(|m| m <= built))
        && std::fs::read_to_string(build_record(root, &r.release))
            .is_ok_and(|text| recorded_alike(&text, job, command))
}

/// Whether a `build.json` text records `job` built, ok, by `command`.
fn recorded_alike(text: &str, job: &Job, command: &str) -> bool {
    let old = serde_json::from_str::<serde_json::Value>(text).ok();
    let builds = old.as_ref().and_then(|v| v["builds"].as_array());
    builds.is_some_and(|bs| {
        bs.iter().any(|b| {
            b["program"] == job.program.as_str()
                && b["target"] == job.target.as_str()
                && b["variant"] == job.variant.as_str()
                && b["ok"] == true
                && b["command"] == command
        })
    })
}

fn nvcc_args(root: &Path, r: &InstalledRelease, job: &Job) -> Result<Vec<String>> {
    let mut args = vec![
        "-std=c++17".to_string(),
        format!("-I{}", job.include.display()),
        format!("-I{}", root.join(PROGRAMS_DIR).display()),
    ];
    args.extend(nvcc_flags(&job.target, &job.variant)?);
    args.extend([
        source(root, &job.program).display().to_string(),
        format!("-L{}", r.toolchain.nvcc.lib_dir.display()),
        "-o".into(),
        job.out.display().to_string(),
    ]);
    Ok(args)
}

fn one(root: &Path, r: &InstalledRelease, job: &Job, force: bool) -> Done {
    let nvcc = &r.toolchain.nvcc.path;
    let mut done = Done {
        ok: false,
        skipped: false,
        seconds: 0.0,
        error: None,
        log: String::new(),
        command: String::new(),
    };
    let args = match nvcc_args(root, r, job) {
        Ok(a) => a,
        Err(e) => {
            done.error = Some(e);
            return done;
        }
    };
    done.command = format!("{} {}", nvcc.display(), args.join(" "));
    if !force && up_to_date(root, r, job, &done.command) {
        done.ok = true;
        done.skipped = true;
        return done;
    }
    if let Some(dir) = job.out.parent()
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        done.error = Some(format!("{}: {e}", dir.display()));
        return done;
    }
    let start = Instant::now();
    let mut cmd = Command::new(nvcc);
    cmd.args(&args);
    let answer = gridcheck_child::run_with_timeout(cmd, NVCC_TIMEOUT_S);
    done.seconds = start.elapsed().as_secs_f64();
    match answer {
        None => done.error = Some(format!("nvcc ran past {NVCC_TIMEOUT_S} s and was stopped")),
        Some((status, out, err)) => {
            done.log = format!("{out}{err}");
            done.ok = matches!(status, Ok(s) if s.success());
            if !done.ok {
                let _ = std::fs::remove_file(&job.out);
                done.error = Some(first_error(&done.log).unwrap_or_else(|| match status {
                    Ok(s) => format!("nvcc failed ({s})"),
                    Err(e) => e,
                }));
            }
        }
    }
    done
}

/// The compiler's first located error: `file(line): error ...` (nvcc's
/// front end) or `file:line:col: error ...` (the host compiler, the linker).
pub fn first_error(log: &str) -> Option<String> {
    log.lines()
        .find(|l| l.contains("): error") || l.contains(": error") || l.contains("error:"))
        .map(|l| l.trim().to_string())
}

fn run_jobs(
    root: &Path,
    installed: &[InstalledRelease],
    jobs: &[Job],
    threads: usize,
    force: bool,
) -> Vec<Done> {
    let next = AtomicUsize::new(0);
    let mut results: Vec<(usize, Done)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads.clamp(1, jobs.len().max(1)))
            .map(|_| {
                let next = &next;
                s.spawn(move || {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(job) = jobs.get(i) else { break };
                        let d = one(root, &installed[job.release], job, force);
                        let state = if d.skipped {
                            "up to date"
                        } else if d.ok {
                            "ok"
                        } else {
                            "FAILED"
                        };
                        println!(
                            "{} {} {}{}: {state} ({:.0} s)",
                            installed[job.release].release,
                            job.target,
                            job.program,
                            job.variant,
                            d.seconds
                        );
                        out.push((i, d));
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, d)| d).collect()
}

/// `build.json` of each release, the time per release, and an error naming
/// every build that failed (the others are built all the same).
fn report(
    root: &Path,
    installed: &[InstalledRelease],
    jobs: &[Job],
    done: &[Done],
    wall: f64,
) -> Result<()> {
    let mut failed = Vec::new();
    for (ri, r) in installed.iter().enumerate() {
        let mine: Vec<(&Job, &Done)> = jobs
            .iter()
            .zip(done)
            .filter(|(j, _)| j.release == ri)
            .collect();
        let seconds: f64 = mine.iter().map(|(_, d)| d.seconds).sum();
        let builds: Vec<serde_json::Value> = mine
            .iter()
            .map(|(j, d)| {
                json!({
                    "program": j.program, "target": j.target, "variant": j.variant,
                    "binary": j.out.strip_prefix(root).unwrap_or(&j.out).display().to_string(),
                    "ok": d.ok, "up_to_date": d.skipped, "seconds": (d.seconds * 10.0).round() / 10.0,
                    "error": d.error, "command": d.command,
                    "log": if d.ok { String::new() } else { gridcheck_child::last_bytes(&d.log, 4000).to_string() },
                })
            })
            .collect();
        for (j, d) in &mine {
            if !d.ok {
                failed.push(format!(
                    "{} {} {}{}: {}",
                    r.release,
                    j.target,
                    j.program,
                    j.variant,
                    d.error.as_deref().unwrap_or("failed")
                ));
            }
        }
        let builds = keep_others(&build_record(root, &r.release), builds);
        let record = json!({
            "release": r.release,
            "nvcc": r.toolchain.nvcc.version,
            "nvcc_path": r.toolchain.nvcc.path.display().to_string(),
            "cccl": cccl_version(&r.include).unwrap_or_else(|e| e),
            "include": r.include.display().to_string(),
            "flags": ["-std=c++17", "-I<include/cccl or headers-<patch>>", "-I kernels/cccl", "-gencode ...", "-L<lib>"],
            "compile_seconds": (seconds * 10.0).round() / 10.0,
            "builds": builds,
        });
        let path = build_record(root, &r.release);
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
        }
        let text = serde_json::to_string_pretty(&record).map_err(|e| e.to_string())?;
        std::fs::write(&path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))?;
        let ok = mine.iter().filter(|(_, d)| d.ok).count();
        println!(
            "{}: {ok} of {} built, {seconds:.0} s of nvcc; {}",
            r.release,
            mine.len(),
            path.strip_prefix(root).unwrap_or(&path).display()
        );
    }
    println!("{:.0} s in all", wall);
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} builds failed:\n  {}",
            failed.len(),
            failed.join("\n  ")
        ))
    }
}

/// This build's entries and those of the release's earlier `build.json`
/// that this build did not redo (another `--program` or `--target`).
fn keep_others(path: &Path, mut builds: Vec<serde_json::Value>) -> Vec<serde_json::Value> {
    let key = |b: &serde_json::Value| {
        (
            b["program"].clone(),
            b["target"].clone(),
            b["variant"].clone(),
        )
    };
    let old: Vec<serde_json::Value> = std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v["builds"].as_array().cloned())
        .unwrap_or_default();
    for b in old {
        if !builds.iter().any(|n| key(n) == key(&b)) {
            builds.push(b);
        }
    }
    builds.sort_by_key(|b| format!("{} {} {}", b["target"], b["program"], b["variant"]));
    builds
}

#[cfg(test)]
mod tests;
