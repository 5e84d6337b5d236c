//! Tests of the Toolchains page: hand-made runs with variants, machine-code
//! and compile records of several toolchains, and records that cannot be
//! merged.

use super::*;
use crate::results::Machine;
use gridcheck_report::{CompileSummary, Environment, ToolchainRecord, TrialId};

fn toolchain(release: &str) -> ToolchainRecord {
    ToolchainRecord {
        release: release.into(),
        nvcc: format!("{release}.37"),
        devrt: format!(
            "nvidia-cuda-runtime {release}.37, /t/libcudadevrt.a (1 bytes, fnv1a64 00000000000000aa)"
        ),
        source: format!(".toolchains/{release}"),
        disassembler: None,
    }
}

/// A GPU record, its kernels built by `release` (`None`: not recorded).
fn gpu(test: &str, status: Status, release: Option<&str>, run: &str) -> TrialRecord {
    let mut r = TrialRecord::new(TrialId::gpu("sm_90", "r.a", test), status, "m");
    r.environment = Some(Environment {
        gpu: "H100".into(),
        sm: "sm_90".into(),
        driver: "13.0".into(),
        nvcc: Some("13.0.88".into()),
        driver_version: None,
        tuning: None,
        tuning_file: None,
        device: None,
        binary: None,
        toolchain: release.map(toolchain),
    });
    r.run_id = Some(run.into());
    r
}

/// A machine-code record of `release`, or a compile record when `sm` is
/// `None`.
fn compiled(release: &str, sm: Option<&str>, test: &str, status: Status, run: &str) -> TrialRecord {
    let trial = match sm {
        Some(sm) => TrialId::sass(release, sm, "r.a", test),
        None => TrialId::compile("r.a", test),
    };
    let mut r = TrialRecord::new(trial, status, "m");
    r.compile = Some(CompileSummary {
        nvcc: format!("{release}.37"),
        command: "nvcc".into(),
        success: true,
        output: String::new(),
        toolchain: Some(toolchain(release)),
    });
    r.run_id = Some(run.into());
    r
}

fn run(slug: &str, date: &str, variant: Option<&str>, records: Vec<TrialRecord>) -> Run {
    let dir = match variant {
        Some(v) => PathBuf::from(format!("/r/records/{slug}/{date}/toolchains/{v}")),
        None => PathBuf::from(format!("/r/records/{slug}/{date}")),
    };
    Run {
        slug: slug.into(),
        date: date.into(),
        results: dir.join("results.jsonl"),
        dir,
        machine: Machine {
            gpu: "H100".into(),
            driver: "580".into(),
            nvcc: "13.0.88".into(),
            toolchain: None,
        },
        records,
        mutants: vec![],
        tuning_search: vec![],
        variant: variant.map(str::to_string),
        variants: vec![],
    }
}

#[test]
fn without_variants_or_machine_code_the_page_says_so() {
    let page = render(
        &[run(
            "h100",
            "2026-11-26",
            None,
            vec![gpu("t", Status::Pass, None, "a")],
        )],
        Path::new("/r"),
    );
    assert!(page.starts_with("# Toolchains\n"), "{page}");
    assert!(
        page.contains("No recorded run has toolchain variants"),
        "{page}"
    );
    assert!(
        page.contains("No recorded run has machine-code or compile trials"),
        "{page}"
    );
}

#[test]
fn the_newest_run_with_variants_is_a_column_a_toolchain() {
    let mut older = run(
        "h100",
        "2026-11-25",
        None,
        vec![gpu("t", Status::Pass, None, "o")],
    );
    older.variants = vec![run(
        "h100",
        "2026-11-25",
        Some("nvcc-13.9"),
        vec![gpu("t", Status::Pass, Some("13.9"), "o9")],
    )];
    let mut newest = run(
        "h100",
        "2026-11-26",
        None,
        vec![
            gpu("t", Status::Pass, None, "b"),
            gpu("u", Status::Pass, None, "b"),
            gpu("v", Status::Xfail, None, "b"),
        ],
    );
    newest.variants = vec![run(
        "h100",
        "2026-11-26",
        Some("nvcc-13.5"),
        vec![
            gpu("t", Status::Pass, Some("13.5"), "v"),
            gpu("u", Status::Fail, Some("13.5"), "v"),
            gpu("v", Status::Xfail, Some("13.5"), "v"),
        ],
    )];
    // A run without variants after it: not the one shown.
    let last = run(
        "h100",
        "2026-11-27",
        None,
        vec![gpu("t", Status::Pass, None, "c")],
    );
    let page = render(&[older, newest, last], Path::new("/r"));
    assert!(page.contains("### H100 — 2026-11-26"), "{page}");
    assert!(
        !page.contains("nvcc-13.9"),
        "only the newest run with variants: {page}"
    );
    assert!(
        page.contains("<th>the run<br><small>toolchain not recorded</small></th><th>nvcc-13.5<br>nvcc 13.5.37<br><small>device runtime 13.5.37</small></th>"),
        "{page}"
    );
    assert!(
        page.contains("- nvcc-13.5: kernels built by nvcc 13.5.37 (release 13.5), device runtime nvidia-cuda-runtime 13.5.37 (fnv1a64 00000000000000aa); nvcc 13.0.88 where the harness ran; `records/h100/2026-11-26/toolchains/nvcc-13.5/results.jsonl`"),
        "{page}"
    );
    assert!(
        page.contains("<tr><td><code>gpu/sm_90/r.a/u</code></td><td><span class=\"gc-status gc-pass\">pass</span></td><td><span class=\"gc-status gc-fail\">fail</span></td></tr>"),
        "{page}"
    );
    assert!(
        !page.contains("<code>gpu/sm_90/r.a/t</code>"),
        "same in all: {page}"
    );
    assert!(
        page.contains(
            "1 trial(s) differ between the columns (shown above); 2 are the same in all."
        ),
        "{page}"
    );
    assert!(
        page.contains("<tr><td><span class=\"gc-status gc-fail\">fail</span> (trials)</td><td>0</td><td>1</td></tr>"),
        "{page}"
    );
    assert!(
        page.contains("<tr><td><span class=\"gc-status gc-pass\">pass</span> (trials)</td><td>2</td><td>1</td></tr>"),
        "{page}"
    );
}

