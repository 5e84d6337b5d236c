//! Shared by the site tests: the checkout's inputs and a fresh build.

use std::path::{Path, PathBuf};

use gridcheck_docs::site::{Built, Inputs, build};

pub fn root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    here.canonicalize().unwrap_or(here)
}

/// The inputs of this checkout: its spec, seeds when present, recorded runs.
pub fn inputs() -> Inputs {
    let root = root();
    let seeds_dir = gridcheck_spec::seeds::default_dir(&root);
    let seeds = seeds_dir
        .as_ref()
        .map(|d| gridcheck_spec::Seeds::load(d).expect("seeds readable"));
    let spec = gridcheck_spec::load_dir(&root.join("spec"), seeds.as_ref())
        .unwrap_or_else(|e| panic!("the spec does not load:\n{e}"));
    Inputs::load(&root, spec, seeds_dir).unwrap_or_else(|e| panic!("inputs: {e}"))
}

/// A fresh directory under the target directory, removed first if present.
pub fn scratch(name: &str) -> PathBuf {
    let d = root()
        .join("target/docs-tests")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Builds the site of this checkout into a fresh directory.
pub fn built(name: &str) -> (Inputs, PathBuf, Built) {
    let inputs = inputs();
    let out = scratch(name);
    let b = build(&inputs, &out).unwrap_or_else(|e| panic!("site build: {e}"));
    (inputs, out, b)
}
