//! `cargo xtask gpu-bundle`: the release harness, the kernels of every
//! architecture asked for (default all that nvcc targets) with each test's
//! PTX and the `libcudadevrt.a` that links it at JIT time, the fault
//! fixtures and the mutants' CUDA, in `.gpu-bundle/` for a GPU machine
//! without Rust.
//!
//! The kernels travel packed: `.gpu-bundle/kernels.tar.xz` (host programs,
//! statically linked against the CUDA runtime, are most of their size, and
//! compress well together); `conformance/bundle-kernels.sh`, which every
//! bundle script runs first, unpacks it into `.gpu-bundle/kernels/`. The
//! release binaries are found in cargo's target directory as `cargo
//! metadata` reports it, so a shared `CARGO_TARGET_DIR` works.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{Result, build, codegen, copy, mutants, release_build};

pub fn run(args: &[String]) -> Result<()> {
    let (arch, jobs) = crate::build_args(args)
        .map_err(|e| e.replace("cargo xtask build", "cargo xtask gpu-bundle"))?;
    let root = crate::root();
    codegen::run(&root, true)?;
    let kernels_root = crate::kernels_root(&root);
    let built = build::run(&root, &kernels_root, &arch, jobs, None)?;
    release_build(
        &root,
        &[
            "-p",
            "conformance",
            "-p",
            "gridcheck-gpu",
            "--bin",
            "conformance",
            "--example",
            "litmus_smoke",
        ],
    )?;
    let release = target_dir(&root)?.join("release");
    let bundle = root.join(".gpu-bundle");
    let kernels = bundle.join("kernels");
    let packed = bundle.join("kernels.tar.xz");
    // Nothing of an earlier bundle's kernels stays: another selection of
    // architectures must not mix with this one.
    let _ = std::fs::remove_dir_all(&kernels);
    let _ = std::fs::remove_file(&packed);
    std::fs::create_dir_all(&kernels)
        .map_err(|e| format!("cannot create {}: {e}", kernels.display()))?;
    copy(&release.join("conformance"), &bundle.join("conformance"))?;
    // Histograms and instance rates of every litmus test, with and without
    // incantations: `litmus_smoke spec .gpu-bundle/kernels/sm_90 65536 8`.
    copy(
        &release.join("examples/litmus_smoke"),
        &bundle.join("litmus_smoke"),
    )?;
    let mut bytes = 0u64;
    for f in &built {
        let rel = f
            .strip_prefix(&kernels_root)
            .map_err(|_| format!("{} is not under {}", f.display(), kernels_root.display()))?;
        let to = kernels.join(rel);
        if let Some(d) = to.parent() {
            std::fs::create_dir_all(d)
                .map_err(|e| format!("cannot create {}: {e}", d.display()))?;
        }
        copy(f, &to)?;
        bytes += std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
    }
    let started = std::time::Instant::now();
    pack(&kernels, &packed)?;
    std::fs::remove_dir_all(&kernels)
        .map_err(|e| format!("cannot remove {}: {e}", kernels.display()))?;
    let packed_size = std::fs::metadata(&packed).map(|m| m.len()).unwrap_or(0);
    // The commit the bundle is built from, for the records of its runs
    // (the bundle scripts export it as GRIDCHECK_COMMIT).
    let commit = gridcheck_toolchain::checkout_commit(&root).unwrap_or_default();
    std::fs::write(bundle.join("commit"), format!("{commit}\n"))
        .map_err(|e| format!("cannot write {}: {e}", bundle.join("commit").display()))?;
    let fixtures = fixtures(&root, &bundle.join("fixtures/sm_90"))?;
    mutants::run(&["--out".into(), bundle.join("mutants").display().to_string()])?;
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    println!(
        "{} ready: the harness, {} kernel files for {arch} ({:.1} MiB, packed into {} of {:.1} MiB \
         in {:.0} s) and {fixtures} fault fixtures. On the GPU machine: bash conformance/gpu-run.sh; \
         bash conformance/fault-check.sh",
        bundle.display(),
        built.len(),
        mib(bytes),
        packed.display(),
        mib(packed_size),
        started.elapsed().as_secs_f64(),
    );
    Ok(())
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
fn pack(dir: &Path, to: &Path) -> Result<()> {
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

/// Builds the fault fixtures (`conformance/fixtures/spec`) into `out`. The
/// `fault-load` fixture is compiled with `-rdc=true -cubin` and no device
/// link against cudadevrt, a real mistake whose module does not load.
fn fixtures(root: &Path, out: &Path) -> Result<usize> {
    let spec = gridcheck_spec::load_dir(&root.join("conformance/fixtures/spec"), None)
        .map_err(|e| e.to_string())?;
    let nvcc = gridcheck_toolchain::find_nvcc(root)?;
    let work = root.join("target/fixtures");
    for d in [out, &work] {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    let mut n = 0;
    for t in &spec.tests {
        let gridcheck_spec::TestBody::Runtime(r) = &t.body else {
            continue;
        };
        let src = work.join(format!("{}.cu", t.name));
        let obj = work.join(format!("{}.o", t.name));
        let cubin = out.join(format!("{}.cubin", t.name));
        std::fs::write(&src, &r.source)
            .map_err(|e| format!("cannot write {}: {e}", src.display()))?;
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
            let c = nvcc.compile_rdc(&src, &work, "sm_90", &[], &obj);
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