#[test]
fn machine_code_rows_across_toolchains_from_every_run() {
    // A no-GPU record with 13.0 and 13.10; an older one with 13.0 (left
    // out: the newest run of a toolchain) and a variant with 13.5.
    let no_gpu = run(
        "no-gpu",
        "2026-11-26",
        None,
        vec![
            compiled("13.0", Some("sm_90"), "t", Status::Pass, "n"),
            compiled("13.0", Some("sm_90"), "u", Status::Pass, "n"),
            compiled("13.0", None, "c", Status::Xfail, "n"),
            compiled("13.10", Some("sm_90"), "t", Status::Pass, "n10"),
        ],
    );
    let old = run(
        "no-gpu",
        "2026-11-20",
        None,
        vec![compiled("13.0", Some("sm_90"), "t", Status::Fail, "old")],
    );
    let mut gpu_run = run(
        "h100",
        "2026-11-26",
        None,
        vec![gpu("t", Status::Pass, None, "g")],
    );
    gpu_run.variants = vec![run(
        "h100",
        "2026-11-26",
        Some("nvcc-13.5"),
        vec![
            compiled("13.5", Some("sm_90"), "t", Status::Fail, "v"),
            compiled("13.5", Some("sm_90"), "u", Status::Pass, "v"),
        ],
    )];
    let page = render(&[old, no_gpu, gpu_run], Path::new("/r"));
    let (_, mc) = page
        .split_once("## Machine code and compile trials by toolchain")
        .unwrap();
    let heads: Vec<&str> = mc
        .match_indices("<th>1")
        .map(|(i, _)| &mc[i + 4..i + 9])
        .collect();
    assert_eq!(heads, ["13.0<", "13.5<", "13.10"], "{mc}");
    assert!(
        mc.contains("<th>13.5<br><small>nvcc 13.5.37</small></th>"),
        "{mc}"
    );
    assert!(mc.contains("- 13.0: nvcc 13.0.37 (release 13.0)"), "{mc}");
    assert!(
        mc.contains("from no-gpu 2026-11-26, `records/no-gpu/2026-11-26/results.jsonl`"),
        "{mc}"
    );
    assert!(mc.contains("from h100 2026-11-26 (nvcc-13.5)"), "{mc}");
    // t differs (13.5 fails); c is not a pass; u passes wherever it ran.
    assert!(
        mc.contains("<tr><td><code>sass/sm_90/r.a/t</code></td><td><span class=\"gc-status gc-pass\">pass</span></td><td><span class=\"gc-status gc-fail\">fail</span></td><td><span class=\"gc-status gc-pass\">pass</span></td></tr>"),
        "{mc}"
    );
    assert!(mc.contains("<code>static/r.a/c</code></td><td><span class=\"gc-status gc-xfail\">xfail</span></td><td>—</td><td>—</td>"), "{mc}");
    assert!(!mc.contains("<code>sass/sm_90/r.a/u</code>"), "{mc}");
    assert!(mc.contains("2 row(s) differ across toolchains or are not a pass (shown above); 1 pass under every toolchain that has them."), "{mc}");
}

#[test]
fn records_that_cannot_be_merged_are_named_on_the_page() {
    // One variant whose records hold one trial under two toolchains.
    let mut r = run(
        "h100",
        "2026-11-26",
        None,
        vec![gpu("t", Status::Pass, None, "a")],
    );
    r.variants = vec![run(
        "h100",
        "2026-11-26",
        Some("mixed"),
        vec![
            compiled("13.0", Some("sm_90"), "t", Status::Pass, "m"),
            compiled("13.5", Some("sm_90"), "t", Status::Pass, "m"),
        ],
    )];
    let page = render(&[r], Path::new("/r"));
    assert!(
        page.contains("**These records cannot be merged**: `sass/13.0/sm_90/r.a/t`"),
        "{page}"
    );
}
