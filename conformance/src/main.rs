//! `conformance`: the gridcheck harness binary. `cargo xtask conformance`
//! builds what it needs and runs this; see `--help` (gridcheck's options, then libtest's).

use std::process::ExitCode;

fn main() -> ExitCode {
    // The checkout it runs for, decided at run time (a binary built in
    // another checkout with a shared CARGO_TARGET_DIR works on this one).
    let root = gridcheck_toolchain::checkout_root(env!("CARGO_MANIFEST_DIR"));
    conformance::main_with(std::env::args().collect(), root)
}
