//! The mutants' kernels: `cargo xtask mutants [--out DIR]` writes the CUDA
//! of every mutation candidate of the spec (`gridcheck_mutate`) into
//! `DIR/generated` (default `.gpu-bundle/mutants`, for
//! `conformance/mutants-gpu.sh` to build on a GPU machine), and
//! `cargo xtask conformance --mutants` builds them into `target/kernels`
//! first. They are generated each time, never kept in the repository.

use std::path::{Path, PathBuf};

use gridcheck_spec::{Spec, Test, TestBody};

use crate::Result;

/// Every candidate's generated CUDA: its file name (`<stem>.cu`), the test
/// it is, and the source.
pub fn generate(spec: &Spec) -> Vec<(String, Test, String)> {
    let (candidates, _) = gridcheck_mutate::candidates(spec);
    candidates
        .into_iter()
        .filter_map(|c| {
            let original = spec.test(&c.test)?;
            let rules: Vec<&str> = spec
                .rules
                .iter()
                .filter(|r| r.tests.iter().any(|n| n == &c.test))
                .map(|r| r.id.as_str())
                .collect();
            let test = Test {
                name: c.name.clone(),
                description: Some(format!(
                    "Mutant of {}: {} at {} (removes: {}).",
                    c.test,
                    c.operator.name(),
                    c.site,
                    c.operator.guarantee()
                )),
                body: TestBody::Litmus(c.litmus.clone()),
                origin: original.origin.clone(),
                source_line: None,
                source_file: None,
                formerly: Vec::new(),
                // A mutant of a test that can hang can hang too.
                gpu_timeout: original.gpu_timeout,
            };
            let src = gridcheck_kernelgen::spec_relative(&original.origin.file);
            let cuda = gridcheck_kernelgen::generate(&test, &c.litmus, &src, &rules);
            Some((
                format!("{}.cu", gridcheck_mutate::file_stem(&c.name)),
                test,
                cuda,
            ))
        })
        .collect()
}

/// Writes every candidate's CUDA into `dir` (emptied of old `.cu` files
/// first); returns the files with their tests.
fn write(spec: &Spec, dir: &Path) -> Result<Vec<(PathBuf, Test)>> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for e in std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .flatten()
    {
        if e.path().extension().is_some_and(|x| x == "cu") {
            std::fs::remove_file(e.path())
                .map_err(|err| format!("cannot remove {}: {err}", e.path().display()))?;
        }
    }
    let mut out = Vec::new();
    for (file, test, cuda) in generate(spec) {
        let path = dir.join(file);
        // Unchanged files keep their time stamp, so their cubins stay current.
        if std::fs::read_to_string(&path).ok().as_deref() != Some(cuda.as_str()) {
            std::fs::write(&path, cuda)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        out.push((path, test));
    }
    Ok(out)
}

/// `cargo xtask mutants [--out DIR]`.
pub fn run(args: &[String]) -> Result<()> {
    let root = crate::root();
    let out = match args {
        [] => root.join(".gpu-bundle/mutants"),
        [flag, dir] if flag == "--out" => PathBuf::from(dir),
        _ => return Err("usage: cargo xtask mutants [--out DIR]".into()),
    };
    let spec = crate::load_spec(&root)?;
    let files = write(&spec, &out.join("generated"))?;
    println!(
        "{} mutation candidates' kernels in {} (build and run them on a GPU machine: \
         bash conformance/mutants-gpu.sh)",
        files.len(),
        out.join("generated").display()
    );
    Ok(())
}

/// Builds every candidate's kernel into `target/kernels/<arch>/<stem>.cubin`.
pub fn build(root: &Path, arch: &str) -> Result<()> {
    let spec = crate::load_spec(root)?;
    let build_dir = gridcheck_toolchain::kernels_dir(root, None);
    let files = write(&spec, &build_dir.join("mutants"))?;
    let nvcc = gridcheck_toolchain::find_nvcc(root)?;
    let mut jobs = Vec::new();
    for (src, test) in files {
        if let Ok(Some(flags)) = gridcheck_kernelgen::build_plan(&test, arch) {
            jobs.push(crate::build::Job {
                src,
                arch: arch.to_string(),
                flags,
                output: crate::build::Output::Cubin,
            });
        }
    }
    let include = root.join(gridcheck_kernelgen::INCLUDE_DIR);
    let results = crate::build::compile(
        &nvcc,
        &jobs,
        &include,
        &build_dir,
        crate::build::default_jobs(),
    );
    let errors: Vec<String> = results.into_iter().filter_map(|r| r.err()).collect();
    if !errors.is_empty() {
        return Err(errors.join("\n"));
    }
    println!("build: {} mutants' kernels for {arch}", jobs.len());
    Ok(())
}
