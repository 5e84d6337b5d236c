//! The names the bundle's scripts ask the harness for instead of spelling
//! them: a toolchain's kernels folder, and the release of a folder.

use std::process::Command;

fn ask(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
    )
}

#[test]
fn a_script_gets_the_kernels_folder_of_a_release_and_back() {
    let name = gridcheck_toolchain::kernels_folder(Some("13.5"));
    assert_eq!(
        ask(&[conformance::KERNELS_FOLDER, "13.5"]),
        (Some(0), name.clone())
    );
    assert_eq!(
        ask(&[conformance::KERNELS_FOLDER_RELEASE, &name]),
        (Some(0), "13.5".into())
    );
    // Not a toolchain's folder: no answer, exit 1 (a script skips it).
    for other in ["kernels", "fixtures", "kernels-nvcc-13.5.tar.xz"] {
        assert_eq!(
            ask(&[conformance::KERNELS_FOLDER_RELEASE, other]),
            (Some(1), String::new()),
            "{other}"
        );
    }
    // Not a release: a usage error.
    assert_eq!(ask(&[conformance::KERNELS_FOLDER, "latest"]).0, Some(2));
    assert_eq!(ask(&[conformance::KERNELS_FOLDER]).0, Some(2));
}
