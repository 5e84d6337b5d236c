//! `cargo xtask bench`: builds the benchmark kernels (`kernels/bench/*.cu`)
//! and the `gridcheck-bench` binary, and runs it here, bundles it for a GPU
//! machine without Rust, or compares two results files.
//!
//! ```text
//! cargo xtask bench [--quick] [--out FILE] [--compare BASELINE] [--tolerance REL] [--floor-us US] [--floor-fraction F]
//! cargo xtask bench --bundle [DIR]              (default .bench-bundle)
//! cargo xtask bench compare NEW BASELINE [--tolerance REL] [--floor-us US] [--floor-fraction F]
//! ```

use std::path::{Path, PathBuf};

use crate::copy;
use crate::{Result, cargo, root, status};

pub const USAGE: &str = "usage:
  cargo xtask bench [--quick] [--out FILE] [--compare BASELINE] [--tolerance REL] [--floor-us US] [--floor-fraction F]
        build the kernels and gridcheck-bench, run every figure on this machine's GPU
        (results: --out, default target/gridcheck/bench.json)
  cargo xtask bench --bundle [DIR]
        put gridcheck-bench, the cubins and run.sh into DIR (default .bench-bundle)
        for a GPU machine without Rust: bash DIR/run.sh [--runs N] [--quick]
  cargo xtask bench compare NEW.json BASELINE.json [--tolerance REL] [--floor-us US] [--floor-fraction F]
        compare two results files (no GPU needed); exits 1 on a regression";

const ARCH: &str = "sm_90";

pub fn run(args: &[String]) -> Result<()> {
    let root = root();
    match args.first().map(String::as_str) {
        Some("compare") => return compare(&root, &args[1..]),
        Some("--bundle") => {
            if args.len() > 2 {
                return Err(USAGE.into());
            }
            let dir = args
                .get(1)
                .map(PathBuf::from)
                .unwrap_or_else(|| root.join(".bench-bundle"));
            return bundle(&root, &dir);
        }
        Some("-h" | "--help") => {
            println!("{USAGE}");
            return Ok(());
        }
        _ => {}
    }
    // Pass-through options for `gridcheck-bench run`, checked here so that a
    // typo fails before the build.
    let mut pass = Vec::new();
    let mut out = root.join("target/gridcheck/bench.json");
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => pass.push(a.clone()),
            "--out" | "--compare" | "--tolerance" | "--floor-us" | "--floor-fraction" => {
                let v = it
                    .next()
                    .ok_or_else(|| format!("{a} needs a value\n\n{USAGE}"))?;
                if a == "--out" {
                    out = PathBuf::from(v);
                } else {
                    if a == "--compare" && !Path::new(v).is_file() {
                        return Err(format!("--compare {v}: no such file"));
                    }
                    pass.push(a.clone());
                    pass.push(v.clone());
                }
            }
            other => return Err(format!("unknown option `{other}`\n\n{USAGE}")),
        }
    }
    // Say "no CUDA driver" before building anything.
    let d = gridcheck_gpu::probe().map_err(|why| {
        format!("{why}: the benchmarks need a CUDA GPU (use --bundle to run them elsewhere)")
    })?;
    println!("GPU: {} ({}), driver {}", d.name, d.sm, d.driver_version);
    if d.sm != ARCH {
        return Err(format!(
            "the benchmark kernels are built for {ARCH}; this GPU is {}",
            d.sm
        ));
    }
    let cubins = build_kernels(&root)?;
    let command = std::iter::once("cargo xtask bench".to_string())
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    let st = status(
        cargo()
            .current_dir(&root)
            .args(["run", "--quiet", "--release", "-p", "gridcheck-bench", "--"])
            .args(["run", "--cubins"])
            .arg(&cubins)
            .arg("--out")
            .arg(&out)
            .args(["--command", &command])
            .args(&pass),
    )?;
    if st.success() {
        Ok(())
    } else {
        Err(format!("the benchmarks failed ({st})"))
    }
}

fn compare(root: &Path, args: &[String]) -> Result<()> {
    use gridcheck_bench::compare::Tolerance;
    let mut tol = Tolerance::default();
    let mut files = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--tolerance" | "--floor-us" | "--floor-fraction" => {
                let v = it.next().ok_or(format!("{a} needs a value"))?;
                let x = Tolerance::parse_value(a, v)?;
                match a.as_str() {
                    "--tolerance" => tol.relative = x,
                    "--floor-us" => tol.floor_us = x,
                    _ => tol.floor_fraction = x,
                }
            }
            f if f.starts_with("--") => return Err(format!("unknown option `{f}`\n\n{USAGE}")),
            f => files.push(root.join(f)),
        }
    }
    let [new, base] = files.as_slice() else {
        return Err(USAGE.into());
    };
    let new = gridcheck_bench::baseline::load(new)?;
    let base = gridcheck_bench::baseline::load(base)?;
    let rows = gridcheck_bench::compare::compare(&base, &new, &tol);
    print!("{}", gridcheck_bench::compare::table(&rows, &tol));
    let bad = rows.iter().filter(|r| r.verdict.fails()).count();
    if bad == 0 {
        Ok(())
    } else {
        Err(format!("{bad} figure(s) regressed or missing"))
    }
}

