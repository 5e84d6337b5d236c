//! The pairing follows a chain of launches: Z writes p, A runs between,
//! B loads p before its wait. B may start before Z completed exactly when
//! A (launched with PDL) can trigger before its own wait, or has none.
//! Z and B are `fixtures/pdl_pair.sm_90.sass`'s primary (it writes its
//! parameter 0) and secondary (it loads its parameters 0 and 1 early); A
//! is a few lines of SASS, judged by the same analysis.

use std::collections::BTreeMap;
use std::path::PathBuf;

use gridcheck_check::cubin::{CubinResult, check_text};
use gridcheck_check::nvinfo::{Param, ParamInfo};
use gridcheck_check::pair::{self, CHAIN_LIMIT};
use gridcheck_check::report::FileReport;
use gridcheck_check::run::report;
use gridcheck_check::{Finding, Options, Report, output};

fn pointers(n: u32, ints: u32) -> ParamInfo {
    let mut params: Vec<Param> = (0..n)
        .map(|k| Param {
            ordinal: k,
            offset: 8 * k,
            size: 8,
        })
        .collect();
    params.extend((0..ints).map(|k| Param {
        ordinal: n + k,
        offset: 8 * n + 4 * k,
        size: 4,
    }));
    ParamInfo {
        cbank_size: params.iter().map(|p| p.offset + p.size).max(),
        params,
        cbank_offset: Some(0x210),
    }
}

fn pdl_pair() -> CubinResult {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pdl_pair.sm_90.sass");
    let text = std::fs::read_to_string(&p).unwrap();
    let infos = BTreeMap::from([
        ("_Z9secondaryPKfS0_Pfi".to_string(), pointers(3, 1)),
        ("_Z7primaryPfi".to_string(), pointers(1, 1)),
    ]);
    check_text(&text, &infos, "sm_90").unwrap()
}

const MIDDLE: &str = "_Z6middlePf";

/// A: one pointer parameter, no store, the body given.
fn middle(body: &str) -> CubinResult {
    let text = format!(".target sm_90\n.section .text.{MIDDLE},\"ax\",@progbits\n{body}");
    let infos = BTreeMap::from([(MIDDLE.to_string(), pointers(1, 0))]);
    check_text(&text, &infos, "sm_90").unwrap()
}

const TRIGGER_FIRST: &str = "/*0000*/ PREEXIT ;\n/*0010*/ ACQBULK ;\n/*0020*/ EXIT ;\n";
const WAIT_FIRST: &str = "/*0000*/ ACQBULK ;\n/*0010*/ PREEXIT ;\n/*0020*/ EXIT ;\n";
const NO_PDL: &str = "/*0000*/ NOP ;\n/*0010*/ EXIT ;\n";

const P: &str = "0000200c007f0000";
const Q: &str = "0000a00c007f0000";

fn launch(kernel: &str, pdl: bool, pointers: &[&str]) -> String {
    let params: Vec<String> = pointers
        .iter()
        .enumerate()
        .map(|(k, v)| {
            format!(
                "{{\"index\":{k},\"offset\":{},\"size\":8,\"bytes\":\"{v}\"}}",
                8 * k
            )
        })
        .collect();
    format!(
        "{{\"kernel\":\"{kernel}\",\"pdl\":{pdl},\"stream\":\"0x1\",\"params\":[{}]}}\n",
        params.join(",")
    )
}

/// Z (writes p), then `between` launches of A (given q, PDL as told), then
/// B (loads p early).
fn trace(between: usize, a: &str, a_pdl: bool) -> String {
    let mut t = launch("_Z7primaryPfi", false, &[P]);
    for _ in 0..between {
        t += &launch(a, a_pdl, &[Q]);
    }
    t + &launch(
        "_Z9secondaryPKfS0_Pfi",
        true,
        &[P, "0000400c007f0000", "0000600c007f0000"],
    )
}

/// The report with A's code (`None`: not among the checked files).
fn checked(a: Option<&str>, trace: &str) -> Report {
    let mut files = vec![FileReport::of_cubin("pdl_pair.cubin", pdl_pair())];
    if let Some(body) = a {
        files.push(FileReport::of_cubin("middle.cubin", middle(body)));
    }
    let opts = Options {
        trace: Some((
            pair::read_trace(trace, "t.jsonl").unwrap(),
            "t.jsonl".into(),
        )),
        ..Options::default()
    };
    report(files, &opts)
}

fn findings(a: Option<&str>, trace: &str) -> Vec<Finding> {
    checked(a, trace).findings
}

#[test]
fn a_kernel_between_that_triggers_before_its_wait_lets_the_load_race_the_one_before() {
    let f = findings(Some(TRIGGER_FIRST), &trace(1, MIDDLE, true));
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].message.contains(
            "before griddepcontrol.wait; the kernel two launches back, `_Z7primaryPfi`, \
             writes it (trace t.jsonl: launches 1, 2 and 3 on stream 0x1; its stores write through \
             that pointer); `_Z6middlePf` between can trigger before its wait (address 0x0000)"
        ),
        "{}",
        f[0].message
    );
    // The table says where A triggers before its wait.
    let text = output::text(&checked(Some(TRIGGER_FIRST), &trace(1, MIDDLE, true)), true);
    assert!(
        text.contains("wait 0x0010, trigger 0x0000 (0x0000 before the wait)"),
        "{text}"
    );
    // Two such kernels between: three launches back, each named.
    let f = findings(Some(TRIGGER_FIRST), &trace(2, MIDDLE, true));
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].message
            .contains("three launches back, `_Z7primaryPfi`")
            && f[0].message.contains("launches 1, 2, 3 and 4")
            && f[0].message.matches("between can trigger").count() == 2,
        "{}",
        f[0].message
    );
    // A kernel with no wait (no PDL instruction at all) can end first.
    let f = findings(Some(NO_PDL), &trace(1, MIDDLE, true));
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].message.contains("`_Z6middlePf` between has no wait"),
        "{}",
        f[0].message
    );
}

#[test]
fn a_kernel_between_that_waits_first_or_was_launched_without_pdl_ends_the_chain() {
    assert!(findings(Some(WAIT_FIRST), &trace(1, MIDDLE, true)).is_empty());
    assert!(findings(Some(TRIGGER_FIRST), &trace(1, MIDDLE, false)).is_empty());
    // Further back: a kernel that triggers early (its code not checked)
    // just before B, then A: the chain reaches Z through both only when
    // A triggers early too.
    let mut t = launch("_Z7primaryPfi", false, &[P]);
    t += &launch(MIDDLE, true, &[Q]);
    t += &launch("_Z5otherPf", true, &[Q]);
    t += &launch("_Z9secondaryPKfS0_Pfi", true, &[P]);
    assert!(findings(Some(WAIT_FIRST), &t).is_empty());
    let f = findings(Some(TRIGGER_FIRST), &t);
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].message.contains("three launches back"),
        "{}",
        f[0].message
    );
}

#[test]
fn a_kernel_between_whose_code_was_not_checked_counts_as_triggering_early() {
    let f = findings(None, &trace(1, MIDDLE, true));
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].message.contains(
            "`_Z6middlePf` between: its code was not among the checked files, so it counts as able \
             to trigger before its wait"
        ),
        "{}",
        f[0].message
    );
    // The chain is followed so far back and no further.
    assert_eq!(
        findings(None, &trace(CHAIN_LIMIT - 1, MIDDLE, true)).len(),
        1
    );
    assert!(findings(None, &trace(CHAIN_LIMIT, MIDDLE, true)).is_empty());
}
