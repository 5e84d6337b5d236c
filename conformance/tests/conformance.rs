//! `cargo test` runs the harness too: the model tier always, the static tier
//! when nvcc is found, the GPU tier when a driver and built kernels exist
//! (otherwise its trials are reported ignored with the reason), the
//! machine-code tier on sm_90 when nvcc and a disassembler are found.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let root = root.canonicalize().unwrap_or(root);
    let mut argv: Vec<String> = std::env::args().collect();
    // This binary is the harness's worker too (it runs itself as one):
    // a worker's command line is the harness's to read.
    if argv.get(1).map(String::as_str) == Some(conformance::WORKER_FLAG) {
        return conformance::main_with(argv, root);
    }
    // Under `cargo test`, results go beside the other test outputs.
    if !argv.iter().any(|a| a == "--results") {
        argv.insert(1, "--results".into());
        argv.insert(
            2,
            root.join("target/gridcheck/cargo-test.jsonl")
                .display()
                .to_string(),
        );
    }
    // The machine-code tier compiles every kernel with a PDL or launch
    // primitive once per architecture: one architecture under `cargo test`
    // (CI runs the tier on every one, under two toolchains).
    if !argv.iter().any(|a| a == "--sass-arch") {
        argv.insert(1, "--sass-arch".into());
        argv.insert(2, "sm_90".into());
    }
    conformance::main_with(argv, root)
}
