//! `gridcheck`: one command for the GPU machine and for a developer, as
//! cargo is for Rust (`gridcheck help`; the library's docs).

use std::process::ExitCode;

fn main() -> ExitCode {
    // The checkout it runs for, decided at run time (the current directory
    // first: a bundle's binary runs in another checkout).
    let root = gridcheck_toolchain::checkout_root(env!("CARGO_MANIFEST_DIR"));
    let argv: Vec<String> = std::env::args().skip(1).collect();
    gridcheck_cli::main(&argv, &root)
}
