//! One program built here with the newest installed release's nvcc, run on
//! this machine: without a GPU it must say `gridcheck-not-run no CUDA
//! device` and exit 0; with one, print one outcome with no wrong call. A
//! bad command line exits 2 naming the flag. Skipped, with the reason,
//! where no release with nvcc is installed.

use std::process::Command;

use gridcheck_library::{Printed, nvcc_flags, read_stdout, releases_installed, source};

#[test]
fn a_program_built_here_runs_or_says_why_not() {
    let root = gridcheck_toolchain::checkout_root(env!("CARGO_MANIFEST_DIR"));
    let (installed, _) = releases_installed(&root);
    let Some(r) = installed.last() else {
        println!(
            "not run: no CUDA release with nvcc under .toolchains/ (cargo xtask toolchain install 13.0)"
        );
        return;
    };
    let dir = std::env::temp_dir().join(format!("gc-lib-prog-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join("find");
    let mut args = vec![
        "-std=c++17".to_string(),
        format!("-I{}", r.include.display()),
        format!("-I{}", root.join("kernels/cccl").display()),
    ];
    args.extend(nvcc_flags("sm_90", "").unwrap());
    args.extend([
        source(&root, "find").display().to_string(),
        format!("-L{}", r.toolchain.nvcc.lib_dir.display()),
        "-o".into(),
        exe.display().to_string(),
    ]);
    let built = r.toolchain.nvcc.run(&args);
    assert!(built.success, "{}\n{}", built.command, built.output);

    let run = |a: &[&str]| Command::new(&exe).args(a).output().unwrap();
    let good = run(&[
        "--algorithm",
        "find_if",
        "--size",
        "1000",
        "--reps",
        "4",
        "--env",
        "quiet",
        "--seed",
        "1",
    ]);
    let stdout = String::from_utf8_lossy(&good.stdout);
    assert_eq!(
        good.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&good.stderr)
    );
    match read_stdout(&stdout).unwrap() {
        Printed::NotRun(reason) => {
            println!("release {}: {reason}", r.release);
            assert!(
                reason.starts_with("no CUDA device") || reason.contains("for this device"),
                "{reason}"
            );
        }
        Printed::Outcomes(o) => {
            assert_eq!((o.len(), o[0].calls, o[0].wrong), (1, 4, 0), "{stdout}");
            assert!(o[0].error.is_none());
        }
    }
    let bad = run(&[
        "--algorithm",
        "find_if",
        "--size",
        "ten",
        "--reps",
        "4",
        "--env",
        "quiet",
        "--seed",
        "1",
    ]);
    let err = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{err}");
    assert!(err.contains("--size") && bad.stdout.is_empty(), "{err}");
    let unknown = run(&[
        "--algorithm",
        "sort",
        "--size",
        "1",
        "--reps",
        "1",
        "--env",
        "quiet",
        "--seed",
        "1",
    ]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("find_if"));
    std::fs::remove_dir_all(&dir).unwrap();
}
