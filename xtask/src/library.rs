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
    CATALOG_FILE, Catalog, Patches, TARGETS, build_record, header_dirs, merge, release_of_scan,
    render, scan_headers,
};

use crate::{Result, root};

const USAGE: &str = "usage: cargo xtask library scan | list | pack [--out FILE] | build [--release 13.0,13.3] [--target sm_90,compute_80] [--program P,..] [--jobs N] [--force]";

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
    let (files, mib) = pack_into(root, &out)?;
    println!(
        "{files} files packed into {} ({mib:.1} MiB); unpack into target/library/",
        out.display()
    );
    Ok(())
}

/// The built binaries and each release's `build.json`, staged as
/// `<release>/<target>/<binary>` and `<release>/build.json` (no patched
/// header copies) and packed into `out`: unpacked into a checkout's
/// `target/library/` on the GPU machine (`conformance/bundle-kernels.sh`),
/// they are where [`binary`] says. The one packer of both `library pack`
/// and the bundle. Returns the files packed and the archive's MiB.
pub fn pack_into(root: &Path, out: &Path) -> Result<(usize, f64)> {
    let lib = gridcheck_library::library_dir(root);
    let stage = root.join(".gpu-bundle/library-stage");
    let _ = std::fs::remove_dir_all(&stage);
    let mut files = 0;
    // Every release built here (a folder with its build.json), whether or
    // not its headers are still installed.
    let mut releases: Vec<String> = std::fs::read_dir(&lib)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|r| build_record(root, r).is_file())
        .collect();
    releases.sort();
    for release in releases {
        let mut built = vec![build_record(root, &release)];
        for t in TARGETS {
            let dir = lib.join(&release).join(t);
            built.extend(
                std::fs::read_dir(&dir)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path()),
            );
        }
        for f in built {
            let rel = f
                .strip_prefix(&lib)
                .map_err(|_| format!("{} is outside {}", f.display(), lib.display()))?;
            crate::copy_creating(&f, &stage.join(rel))?;
            files += 1;
        }
    }
    if files == 0 {
        return Err("nothing built: run `cargo xtask library build` first".into());
    }
    if let Some(d) = out.parent() {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    crate::bundle::pack(&stage, out)?;
    std::fs::remove_dir_all(&stage).map_err(|e| format!("{}: {e}", stage.display()))?;
    let mib = std::fs::metadata(out).map(|m| m.len()).unwrap_or(0) as f64 / 1048576.0;
    Ok((files, mib))
}
