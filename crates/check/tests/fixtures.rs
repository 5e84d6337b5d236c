//! The check on checked-in disassemblies (no nvcc, no nvdisasm needed):
//! the dataflow's answers, the pairing with a trace and with a
//! produced-parameters file, the report's formats, and bad input.
//!
//! `fixtures/pdl_pair.sm_90.sass` is `nvdisasm -c -gi` of
//! `kernels/trace/pdl_pair.cu` built by nvcc 13.0 for sm_90 with
//! `-lineinfo`; `fixtures/unresolved.sm_90.sass` the same of
//! `fixtures/unresolved.cu`, and `fixtures/tensormap.sm_90.sass` of
//! `fixtures/tensormap.cu`. `tests/nvcc.rs` checks that they are current.

use std::collections::BTreeMap;
use std::path::PathBuf;

use gridcheck_check::cubin::{CubinResult, check_text};
use gridcheck_check::nvinfo::{Param, ParamInfo};
use gridcheck_check::report::FileReport;
use gridcheck_check::run::report;
use gridcheck_check::{Options, Provenance, output, pair};

fn fixture(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Pointer parameters (8 bytes each) then `ints` 4-byte ones, at 0x210.
fn info(pointers: u32, ints: u32) -> ParamInfo {
    let mut params = Vec::new();
    for k in 0..pointers {
        params.push(Param {
            ordinal: k,
            offset: 8 * k,
            size: 8,
        });
    }
    for k in 0..ints {
        params.push(Param {
            ordinal: pointers + k,
            offset: 8 * pointers + 4 * k,
            size: 4,
        });
    }
    let size = params.iter().map(|p| p.offset + p.size).max().unwrap_or(0);
    ParamInfo {
        params,
        cbank_offset: Some(0x210),
        cbank_size: Some(size),
    }
}

pub fn pdl_pair() -> CubinResult {
    let infos = BTreeMap::from([
        ("_Z9secondaryPKfS0_Pfi".to_string(), info(3, 1)),
        ("_Z7primaryPfi".to_string(), info(1, 1)),
    ]);
    check_text(&fixture("pdl_pair.sm_90.sass"), &infos, "sm_90").unwrap()
}

fn ordinals(p: &Provenance) -> Vec<Option<u32>> {
    match p {
        Provenance::Param { params, .. } => params.iter().map(|r| r.ordinal).collect(),
        _ => Vec::new(),
    }
}

#[test]
fn each_early_load_names_the_parameter_its_address_comes_from() {
    let r = pdl_pair();
    assert_eq!(r.arch, "sm_90");
    let s = r
        .kernels
        .iter()
        .find(|k| k.name.contains("secondary"))
        .unwrap();
    assert_eq!(s.waits.len(), 1);
    // p (parameter 0, line 25) and the weights (parameter 1, line 26).
    let mut by_line: Vec<(String, Vec<Option<u32>>)> = s
        .early
        .iter()
        .map(|l| (l.loc.clone().unwrap(), ordinals(&l.provenance)))
        .collect();
    by_line.sort();
    assert_eq!(
        by_line,
        [
            ("kernels/trace/pdl_pair.cu:25".to_string(), vec![Some(0)]),
            ("kernels/trace/pdl_pair.cu:26".to_string(), vec![Some(1)]),
        ]
    );
    // Its stores write through `out` only; the primary's through p.
    assert_eq!(
        s.writes.iter().map(|w| w.ordinal).collect::<Vec<_>>(),
        [Some(2)]
    );
    let p = r
        .kernels
        .iter()
        .find(|k| k.name.contains("primary"))
        .unwrap();
    assert!(p.waits.is_empty() && p.triggers.len() == 1 && p.early.is_empty());
    assert_eq!(
        p.writes.iter().map(|w| w.ordinal).collect::<Vec<_>>(),
        [Some(0)]
    );
    assert_eq!(p.stores_after_trigger, 1);
    // With no wait, its trigger is before the wait on every path.
    assert_eq!(p.early_triggers, p.triggers);
}

#[test]
fn what_the_dataflow_cannot_resolve_it_says_so() {
    let infos = BTreeMap::from([
        ("table_load".to_string(), info(2, 0)),
        ("shared_pointer".to_string(), info(3, 0)),
    ]);
    let r = check_text(&fixture("unresolved.sm_90.sass"), &infos, "sm_90").unwrap();
    let table = r.kernels.iter().find(|k| k.name == "table_load").unwrap();
    let pointer_load = table
        .early
        .iter()
        .find(|l| l.loc.as_deref().is_some_and(|l| l.ends_with(":7")))
        .unwrap();
    match &pointer_load.provenance {
        Provenance::Loaded { through } => assert_eq!(through[0].ordinal, Some(0)),
        other => panic!("a pointer read from a table: {other:?}"),
    }
    let shared = r
        .kernels
        .iter()
        .find(|k| k.name == "shared_pointer")
        .unwrap();
    let l = shared
        .early
        .iter()
        .find(|l| l.loc.as_deref().is_some_and(|l| l.ends_with(":17")))
        .unwrap();
    assert!(
        matches!(&l.provenance, Provenance::Unknown { why } if why.contains("shared")),
        "{:?}",
        l.provenance
    );
}

fn opts_with_trace(trace: &str) -> Options {
    Options {
        trace: Some((
            pair::read_trace(trace, "t.jsonl").unwrap(),
            "t.jsonl".into(),
        )),
        ..Options::default()
    }
}

#[test]
fn a_trace_turns_the_early_read_of_the_primarys_output_into_a_finding() {
    let files = vec![FileReport::of_cubin("pdl_pair.cubin", pdl_pair())];
    // No pairing: the table only, no finding, exit 0.
    let none = report(files.clone(), &Options::default());
    assert!(none.findings.is_empty());
    assert_eq!(none.exit_code(), 0);
    let text = output::text(&none, true);
    assert!(text.contains("listed, not judged"), "{text}");
    // The trace: the primary writes p, which the secondary reads early;
    // the weights are not written by anyone.
    let r = report(
        files.clone(),
        &opts_with_trace(&fixture("pdl_pair.trace.jsonl")),
    );
    assert_eq!(r.findings.len(), 1, "{:?}", r.findings);
    let f = &r.findings[0];
    assert_eq!(f.rule, "pdl-early-load");
    assert_eq!(r.exit_code(), 1);
    assert!(
        f.message.starts_with("kernel `_Z9secondaryPKfS0_Pfi`"),
        "{}",
        f.message
    );
    assert!(
        f.message
            .contains("[pdl_pair.cu:25]: global load of parameter 0"),
        "{}",
        f.message
    );
    assert!(f.message.contains(
        "before griddepcontrol.wait; the previous kernel `_Z7primaryPfi` writes it (trace"
    ));
    assert!(
        f.message
            .ends_with("a stale read is possible; move the wait before it")
    );
    // On another stream there is no pairing.
    let other = fixture("pdl_pair.trace.jsonl").replacen("0x5600a0", "0x777", 1);
    assert!(
        report(files.clone(), &opts_with_trace(&other))
            .findings
            .is_empty()
    );
    // Nor across processes appending to one file: a stream is its
    // process's; within one process the pairing stands.
    let two = |a: u32, b: u32| {
        let t = fixture("pdl_pair.trace.jsonl");
        let mut lines = t.lines().map(str::to_string);
        let (first, second) = (lines.next().unwrap(), lines.next().unwrap());
        let at = |l: String, p: u32| {
            l.replacen(",\"params\"", &format!(",\"process\":{p},\"params\""), 1)
        };
        format!("{}\n{}\n", at(first, a), at(second, b))
    };
    assert!(
        report(files.clone(), &opts_with_trace(&two(1, 2)))
            .findings
            .is_empty()
    );
    assert_eq!(
        report(files.clone(), &opts_with_trace(&two(7, 7)))
            .findings
            .len(),
        1
    );
    // A secondary launched without PDL is not paired either.
    let plain = fixture("pdl_pair.trace.jsonl").replace("\"pdl\":true", "\"pdl\":false");
    assert!(report(files, &opts_with_trace(&plain)).findings.is_empty());
}

#[test]
fn a_produced_file_names_what_the_previous_kernel_writes() {
    let files = vec![FileReport::of_cubin("pdl_pair.cubin", pdl_pair())];
    let produced = pair::read_produced(&fixture("pdl_pair.produced.toml"), "p.toml").unwrap();
    let r = report(
        files,
        &Options {
            produced: Some((produced, "p.toml".into())),
            ..Options::default()
        },
    );
    // The name matches the demangled name up to `(` only where c++filt
    // exists; the mangled name always matches.
    let demangled = r.files[0].units[0]
        .kernels
        .iter()
        .any(|k| k.demangled.is_some());
    if !demangled {
        eprintln!("c++filt not found: the produced file's demangled name cannot match; skipped");
        return;
    }
    assert_eq!(r.findings.len(), 1, "{:?}", r.findings);
    assert!(
        r.findings[0].message.contains("parameter 1 `float const*`"),
        "{}",
        r.findings[0].message
    );
    assert!(r.findings[0].message.contains("(p.toml)"));
}

#[test]
fn json_and_sarif_carry_the_findings() {
    let files = vec![FileReport::of_cubin("pdl_pair.cubin", pdl_pair())];
    let r = report(files, &opts_with_trace(&fixture("pdl_pair.trace.jsonl")));
    let j: serde_json::Value = serde_json::from_str(&output::json(&r)).unwrap();
    assert_eq!(j["findings"][0]["rule"], "pdl-early-load");
    assert_eq!(
        j["files"][0]["units"][0]["kernels"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let s: serde_json::Value = serde_json::from_str(&output::sarif(&r)).unwrap();
    assert_eq!(s["version"], "2.1.0");
    let res = &s["runs"][0]["results"][0];
    assert_eq!(res["ruleId"], "pdl-early-load");
    assert_eq!(
        res["locations"][0]["physicalLocation"]["region"]["startLine"],
        25
    );
}

#[test]
fn bad_traces_and_produced_files_are_errors_naming_the_line() {
    let e = pair::read_trace("{\"kernel\":\"k\"}\nnot json\n", "t.jsonl").unwrap_err();
    assert!(e.starts_with("t.jsonl:2:"), "{e}");
    let e = pair::read_produced("[[kernel]]\nname = 1\n", "p.toml").unwrap_err();
    assert!(e.starts_with("p.toml"), "{e}");
}

#[test]
fn bad_files_are_errors_for_that_file_and_the_others_are_still_checked() {
    let dir = std::env::temp_dir().join(format!("gridcheck-check-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = dir.join("notes.txt");
    std::fs::write(&text, "hello").unwrap();
    let cut = dir.join("cut.cubin");
    std::fs::write(&cut, b"\x7fELF\x02\x01\x01\x00").unwrap();
    let ptx = dir.join("k.ptx");
    std::fs::write(
        &ptx,
        ".version 9.0\n.target sm_80\n.visible .entry k()\n{\n\tret;\n}\n",
    )
    .unwrap();
    let missing = dir.join("missing.cubin");
    let opts = Options {
        jobs: 2,
        ..Options::default()
    };
    let r = gridcheck_check::check(&[text, cut, ptx, missing], &opts);
    assert_eq!(r.files.len(), 4);
    assert!(
        r.files[0].errors[0].contains("not a CUDA file"),
        "{:?}",
        r.files[0].errors
    );
    assert!(
        r.files[1].errors[0].contains("truncated"),
        "{:?}",
        r.files[1].errors
    );
    assert!(r.files[2].errors.is_empty(), "{:?}", r.files[2].errors);
    assert!(r.files[3].errors[0].contains("cannot read it"));
    assert_eq!(r.exit_code(), 2);
    let text = output::text(&r, true);
    assert!(text.contains("cut.cubin: error: truncated"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `tensormap.cu`'s secondary: a 128-byte tensor map at byte 0x70 of the
/// parameters (64-byte aligned in the constant bank), then three pointers.
fn tensormap() -> CubinResult {
    let params = [(0, 0x70, 128), (1, 0xf0, 8), (2, 0xf8, 8), (3, 0x100, 8)]
        .into_iter()
        .map(|(ordinal, offset, size)| Param {
            ordinal,
            offset,
            size,
        })
        .collect();
    let info = ParamInfo {
        params,
        cbank_offset: Some(0x210),
        cbank_size: Some(0x108),
    };
    let infos = BTreeMap::from([("_Z9secondary14CUtensorMap_stPKS_PfPKf".to_string(), info)]);
    check_text(&fixture("tensormap.sm_90.sass"), &infos, "sm_90").unwrap()
}

#[test]
fn a_prefetch_of_a_tensor_map_parameter_is_listed_and_never_paired() {
    let r = tensormap();
    let k = &r.kernels[0];
    let early: Vec<(&str, Vec<Option<u32>>, bool)> = k
        .early
        .iter()
        .map(|l| {
            (
                l.access.as_str(),
                ordinals(&l.provenance),
                l.reads_params_only,
            )
        })
        .collect();
    // Line 9 prefetches the `__grid_constant__` map (parameter 0 itself),
    // line 10 a map in global memory behind parameter 1.
    assert_eq!(
        early,
        [
            ("tensor-map prefetch", vec![Some(0)], true),
            ("tensor-map prefetch", vec![Some(1)], false)
        ]
    );
    // The previous kernel writes the address that both the parameter
    // map's first bytes and the pointer parameter hold: only the map in
    // global memory, which a kernel can write, is a finding.
    let x = "0000200c007f0000";
    let map = format!("{x}{}", "00".repeat(120));
    let trace = format!(
        "{{\"kernel\":\"_Z7primaryPf\",\"pdl\":false,\"stream\":\"0x1\",\"params\":[{{\"index\":0,\"offset\":0,\"size\":8,\"bytes\":\"{x}\"}}]}}\n\
         {{\"kernel\":\"_Z9secondary14CUtensorMap_stPKS_PfPKf\",\"pdl\":true,\"stream\":\"0x1\",\"params\":[\
         {{\"index\":0,\"offset\":0,\"size\":128,\"bytes\":\"{map}\"}},\
         {{\"index\":1,\"offset\":128,\"size\":8,\"bytes\":\"{x}\"}}]}}\n"
    );
    let files = vec![FileReport::of_cubin("tensormap.cubin", r)];
    let rep = report(files, &opts_with_trace(&trace));
    assert_eq!(rep.findings.len(), 1, "{:?}", rep.findings);
    assert!(
        rep.findings[0]
            .message
            .contains("[tensormap.cu:10]: tensor-map prefetch of parameter 1"),
        "{}",
        rep.findings[0].message
    );
    let text = output::text(&rep, true);
    assert!(
        text.contains("(the tensor map itself, a kernel parameter: only the host writes it)"),
        "{text}"
    );
    assert!(
        text.contains("early tensor-map prefetches of a parameter: 1"),
        "{text}"
    );
}
