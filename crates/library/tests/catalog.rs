//! The checked-in catalog (`kernels/cccl/algorithms.toml`): current with
//! every installed release's headers, every algorithm covered by a program
//! that exists and calls it, and every patch fitting its release's headers.

use std::path::PathBuf;

use gridcheck_library::{
    CATALOG_FILE, Catalog, NOPDL_PATCH, Patches, apply_to_text, header_dirs, merge, moves_a_wait,
    release_of_scan, render, scan_headers, source,
};

fn root() -> PathBuf {
    gridcheck_toolchain::checkout_root(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_catalog_is_current_with_the_installed_headers() {
    let root = root();
    let checked_in = Catalog::load(&root).unwrap();
    let headers = header_dirs(&root);
    if headers.is_empty() {
        println!(
            "not checked: no CUDA release's CCCL headers under {}/.toolchains (cargo xtask toolchain install 13.0)",
            root.display()
        );
        return;
    }
    let scanned: Vec<_> = headers
        .iter()
        .map(|h| release_of_scan(&h.release, &scan_headers(&h.include).unwrap()))
        .collect();
    let fresh = merge(&checked_in, scanned);
    let text = std::fs::read_to_string(root.join(CATALOG_FILE)).unwrap();
    assert!(
        render(&fresh) == text,
        "{CATALOG_FILE} is stale for the installed releases: run `cargo xtask library scan`"
    );
}

#[test]
fn every_algorithm_has_a_program_that_calls_it() {
    let root = root();
    let c = Catalog::load(&root).unwrap();
    let mut missing = Vec::new();
    for r in &c.releases {
        for a in &r.algorithms {
            if a.program.is_empty() {
                missing.push(format!(
                    "release {}: `{}` ({}) launches with PDL and no program covers it",
                    r.name, a.name, a.entry
                ));
                continue;
            }
            let src = source(&root, &a.program);
            let text = std::fs::read_to_string(&src).unwrap_or_default();
            if !text.contains(&format!("\"{}\"", a.name)) {
                missing.push(format!("{}: has no algorithm `{}`", src.display(), a.name));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn every_patch_fits_its_installed_release() {
    let root = root();
    let patches = Patches::load(&root).unwrap();
    let headers = header_dirs(&root);
    let mut checked = 0;
    for p in &patches.patches {
        if p.name != NOPDL_PATCH {
            assert!(moves_a_wait(p), "patch `{}` inserts no wait", p.name);
        }
        for prog in &p.programs {
            assert!(
                source(&root, prog).is_file(),
                "patch `{}`: no program {prog}",
                p.name
            );
        }
        let Some(h) = headers.iter().find(|h| h.release == p.release) else {
            println!(
                "patch `{}` not checked: release {} is not installed",
                p.name, p.release
            );
            continue;
        };
        for e in &p.edits {
            let text = std::fs::read_to_string(h.include.join(&e.file))
                .unwrap_or_else(|err| panic!("patch `{}`: {}: {err}", p.name, e.file));
            apply_to_text(p, &e.file, &text).unwrap();
        }
        checked += 1;
    }
    println!(
        "{checked} of {} patches checked against their headers",
        patches.patches.len()
    );
}
