//! `cargo xtask gpu-bundle`: the `gridcheck` command (the harness, the
//! campaign, the reports, sessions), the kernels of every
//! architecture asked for (default all that nvcc targets) with each test's
//! PTX and the `libcudadevrt.a` that links it at JIT time, the fault
//! fixtures and the mutants' CUDA, in `.gpu-bundle/` for a GPU machine
//! without Rust.
//!
//! The kernels travel packed: `.gpu-bundle/kernels.tar.xz` (host programs,
//! statically linked against the CUDA runtime, are most of their size, and
//! compress well together); `conformance/bundle-kernels.sh`, which every
//! bundle script runs first, unpacks it into `.gpu-bundle/kernels/`.
//! `--toolchain 13.1,13.5` adds the kernels of installed toolchains,
//! `.gpu-bundle/kernels-nvcc-<release>.tar.xz`, for the GPU tier under each
//! (`conformance/gpu-run.sh --toolchain 13.5`, `conformance/gpu-toolchains.sh`
//! for all). Every kernels folder holds its `toolchain.json`, so each
//! record names the toolchain that built what ran. The
//! release binaries are found in cargo's target directory as `cargo
//! metadata` reports it, so a shared `CARGO_TARGET_DIR` works.

use std::path::{Path, PathBuf};
use std::process::Command;

use gridcheck_toolchain::{kernels_dir, kernels_folder};

use crate::{Result, build, codegen, copy, mutants, release_build};

pub fn run(args: &[String]) -> Result<()> {
    let root = crate::root();
    let build::Args {
        arch,
        jobs,
        toolchains,
    } = build::Args::parse(&root, args, "gpu-bundle")?;
    codegen::run(&root, true)?;
    let kernels_root = kernels_dir(&root, None);
    let mut kernels = vec![Kernels {
        built: build::run(&root, &kernels_root, &arch, jobs, None)?,
        from: kernels_root,
        name: kernels_folder(None),
    }];
    // Other toolchains' kernels, for the GPU tier under each
    // (`gpu-run.sh --toolchain 13.5`).
    for t in &toolchains {
        let dir = kernels_dir(&root, Some(&t.name));
        kernels.push(Kernels {
            built: build::run(&root, &dir, &arch, jobs, Some(t))?,
            from: dir,
            name: kernels_folder(Some(&t.name)),
        });
    }
    release_build(
        &root,
        &[
            "-p",
            "gridcheck-cli",
            "-p",
            "gridcheck-gpu",
            "--bin",
            "gridcheck",
            "--example",
            "litmus_smoke",
        ],
    )?;
    let release = target_dir(&root)?.join("release");
    // The commit the bundle is built from, for the records of its runs
    // (the bundle scripts export it as GRIDCHECK_COMMIT).
    let commit = gridcheck_toolchain::checkout_commit(&root).unwrap_or_default();
    let bundle = root.join(".gpu-bundle");
    let mut summary = assemble(&release, &kernels, &commit, &bundle)?;
    summary.push(pack_library(&root, &bundle)?);
    let fixtures = fixtures(&root, &bundle.join("fixtures/sm_90"))?;
    mutants::run(&["--out".into(), bundle.join("mutants").display().to_string()])?;
    println!(
        "{} ready: the harness, {} and {fixtures} fault fixtures. On the GPU machine: bash \
         conformance/gpu-run.sh [--toolchain <release>]; bash conformance/fault-check.sh",
        bundle.display(),
        summary.join("; "),
    );
    Ok(())
}

/// One toolchain's built kernels: the files, the kernels root they are
/// under, and the bundle's name for them (`kernels`, `kernels-nvcc-13.5`).
struct Kernels {
    built: Vec<PathBuf>,
    from: PathBuf,
    name: String,
}

