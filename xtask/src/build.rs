//! `cargo xtask build`: every generated kernel through nvcc into a cubin.

use std::path::{Path, PathBuf};

use gridcheck_toolchain::find_nvcc;

use crate::Result;

/// Builds `kernels/generated/*.cu` into `target/kernels/<arch>/*.cubin`,
/// skipping files whose cubin is newer than the source and the headers.
/// Returns the cubins.
pub fn run(root: &Path, arch: &str) -> Result<Vec<PathBuf>> {
    let nvcc = find_nvcc(root)?;
    let src_dir = root.join(gridcheck_kernelgen::GENERATED_DIR);
    let include = root.join("kernels/include");
    let out_dir = root.join("target/kernels").join(arch);
    let obj_dir = root.join("target/kernels/obj").join(arch);
    for d in [&out_dir, &obj_dir] {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&src_dir)
        .map_err(|e| format!("cannot read {}: {e}", src_dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .collect();
    sources.sort();
    let newest_header = std::fs::read_dir(&include)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.metadata().ok()?.modified().ok())
        .max();
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    let chunks: Vec<&[PathBuf]> = sources
        .chunks(sources.len().div_ceil(jobs).max(1))
        .collect();
    let results: Vec<Result<PathBuf>> = std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .iter()
            .map(|chunk| {
                let (nvcc, include, out_dir, obj_dir) = (&nvcc, &include, &out_dir, &obj_dir);
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|src| one(nvcc, src, include, arch, obj_dir, out_dir, newest_header))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|_| vec![Err("a build thread panicked".into())])
            })
            .collect()
    });
    let mut cubins = Vec::new();
    let mut errors = Vec::new();
    for r in results {
        match r {
            Ok(c) => cubins.push(c),
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return Err(errors.join("\n"));
    }
    println!(
        "build: {} cubins for {arch} in {} (nvcc {} via {})",
        cubins.len(),
        out_dir.display(),
        nvcc.version,
        nvcc.found_via
    );
    Ok(cubins)
}

fn one(
    nvcc: &gridcheck_toolchain::Nvcc,
    src: &Path,
    include: &Path,
    arch: &str,
    obj_dir: &Path,
    out_dir: &Path,
    newest_header: Option<std::time::SystemTime>,
) -> Result<PathBuf> {
    let stem = src
        .file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let obj = obj_dir.join(format!("{stem}.o"));
    let cubin = out_dir.join(format!("{stem}.cubin"));
    let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if let (Some(c), Some(s)) = (mtime(&cubin), mtime(src))
        && c > s
        && newest_header.is_none_or(|h| c > h)
    {
        return Ok(cubin);
    }
    let out = nvcc.compile_rdc(src, include, arch, &[], &obj);
    if !out.success {
        return Err(format!(
            "{} does not compile:\n{}\n$ {}",
            src.display(),
            out.output.trim(),
            out.command
        ));
    }
    let out = nvcc.dlink_cubin(&obj, arch, &cubin);
    if !out.success {
        return Err(format!(
            "{} does not link:\n{}\n$ {}",
            src.display(),
            out.output.trim(),
            out.command
        ));
    }
    Ok(cubin)
}
