//! The check on freshly compiled code (each test prints why it is skipped
//! when the checkout has no toolchain with nvcc and nvdisasm under
//! `.toolchains/`):
//! - the machine-code tier's programs (`kernels/sass/programs.toml`), the
//!   regression set: a load the source puts after the wait is never listed
//!   before it, and the negative control's is;
//! - the fixtures' programs give the answers the fixture tests pin, on
//!   sm_90 and sm_100 (a tensor-map prefetch of a `__grid_constant__`
//!   parameter reads only the parameters);
//! - a wait compiled out of the compute_80 PTX of a shared library (its PTX
//!   entry compressed, as nvcc 13 writes it) is a finding;
//! - a truncated cubin is an error for that file only;
//! - the interposer builds with gcc against the toolkit's `cuda.h`;
//! - packing and the prefilter change no kernel's result: the fixture
//!   cubins (`fixtures/pdl.sm_*.cubin`, each twice, so that a pack holds
//!   the same names twice) give the same report as each file disassembled
//!   whole.

use std::path::{Path, PathBuf};
use std::process::Command;

use gridcheck_check::cubin::Tools;
use gridcheck_check::{Kernel, Options, Provenance, check};
use gridcheck_toolchain::{Toolchain, installed};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The newest installed toolchain with nvcc and nvdisasm, or why none.
fn toolchain() -> Option<Toolchain> {
    let (all, _) = installed(&root());
    let t = all.into_iter().rev().find(|t| t.nvdisasm.is_some());
    if t.is_none() {
        eprintln!(
            "skipped: no toolchain with nvcc and nvdisasm under .toolchains/ (cargo xtask toolchain install 13.3)"
        );
    }
    t
}

