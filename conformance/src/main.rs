//! `conformance`: the gridcheck harness binary. `cargo xtask conformance`
//! builds what it needs and runs this; see `--help-gridcheck`.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let root = root.canonicalize().unwrap_or(root);
    conformance::main_with(std::env::args().collect(), root)
}