/// nvcc: `kernels/bench/<name>.cu` -> `target/bench-kernels/sm_90/<name>.cubin`,
/// plus `nvcc-version.txt`. Returns the directory.
pub fn build_kernels(root: &Path) -> Result<PathBuf> {
    let nvcc = gridcheck_toolchain::find_nvcc(root)?;
    let out = root.join("target/bench-kernels").join(ARCH);
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    for (name, flags) in gridcheck_bench::KERNELS {
        let src = root.join("kernels/bench").join(format!("{name}.cu"));
        let obj = out.join(format!("{name}.o"));
        let cubin = out.join(format!("{name}.cubin"));
        let flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
        let c = nvcc.compile_rdc(&src, &root.join("kernels/include"), ARCH, &flags, &obj);
        let steps = if c.success {
            vec![c.clone(), nvcc.dlink_cubin(&obj, ARCH, &cubin)]
        } else {
            vec![c]
        };
        if let Some(bad) = steps.iter().find(|s| !s.success) {
            return Err(format!(
                "{} does not build:\n{}\n$ {}",
                src.display(),
                bad.output.trim(),
                bad.command
            ));
        }
    }
    let v = out.join("nvcc-version.txt");
    std::fs::write(&v, format!("{}\n", nvcc.version))
        .map_err(|e| format!("cannot write {}: {e}", v.display()))?;
    println!(
        "bench kernels: {} cubins in {} (nvcc {})",
        gridcheck_bench::KERNELS.len(),
        out.display(),
        nvcc.version
    );
    Ok(out)
}

fn bundle(root: &Path, dir: &Path) -> Result<()> {
    let cubins = build_kernels(root)?;
    crate::release_build(root, &["-p", "gridcheck-bench"])?;
    let kernels = dir.join("kernels");
    std::fs::create_dir_all(&kernels)
        .map_err(|e| format!("cannot create {}: {e}", kernels.display()))?;
    copy(
        &crate::bundle::target_dir(root)?.join("release/gridcheck-bench"),
        &dir.join("gridcheck-bench"),
    )?;
    copy(&root.join("conformance/bench/run.sh"), &dir.join("run.sh"))?;
    for (name, _) in gridcheck_bench::KERNELS {
        let f = format!("{name}.cubin");
        copy(&cubins.join(&f), &kernels.join(&f))?;
    }
    copy(
        &cubins.join("nvcc-version.txt"),
        &kernels.join("nvcc-version.txt"),
    )?;
    println!(
        "{} ready. On the GPU machine: OUT=<dir> bash {}/run.sh --runs 2",
        dir.display(),
        dir.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(median: f64) -> String {
        format!(
            r#"{{"schema": 1,
 "machine": {{"gpu": "NVIDIA H100 80GB HBM3", "slug": "nvidia-h100-80gb-hbm3", "driver": "580.159.04", "nvcc": "13.0.88", "date": "2026-11-22", "command": "test"}},
 "figures": [{{"id": "launch.device.null-stream.latency", "group": "launch", "title": "t", "unit": "us", "lower_is_better": true,
              "median": {median}, "p10": {median}, "p90": {median}, "min": {median}, "max": {median}, "repeats": 3, "params": {{"blocks": "1"}}}}],
 "notes": []}}"#
        )
    }

    #[test]
    fn bad_options_fail_before_any_build() {
        let e = run(&["--bogus".into()]).unwrap_err();
        assert!(e.contains("unknown option `--bogus`"), "{e}");
        let e = run(&["--out".into()]).unwrap_err();
        assert!(e.contains("--out needs a value"), "{e}");
        let e = run(&["--compare".into(), "/nonexistent.json".into()]).unwrap_err();
        assert!(e.contains("no such file"), "{e}");
    }

    #[test]
    fn compare_flags_a_regression_and_bad_files() {
        let dir =
            std::env::temp_dir().join(format!("gridcheck-xtask-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let base = dir.join("base.json");
        let same = dir.join("same.json");
        let slow = dir.join("slow.json");
        let bad = dir.join("bad.json");
        std::fs::write(&base, results(6.0)).unwrap();
        std::fs::write(&same, results(6.1)).unwrap();
        std::fs::write(&slow, results(7.0)).unwrap();
        std::fs::write(&bad, results(6.0).replace("\"unit\"", "\"units\"")).unwrap();
        let s = |p: &Path| p.display().to_string();
        assert!(compare(&dir, &[s(&same), s(&base)]).is_ok());
        let e = compare(&dir, &[s(&slow), s(&base)]).unwrap_err();
        assert!(e.contains("1 figure(s) regressed"), "{e}");
        // a wider tolerance lets it through
        assert!(
            compare(
                &dir,
                &[s(&slow), s(&base), "--tolerance".into(), "0.2".into()]
            )
            .is_ok()
        );
        let e = compare(&dir, &[s(&bad), s(&base)]).unwrap_err();
        assert!(e.contains("bad.json") && e.contains("units"), "{e}");
        let e = compare(
            &dir,
            &[s(&base), s(&base), "--tolerance".into(), "-1".into()],
        )
        .unwrap_err();
        assert!(e.contains("non-negative"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