fn opts(t: &Toolchain) -> Options {
    Options {
        tools: Tools {
            nvdisasm: t.nvdisasm.clone(),
            cuobjdump: t.cuobjdump.clone(),
            cache: None,
            tmp: std::env::temp_dir(),
            ..Tools::default()
        },
        jobs: 2,
        ..Options::default()
    }
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gridcheck-check-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn nvcc(t: &Toolchain, args: &[&str]) {
    let out = Command::new(&t.nvcc.path).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "nvcc {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn kernels(r: &gridcheck_check::Report) -> Vec<&Kernel> {
    r.files
        .iter()
        .flat_map(|f| f.units.iter().flat_map(|u| u.kernels.iter()))
        .collect()
}

fn line_of(l: &gridcheck_check::EarlyLoad) -> u32 {
    l.loc
        .as_deref()
        .and_then(|l| l.rsplit_once(':'))
        .and_then(|(_, n)| n.parse().ok())
        .unwrap_or(0)
}

#[test]
fn packed_and_prefiltered_the_fixture_cubins_give_the_reports_of_each_cubin_whole() {
    let Some(t) = toolchain() else { return };
    let out = scratch("packed");
    let mut files = Vec::new();
    for sm in [90, 100, 103, 120, 121] {
        let src = root().join(format!("crates/check/tests/fixtures/pdl.sm_{sm}.cubin"));
        for copy in ["a", "b"] {
            let f = out.join(format!("{copy}.sm_{sm}.cubin"));
            std::fs::copy(&src, &f).unwrap();
            files.push(f);
        }
    }
    let fast = check(&files, &opts(&t));
    let mut whole = opts(&t);
    (whole.tools.pack, whole.tools.all_kernels) = (1, true);
    let reference = check(&files, &whole);
    assert!(!fast.has_errors(), "{:?}", fast.files[0].errors);
    let json = |r: &gridcheck_check::Report| serde_json::to_string(&r.files).unwrap();
    assert_eq!(json(&fast), json(&reference));
    // Three PDL kernels a cubin; the plain one counted, not disassembled.
    assert_eq!(kernels(&fast).len(), 30);
    let skipped: Vec<&Kernel> = fast
        .files
        .iter()
        .flat_map(|f| &f.all)
        .filter(|k| k.skipped)
        .collect();
    assert_eq!(skipped.len(), 10);
    assert!(skipped.iter().all(|k| k.name == "plain"));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn the_machine_code_tiers_programs_keep_their_loads_after_the_wait() {
    let Some(t) = toolchain() else { return };
    let dir = root().join("kernels/sass");
    let programs = gridcheck_sass::programs::load(&dir).unwrap();
    let out = scratch("programs");
    let mut checked = 0;
    let mut wrong = Vec::new();
    for p in programs.iter().filter(|p| !p.after_wait.is_empty()) {
        // Programs whose sm_90 build has no wait by design are the PTX test's.
        if p.no_wait.iter().any(|n| n == "sm_90")
            || !p.targets.is_empty() && !p.targets.iter().any(|n| n == "sm_90")
        {
            continue;
        }
        let cubin = out.join(format!("{}.cubin", p.name));
        let src = dir.join(&p.file);
        let mut args = vec!["-cubin", "-lineinfo", "-arch=sm_90", "-o"];
        let c = cubin.display().to_string();
        let s = src.display().to_string();
        args.push(&c);
        args.extend(p.flags.iter().map(String::as_str));
        args.push(&s);
        nvcc(&t, &args);
        let r = check(&[cubin], &opts(&t));
        assert!(!r.has_errors(), "{}: {:?}", p.name, r.files[0].errors);
        let ks = kernels(&r);
        let k = ks
            .iter()
            .find(|k| k.name == p.kernel)
            .unwrap_or_else(|| panic!("{}: no PDL kernel `{}`", p.name, p.kernel));
        let source = std::fs::read_to_string(&src).unwrap();
        for label in &p.after_wait {
            let (line, _) = gridcheck_sass::programs::tagged(&source, label).unwrap();
            let early = k.early.iter().any(|l| line_of(l) == line);
            let reordered = format!("{:?}", p.expect)
                .to_lowercase()
                .contains("reordered");
            // A wait in a loop, taken on the first iteration only: the
            // later iterations' path skips it, and the check, which does
            // not evaluate branch conditions, lists their loads; the
            // kernel's note says why.
            let looped = k.notes.iter().any(|n| n.contains("in a loop"));
            if early != reordered && !(early && looped) {
                wrong.push(format!(
                    "{}: the load at line {line} ({label}) {} before the wait",
                    p.name,
                    if early { "is listed" } else { "is not listed" },
                ));
            }
        }
        checked += 1;
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert!(checked >= 8, "only {checked} programs checked");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn freshly_compiled_fixtures_give_the_pinned_answers_on_sm_90_and_sm_100() {
    let Some(t) = toolchain() else { return };
    let out = scratch("fixtures");
    for arch in ["sm_90", "sm_100"] {
        // `-lineinfo` cubins of the fixtures' sources, for this architecture.
        let cubin = |name: &str, src: &str| {
            let out = out.join(format!("{name}.{arch}.cubin"));
            let src = root().join(src);
            nvcc(
                &t,
                &[
                    "-cubin",
                    "-lineinfo",
                    &format!("-arch={arch}"),
                    "-o",
                    &out.display().to_string(),
                    &src.display().to_string(),
                ],
            );
            out
        };
        let pair = cubin("pdl_pair", "kernels/trace/pdl_pair.cu");
        let unresolved = cubin("unresolved", "crates/check/tests/fixtures/unresolved.cu");
        let tensormap = cubin("tensormap", "crates/check/tests/fixtures/tensormap.cu");
        let r = check(&[pair, unresolved, tensormap], &opts(&t));
        assert!(!r.has_errors(), "{:?}", r.files);
        let ks = kernels(&r);
        let s = ks.iter().find(|k| k.name.contains("secondary")).unwrap();
        let mut lines: Vec<(u32, Vec<Option<u32>>)> = s
            .early
            .iter()
            .map(|l| match &l.provenance {
                Provenance::Param { params, .. } => {
                    (line_of(l), params.iter().map(|p| p.ordinal).collect())
                }
                other => panic!("{arch}: {other:?}"),
            })
            .collect();
        lines.sort();
        assert_eq!(lines, [(25, vec![Some(0)]), (26, vec![Some(1)])], "{arch}");
        let table = ks.iter().find(|k| k.name == "table_load").unwrap();
        assert!(
            table
                .early
                .iter()
                .any(|l| line_of(l) == 7 && matches!(l.provenance, Provenance::Loaded { .. })),
            "{arch}: {:#?}",
            table.early
        );
        let shared = ks.iter().find(|k| k.name == "shared_pointer").unwrap();
        assert!(
            shared
                .early
                .iter()
                .any(|l| line_of(l) == 17 && matches!(l.provenance, Provenance::Unknown { .. })),
            "{arch}: {:#?}",
            shared.early
        );
        let tm = ks.iter().find(|k| k.name.contains("CUtensorMap")).unwrap();
        let prefetches: Vec<(u32, bool)> = tm
            .early
            .iter()
            .filter(|l| l.access == "tensor-map prefetch")
            .map(|l| (line_of(l), l.reads_params_only))
            .collect();
        assert_eq!(
            prefetches,
            [(9, true), (10, false)],
            "{arch}: {:#?}",
            tm.early
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_wait_compiled_out_of_the_ptx_is_a_finding_and_a_cut_cubin_an_error_of_its_own() {
    let Some(t) = toolchain() else { return };
    if t.cuobjdump.is_none() {
        eprintln!(
            "skipped: toolchain {} has no cuobjdump to decompress PTX entries",
            t.name
        );
        return;
    }
    let out = scratch("ptx");
    // A shared library (the program has no main), as libraries ship.
    let exe = out.join("libguarded.so");
    let src = root().join("kernels/sass/guarded-wait-arch.cu");
    nvcc(
        &t,
        &[
            "-shared",
            "-Xcompiler",
            "-fPIC",
            "-gencode",
            "arch=compute_90,code=sm_90",
            "-gencode",
            "arch=compute_80,code=compute_80",
            "-o",
            &exe.display().to_string(),
            &src.display().to_string(),
        ],
    );
    // A cubin cut in half beside it: its own error, the executable checked.
    let cubin = out.join("whole.cubin");
    nvcc(
        &t,
        &[
            "-cubin",
            "-arch=sm_90",
            "-o",
            &cubin.display().to_string(),
            &src.display().to_string(),
        ],
    );
    let bytes = std::fs::read(&cubin).unwrap();
    let cut = out.join("cut.cubin");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let r = check(&[exe, cut], &opts(&t));
    assert!(r.files[0].errors.is_empty(), "{:?}", r.files[0].errors);
    assert!(
        r.files[1].errors.iter().any(|e| e.contains("truncated")),
        "{:?}",
        r.files[1].errors
    );
    let f: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.rule == "pdl-ptx-missing-wait")
        .collect();
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    assert_eq!(f[0].arch, "compute_80");
    assert_eq!(f[0].kernel, "secondary");
    assert_eq!(r.exit_code(), 2, "an error outranks a finding");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn the_interposer_builds_with_gcc() {
    let Some(t) = toolchain() else { return };
    let include = t.nvcc.path.parent().unwrap().join("../include");
    if !include.join("cuda.h").is_file() {
        eprintln!("skipped: no cuda.h in {}", include.display());
        return;
    }
    let out = scratch("trace");
    let so = out.join("libgridcheck_trace.so");
    let r = Command::new("gcc")
        .args(["-shared", "-fPIC", "-O2", "-Wall", "-Werror"])
        .arg(format!("-I{}", include.display()))
        .arg(root().join("kernels/trace/trace.c"))
        .arg("-o")
        .arg(&so)
        .args(["-ldl", "-lpthread"])
        .output();
    let Ok(r) = r else {
        eprintln!("skipped: no gcc");
        return;
    };
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let _ = std::fs::remove_dir_all(&out);
}
