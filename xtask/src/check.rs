//! `cargo xtask check PATH...`: the machine-code check of CUDA binaries
//! (cubins, fatbins, executables, shared libraries): loads before the PDL
//! wait with the parameter each address comes from, paired with a launch
//! trace or a produced-parameters file. The same code as the bundle's
//! `gridcheck-check` (`gridcheck_check::cli`), with the checkout's
//! toolchains and a cache of per-cubin results in `target/check-cache`.
//! Exit status: 0 no finding, 1 findings, 2 an error.

use std::process::ExitCode;

pub fn run(args: &[String]) -> ExitCode {
    let root = crate::root();
    let cache = root.join("target/check-cache");
    match gridcheck_check::cli::run(args, &root, Some(cache)) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
