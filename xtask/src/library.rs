//! `cargo xtask library scan|list|build`: the CCCL library programs
//! (`kernels/cccl/`, `crates/library`). `scan` regenerates
//! `kernels/cccl/algorithms.toml` from the installed releases' headers;
//! `list` prints it; `build` compiles every program of every installed
//! release with that release's own nvcc and headers, for sm_90 (SASS) and
//! compute_80 (PTX only), each as shipped, with PDL off (`-nopdl`), the PTX
//! path's control (`-ptx90`) and the patches of `kernels/cccl/patches.toml`
//! (`-<patch>`), in parallel, with `build.json` beside the binaries; `pack`
//! puts what was built into `.gpu-bundle/library.tar.xz` for a GPU machine.

mod build;

use std::path::{Path, PathBuf};

use gridcheck_library::{
    CATALOG_FILE, Catalog, Patches, header_dirs, merge, release_of_scan, render, scan_headers,
};

use crate::{Result, root};

const USAGE: &str = "usage: cargo xtask library scan | list | pack [--out FILE] | build [--release 13.0,13.3] [--target sm_90,compute_80] [--program P,..] [--variant shipped,-nopdl,..] [--jobs N] [--force]";

pub fn run(args: &[String]) -> Result<()> {
    let root = root();
    match args.first().map(String::as_str) {
        Some("scan") => scan(&root),
        Some("list") => list(&root),
        Some("build") => build::build(&root, &args[1..]),
        Some("pack") => pack(&root, &args[1..]),
        _ => Err(USAGE.into()),
    }
}

fn scan(root: &Path) -> Result<()> {
    let headers = header_dirs(root);
    if headers.is_empty() {
        return Err(format!(
            "no CUDA release's CCCL headers under {}/.toolchains: run `cargo xtask toolchain install 13.0`",
            root.display()
        ));
    }
    let path = root.join(CATALOG_FILE);
    let old = if path.exists() {
        Catalog::load(root)?
    } else {
        Catalog::default()
    };
    let mut scanned = Vec::new();
    for h in &headers {
        let r = release_of_scan(&h.release, &scan_headers(&h.include)?);
        println!(
            "{}: CCCL {}, {} algorithms with PDL ({})",
            r.name,
            r.cccl,
            r.algorithms.len(),
            h.include.display()
        );
        scanned.push(r);
    }
    let text = render(&merge(&old, scanned));
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("wrote {CATALOG_FILE}");
    Ok(())
}

fn list(root: &Path) -> Result<()> {
    let c = Catalog::load(root)?;
    let patches = Patches::load(root)?;
    for r in &c.releases {
        println!(
            "{} (CCCL {}): {} algorithms with PDL",
            r.name,
            r.cccl,
            r.algorithms.len()
        );
        for a in &r.algorithms {
            let program = if a.program.is_empty() {
                "NO PROGRAM"
            } else {
                a.program.as_str()
            };
            println!(
                "  {:<28} {:<12} {} ({} waits, {} triggers)",
                a.name,
                program,
                a.entry,
                a.waits.len(),
                a.triggers.len()
            );
            for t in &a.thrust {
                println!("  {:<28} {:<12} also {t}", "", "");
            }
        }
        for p in patches.patches.iter().filter(|p| p.release == r.name) {
            println!(
                "  patch -{}: {} ({})",
                p.name,
                p.kernels.join(", "),
                p.programs.join(", ")
            );
        }
    }
    Ok(())
}

fn pack(root: &Path, args: &[String]) -> Result<()> {
    let out = match args {
        [] => root.join(".gpu-bundle/library.tar.xz"),
        [flag, f] if flag == "--out" => PathBuf::from(f),
        _ => return Err(USAGE.into()),
    };
    let (files, mib) = crate::bundle::pack_into(root, &out)?;
    println!(
        "{files} files packed into {} ({mib:.1} MiB); unpack into target/library/",
        out.display()
    );
    Ok(())
}