/// The release binaries a bundle carries: where cargo's release folder
/// has each, and its name in the bundle.
const BINARIES: [(&str, &str); 2] = [
    // Every program of the GPU machine: `gridcheck run` (the harness and
    // its workers), `gridcheck campaign`, `gridcheck report`, `gridcheck
    // session`, `gridcheck info`.
    ("gridcheck", "gridcheck"),
    // Histograms and instance rates of every litmus test, with and without
    // incantations: `litmus_smoke spec .gpu-bundle/kernels/sm_90 65536 8`.
    ("examples/litmus_smoke", "litmus_smoke"),
];

/// What older bundles carried instead of `gridcheck`.
const OLD_BINARIES: [&str; 2] = ["conformance", "gridcheck-campaign"];

/// Everything of the bundle that is built already: the release binaries
/// from `release`, each toolchain's kernels packed, and the commit, into
/// `bundle`, which is made (with its parents) when it does not exist: a
/// fresh checkout has none. Returns a line a toolchain for the summary.
fn assemble(
    release: &Path,
    kernels: &[Kernels],
    commit: &str,
    bundle: &Path,
) -> Result<Vec<String>> {
    std::fs::create_dir_all(bundle)
        .map_err(|e| format!("cannot create {}: {e}", bundle.display()))?;
    for (from, to) in BINARIES {
        copy(&release.join(from), &bundle.join(to))?;
    }
    // The binaries `gridcheck` replaced, from an older bundle: no script
    // calls them, and none may run by mistake.
    for old in OLD_BINARIES {
        let p = bundle.join(old);
        if p.exists() {
            std::fs::remove_file(&p).map_err(|e| format!("cannot remove {}: {e}", p.display()))?;
        }
    }
    // Nothing of an earlier bundle's kernels stays: another selection of
    // architectures or toolchains must not mix with this one.
    remove_packed_kernels(bundle)?;
    let summary = kernels
        .iter()
        .map(|k| pack_kernels(&k.built, &k.from, bundle, &k.name))
        .collect::<Result<Vec<_>>>()?;
    std::fs::write(bundle.join("commit"), format!("{commit}\n"))
        .map_err(|e| format!("cannot write {}: {e}", bundle.join("commit").display()))?;
    Ok(summary)
}

/// Removes the packed kernels (`kernels*.tar.xz`) and their unpacked
/// folders of an earlier bundle.
fn remove_packed_kernels(bundle: &Path) -> Result<()> {
    let entries =
        std::fs::read_dir(bundle).map_err(|e| format!("cannot list {}: {e}", bundle.display()))?;
    for e in entries.filter_map(|e| e.ok()) {
        let name = e.file_name().to_string_lossy().to_string();
        if name.starts_with("kernels") {
            let p = e.path();
            let r = if p.is_dir() {
                std::fs::remove_dir_all(&p)
            } else {
                std::fs::remove_file(&p)
            };
            r.map_err(|e| format!("cannot remove {}: {e}", p.display()))?;
        }
    }
    Ok(())
}

/// Copies the `built` files of the kernels root `from` into
/// `<bundle>/<name>/` and packs that into `<bundle>/<name>.tar.xz`
/// (`conformance/bundle-kernels.sh` unpacks it on the GPU machine).
/// Returns a line for the summary.
fn pack_kernels(built: &[PathBuf], from: &Path, bundle: &Path, name: &str) -> Result<String> {
    let kernels = bundle.join(name);
    let packed = bundle.join(format!("{name}.tar.xz"));
    std::fs::create_dir_all(&kernels)
        .map_err(|e| format!("cannot create {}: {e}", kernels.display()))?;
    let mut bytes = 0u64;
    for f in built {
        let rel = f
            .strip_prefix(from)
            .map_err(|_| format!("{} is not under {}", f.display(), from.display()))?;
        crate::copy_creating(f, &kernels.join(rel))?;
        bytes += std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
    }
    let started = std::time::Instant::now();
    pack(&kernels, &packed)?;
    std::fs::remove_dir_all(&kernels)
        .map_err(|e| format!("cannot remove {}: {e}", kernels.display()))?;
    let packed_size = std::fs::metadata(&packed).map(|m| m.len()).unwrap_or(0);
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    Ok(format!(
        "{} {name} files ({:.1} MiB, packed into {} of {:.1} MiB in {:.0} s)",
        built.len(),
        mib(bytes),
        packed.display(),
        mib(packed_size),
        started.elapsed().as_secs_f64(),
    ))
}

