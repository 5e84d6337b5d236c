//! `cargo xtask doc [--out DIR]`: the spec documentation site
//! (`gridcheck_docs::site`), from the spec and the recorded results.

use std::path::PathBuf;
use std::time::Instant;

use crate::{Result, load_spec, root, seeds_dir};

pub fn run(args: &[String]) -> Result<()> {
    let root = root();
    let out = match args {
        [] => root.join("target/doc-site"),
        [flag, dir] if flag == "--out" => PathBuf::from(dir),
        _ => return Err("usage: cargo xtask doc [--out DIR]".into()),
    };
    let start = Instant::now();
    let spec = load_spec(&root)?;
    let inputs = gridcheck_docs::site::Inputs::load(&root, spec, seeds_dir(&root))?;
    let built = gridcheck_docs::site::build(&inputs, &out)?;
    println!(
        "site built in {:.1} s: {} pages ({} rules), {} recorded runs, {} known facts\n\
         open {}",
        start.elapsed().as_secs_f64(),
        built.pages,
        built.rule_pages,
        inputs.runs.len(),
        inputs.facts.len(),
        built.html.join("index.html").display()
    );
    Ok(())
}
