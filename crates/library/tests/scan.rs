//! The header scan on small fake header trees: a release whose agent calls
//! the PDL macros and one whose agent does not, comments skipped, a header
//! the mapping lacks listed with no program.

use std::path::{Path, PathBuf};

use gridcheck_library::{Catalog, merge, release_of_scan, render, scan_headers, sites_of};

fn tree(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gc-lib-scan-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (f, text) in files {
        let p = dir.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

fn version(v: &str) -> (&'static str, String) {
    (
        "cuda/std/__cccl/version.h",
        format!("#pragma once\n#define CCCL_VERSION {v}\n"),
    )
}

const AGENT_PDL: &str = "struct agent {\n  void run() {\n    _CCCL_PDL_GRID_DEPENDENCY_SYNC();\n    work();\n    // _CCCL_PDL_TRIGGER_NEXT_LAUNCH();\n    _CCCL_PDL_TRIGGER_NEXT_LAUNCH(); // omitting makes no difference\n  }\n};\n";
const AGENT_PLAIN: &str = "struct agent {\n  void run() {\n    work();\n  }\n};\n";

fn scanned(dir: &Path) -> gridcheck_library::Release {
    release_of_scan("13.9", &scan_headers(dir).unwrap())
}

#[test]
fn a_release_with_pdl_in_an_agent_lists_its_algorithms() {
    let v = version("3005000");
    let dir = tree(
        "pdl",
        &[(v.0, &v.1), ("cub/agent/agent_merge_sort.cuh", AGENT_PDL)],
    );
    let r = scanned(&dir);
    assert_eq!(r.cccl, "3.5.0");
    let names: Vec<&str> = r.algorithms.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["merge_sort_keys", "merge_sort_pairs"]);
    let a = &r.algorithms[0];
    assert_eq!(a.program, "merge_sort");
    assert_eq!(a.waits, ["cub/agent/agent_merge_sort.cuh:3"]);
    // The commented-out trigger of line 5 is not one.
    assert_eq!(a.triggers, ["cub/agent/agent_merge_sort.cuh:6"]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_release_without_pdl_in_the_agent_lists_nothing() {
    let v = version("3000001");
    let dir = tree(
        "plain",
        &[(v.0, &v.1), ("cub/agent/agent_merge_sort.cuh", AGENT_PLAIN)],
    );
    let r = scanned(&dir);
    assert_eq!(r.cccl, "3.0.1");
    assert!(r.algorithms.is_empty(), "{:?}", r.algorithms);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn an_unmapped_header_with_pdl_is_listed_without_a_program() {
    let v = version("3006000");
    let dir = tree(
        "new",
        &[(v.0, &v.1), ("cub/agent/agent_new_thing.cuh", AGENT_PDL)],
    );
    let r = scanned(&dir);
    assert_eq!(r.algorithms.len(), 1);
    assert_eq!(r.algorithms[0].name, "unmapped_agent_new_thing");
    assert_eq!(r.algorithms[0].program, "");
    // It survives the catalog's round trip, program and all.
    let c = merge(&Catalog::default(), vec![r]);
    assert_eq!(Catalog::parse(&render(&c)).unwrap(), c);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn comments_and_defines_are_not_sites() {
    let text = "#  define _CCCL_PDL_GRID_DEPENDENCY_SYNC() x\n/* _CCCL_PDL_GRID_DEPENDENCY_SYNC();\n _CCCL_PDL_TRIGGER_NEXT_LAUNCH(); */ _CCCL_PDL_GRID_DEPENDENCY_SYNC();\n";
    let s = sites_of(text);
    assert_eq!(s.waits, vec![3]);
    assert!(s.triggers.is_empty());
}

#[test]
fn no_version_header_is_a_located_error() {
    let dir = tree("nover", &[("cub/agent/agent_merge_sort.cuh", AGENT_PDL)]);
    let e = scan_headers(&dir).unwrap_err();
    assert!(e.contains("version.h"), "{e}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn merging_keeps_releases_not_scanned() {
    let v = version("3005000");
    let dir = tree(
        "merge",
        &[(v.0, &v.1), ("cub/agent/agent_merge_sort.cuh", AGENT_PDL)],
    );
    let mut old = scanned(&dir);
    old.name = "13.10".into();
    let c = merge(
        &Catalog {
            releases: vec![old],
        },
        vec![scanned(&dir)],
    );
    let names: Vec<&str> = c.releases.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["13.9", "13.10"]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_thrust_entry_point_is_listed_where_its_header_calls_the_algorithm() {
    let v = version("3005000");
    let sort_h = "auto s = cub::DeviceMergeSort::SortKeys(a, b);\n";
    let with = tree(
        "thrust",
        &[
            (v.0, &v.1),
            ("cub/agent/agent_merge_sort.cuh", AGENT_PDL),
            ("thrust/system/cuda/detail/sort.h", sort_h),
        ],
    );
    let r = scanned(&with);
    let t = r
        .algorithms
        .iter()
        .find(|a| a.name == "thrust_sort_custom")
        .unwrap();
    assert_eq!(t.program, "thrust");
    assert_eq!(t.waits, r.algorithms[0].waits);
    assert_eq!(
        r.algorithms[0].thrust,
        ["thrust::sort (a custom comparator)"]
    );
    // Without PDL in the agent, Thrust's entry point is not listed either.
    let without = tree(
        "thrust-plain",
        &[
            (v.0, &v.1),
            ("cub/agent/agent_merge_sort.cuh", AGENT_PLAIN),
            ("thrust/system/cuda/detail/sort.h", sort_h),
        ],
    );
    assert!(scanned(&without).algorithms.is_empty());
    std::fs::remove_dir_all(with).unwrap();
    std::fs::remove_dir_all(without).unwrap();
}