/// The library tier's programs (`target/library/<release>/<target>/`,
/// built by `cargo xtask library build`), packed whole into
/// `<bundle>/library.tar.xz` (`conformance/bundle-kernels.sh` unpacks it
/// into `target/library/` on the GPU machine, where the harness looks).
/// Without a build, no archive (an earlier one is removed) and the line
/// says so. Returns a line for the summary.
fn pack_library(root: &Path, bundle: &Path) -> Result<String> {
    let from = root.join("target/library");
    let packed = bundle.join("library.tar.xz");
    if packed.exists() {
        std::fs::remove_file(&packed)
            .map_err(|e| format!("cannot remove {}: {e}", packed.display()))?;
    }
    if !from.is_dir() {
        return Ok(format!(
            "no library programs ({} is not built: cargo xtask library build)",
            from.display()
        ));
    }
    let (files, mib) = pack_into(root, &packed)?;
    Ok(format!(
        "the library programs of {} ({files} files packed into {} of {mib:.1} MiB)",
        from.display(),
        packed.display(),
    ))
}

/// The built binaries and each release's `build.json`, staged as
/// `<release>/<target>/<binary>` and `<release>/build.json` (no patched
/// header copies) and packed into `out`: unpacked into a checkout's
/// `target/library/` on the GPU machine (`conformance/bundle-kernels.sh`),
/// they are where `gridcheck_library::binary` says. The one packer of both `library pack`
/// and the bundle. Returns the files packed and the archive's MiB.
pub fn pack_into(root: &Path, out: &Path) -> Result<(usize, f64)> {
    let lib = gridcheck_library::library_dir(root);
    let stage = root.join(".gpu-bundle/library-stage");
    let _ = std::fs::remove_dir_all(&stage);
    let mut files = 0;
    // Every release built here (a folder with its build.json), whether or
    // not its headers are still installed.
    let mut releases: Vec<String> = std::fs::read_dir(&lib)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|r| gridcheck_library::build_record(root, r).is_file())
        .collect();
    releases.sort();
    for release in releases {
        let mut built = vec![gridcheck_library::build_record(root, &release)];
        for t in gridcheck_library::TARGETS {
            let dir = lib.join(&release).join(t);
            built.extend(
                std::fs::read_dir(&dir)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path()),
            );
        }
        for f in built {
            let rel = f
                .strip_prefix(&lib)
                .map_err(|_| format!("{} is outside {}", f.display(), lib.display()))?;
            crate::copy_creating(&f, &stage.join(rel))?;
            files += 1;
        }
    }
    if files == 0 {
        return Err("nothing built: run `cargo xtask library build` first".into());
    }
    if let Some(d) = out.parent() {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    pack(&stage, out)?;
    std::fs::remove_dir_all(&stage).map_err(|e| format!("{}: {e}", stage.display()))?;
    let mib = std::fs::metadata(out).map(|m| m.len()).unwrap_or(0) as f64 / 1048576.0;
    Ok((files, mib))
}

/// cargo's target directory for this workspace (`CARGO_TARGET_DIR`, the
/// config's `build.target-dir`, or `target/`), as `cargo metadata` says.
pub fn target_dir(root: &Path) -> Result<PathBuf> {
    let out = crate::cargo()
        .current_dir(root)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("cargo metadata printed no JSON: {e}"))?;
    v.get("target_directory")
        .and_then(|t| t.as_str())
        .map(PathBuf::from)
        .ok_or_else(|| "cargo metadata names no target_directory".into())
}

