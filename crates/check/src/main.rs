//! `gridcheck-check`: the machine-code check of CUDA binaries as a
//! command (`cli.rs` is its command line; `cargo xtask check` runs the
//! same). Exit status: 0 no finding, 1 findings, 2 an error.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = gridcheck_toolchain::checkout_root(env!("CARGO_MANIFEST_DIR"));
    match gridcheck_check::cli::run(&args, &root, None) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