/// `tar` of `dir`'s contents, sorted by name, through `xz -9` (a solid
/// archive: the host programs' shared static runtime compresses away).
pub fn pack(dir: &Path, to: &Path) -> Result<()> {
    let st = Command::new("tar")
        .arg("-C")
        .arg(dir)
        .args(["--sort=name", "-cJf"])
        .arg(to)
        .arg(".")
        .env("XZ_OPT", "-9 -T0")
        .status()
        .map_err(|e| format!("cannot run tar: {e}"))?;
    if st.success() {
        Ok(())
    } else {
        Err(format!("tar -cJf {} failed ({st})", to.display()))
    }
}

/// Builds the fault fixtures (`conformance/fixtures/spec`) into `out`: a
/// runtime test from its source, a litmus test from the code kernelgen
/// generates for it, each device-linked with cudadevrt. The `fault-load`
/// fixture is compiled with `-rdc=true -cubin` and no device link against
/// cudadevrt, a real mistake whose module does not load.
fn fixtures(root: &Path, out: &Path) -> Result<usize> {
    let spec = gridcheck_spec::load_dir(&root.join("conformance/fixtures/spec"), None)
        .map_err(|e| e.to_string())?;
    let nvcc = gridcheck_toolchain::find_nvcc(root)?;
    let work = root.join("target/fixtures");
    for d in [out, &work] {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    let generated = gridcheck_kernelgen::generate_all(&spec);
    let include = root.join(gridcheck_kernelgen::INCLUDE_DIR);
    let mut n = 0;
    for t in &spec.tests {
        let (source, include, flags) = match &t.body {
            gridcheck_spec::TestBody::Runtime(r) => (r.source.clone(), work.clone(), Vec::new()),
            gridcheck_spec::TestBody::Litmus(_) => {
                let name = gridcheck_kernelgen::file_name(t);
                let Some((_, text)) = generated.iter().find(|(n, _)| *n == name) else {
                    return Err(format!(
                        "kernelgen generates no {name} for fixture {}",
                        t.name
                    ));
                };
                let flags = gridcheck_kernelgen::build_plan(t, "sm_90")?.unwrap_or_default();
                (text.clone(), include.clone(), flags)
            }
            _ => continue,
        };
        let src = work.join(format!("{}.cu", t.name));
        let obj = work.join(format!("{}.o", t.name));
        let cubin = out.join(format!("{}.cubin", t.name));
        std::fs::write(&src, source).map_err(|e| format!("cannot write {}: {e}", src.display()))?;
        let steps = if t.name == "fault-load" {
            vec![nvcc.run(&[
                "-arch=sm_90".into(),
                "-rdc=true".into(),
                "-cubin".into(),
                src.display().to_string(),
                "-o".into(),
                cubin.display().to_string(),
            ])]
        } else {
            let c = nvcc.compile_rdc(&src, &include, "sm_90", &flags, &obj);
            if c.success {
                vec![c, nvcc.dlink_cubin(&obj, "sm_90", &cubin)]
            } else {
                vec![c]
            }
        };
        if let Some(bad) = steps.iter().find(|s| !s.success) {
            return Err(format!(
                "fixture {} does not build:\n{}\n$ {}",
                t.name,
                bad.output.trim(),
                bad.command
            ));
        }
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The library programs travel whole, packed; without a build the
    /// bundle says so and keeps no stale archive.
    #[test]
    fn the_library_programs_are_packed_when_built() {
        let base =
            std::env::temp_dir().join(format!("gridcheck-bundle-lib-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let bundle = base.join(".gpu-bundle");
        std::fs::create_dir_all(&bundle).unwrap();
        std::fs::write(bundle.join("library.tar.xz"), "stale").unwrap();
        let line = pack_library(&base, &bundle).unwrap();
        assert!(line.starts_with("no library programs"), "{line}");
        assert!(!bundle.join("library.tar.xz").exists());
        let prog = base.join("target/library/13.3/sm_90/merge_sort");
        std::fs::create_dir_all(prog.parent().unwrap()).unwrap();
        std::fs::write(&prog, "program").unwrap();
        // Not built until its build.json says so.
        assert!(pack_library(&base, &bundle).is_err());
        std::fs::write(base.join("target/library/13.3/build.json"), "{}").unwrap();
        let headers = base.join("target/library/13.3/headers-nopdl/cub/a.cuh");
        std::fs::create_dir_all(headers.parent().unwrap()).unwrap();
        std::fs::write(&headers, "patched").unwrap();
        let line = pack_library(&base, &bundle).unwrap();
        assert!(line.contains("library.tar.xz"), "{line}");
        let list = Command::new("tar")
            .arg("tJf")
            .arg(bundle.join("library.tar.xz"))
            .output()
            .unwrap();
        let list = String::from_utf8_lossy(&list.stdout);
        assert!(list.contains("./13.3/sm_90/merge_sort"), "{list}");
        assert!(list.contains("./13.3/build.json"), "{list}");
        assert!(
            !list.contains("headers-nopdl"),
            "patched headers stay home: {list}"
        );
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// A checkout as a fresh clone leaves it (no `.gpu-bundle/`), with
    /// cargo's release binaries and one built kernel beside it.
    fn fresh(base: &Path) -> (PathBuf, Vec<Kernels>) {
        let _ = std::fs::remove_dir_all(base);
        let release = base.join("target/release");
        std::fs::create_dir_all(release.join("examples")).unwrap();
        std::fs::write(release.join("gridcheck"), "gridcheck").unwrap();
        std::fs::write(release.join("examples/litmus_smoke"), "smoke").unwrap();
        let from = base.join("target/kernels");
        let cubin = from.join("sm_90/t.cubin");
        std::fs::create_dir_all(cubin.parent().unwrap()).unwrap();
        std::fs::write(&cubin, "cubin").unwrap();
        let kernels = vec![Kernels {
            built: vec![cubin],
            from,
            name: "kernels".into(),
        }];
        (release, kernels)
    }

    #[test]
    fn a_fresh_checkout_gets_its_bundle_folder() {
        let base = std::env::temp_dir().join(format!("gc-bundle-{}", std::process::id()));
        let (release, kernels) = fresh(&base);
        let bundle = base.join(".gpu-bundle");
        assert!(!bundle.exists());
        let summary = assemble(&release, &kernels, "abc123", &bundle).unwrap();
        assert_eq!(summary.len(), 1);
        assert!(summary[0].contains("1 kernels files"), "{summary:?}");
        assert_eq!(
            std::fs::read_to_string(bundle.join("gridcheck")).unwrap(),
            "gridcheck"
        );
        assert!(bundle.join("litmus_smoke").is_file());
        assert_eq!(
            std::fs::read_to_string(bundle.join("commit")).unwrap(),
            "abc123\n"
        );
        let list = Command::new("tar")
            .arg("-tJf")
            .arg(bundle.join("kernels.tar.xz"))
            .output()
            .unwrap();
        let list = String::from_utf8_lossy(&list.stdout);
        assert!(list.contains("sm_90/t.cubin"), "{list}");
        assert!(
            !bundle.join("kernels").exists(),
            "packed, not left unpacked"
        );
        // Again over the bundle just made: an earlier bundle's unpacked
        // kernels and the binaries gridcheck replaced are removed, the rest
        // replaced.
        std::fs::create_dir_all(bundle.join("kernels-nvcc-13.5/sm_90")).unwrap();
        std::fs::write(bundle.join("conformance"), "old harness").unwrap();
        assemble(&release, &kernels, "def456", &bundle).unwrap();
        assert!(!bundle.join("kernels-nvcc-13.5").exists());
        assert!(!bundle.join("conformance").exists());
        assert!(bundle.join("kernels.tar.xz").is_file());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_missing_binary_is_an_error_naming_it() {
        let base = std::env::temp_dir().join(format!("gc-bundle-missing-{}", std::process::id()));
        let (release, kernels) = fresh(&base);
        std::fs::remove_file(release.join("examples/litmus_smoke")).unwrap();
        let e = assemble(&release, &kernels, "abc", &base.join(".gpu-bundle")).unwrap_err();
        assert!(e.contains("examples/litmus_smoke"), "{e}");
        std::fs::remove_dir_all(&base).unwrap();
    }
}
