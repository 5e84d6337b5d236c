//! Every subcommand of `gridcheck` run as a user runs it, on a machine
//! without a GPU (none here, or one hidden by an empty
//! `CUDA_VISIBLE_DEVICES`): help, run (the trials listed, the fixture
//! spec's model tier, its GPU trials not run and why), campaign (a batch on
//! the stand-in GPU, a batch worker that finds no GPU), check (a file that
//! is no CUDA binary, a cubin without nvdisasm), report (a committed
//! record) and info; `session.rs` runs `gridcheck session`.

mod common;

use std::path::Path;
use std::process::Command;

use common::{fresh_dir, gridcheck, one_program_campaign, root, text, without_a_gpu};

#[test]
fn help_lists_every_command_and_says_more_of_one() {
    let o = gridcheck(&["help"]);
    assert!(o.status.success(), "{}", text(&o));
    let listed = String::from_utf8_lossy(&o.stdout).to_string();
    for c in [
        "run", "campaign", "check", "report", "session", "info", "help",
    ] {
        assert!(
            listed
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("{c} "))),
            "`{c}` missing from:\n{listed}"
        );
    }
    let o = gridcheck(&["help", "session"]);
    assert!(
        o.status.success() && text(&o).contains("--dry-run"),
        "{}",
        text(&o)
    );
    let o = gridcheck(&["frobnicate"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no command `frobnicate`"));
}

#[test]
fn run_lists_the_trials_and_runs_the_model_tier_of_the_fixture_spec() {
    let o = gridcheck(&["run", "--tier", "model", "--list"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let listed: Vec<&str> = out.lines().filter(|l| l.ends_with(": test")).collect();
    assert!(listed.len() > 100, "{out}");
    assert!(listed.iter().all(|l| l.contains(" model/")), "{out}");
    let results =
        std::env::temp_dir().join(format!("gridcheck-cli-run-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&results);
    let o = gridcheck(&[
        "run",
        "--spec",
        "conformance/fixtures/spec",
        "--tier",
        "model",
        "--results",
        results.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let records = std::fs::read_to_string(&results).expect("the results file");
    assert!(records.lines().count() > 0, "no records");
    assert!(
        records.lines().all(|l| l.contains("\"tier\":\"model\"")),
        "{records}"
    );
    let _ = std::fs::remove_file(&results);
}

/// `gridcheck campaign` runs a batch on the campaign's stand-in GPU
/// (`GRIDCHECK_CAMPAIGN_FAKE_GPU`: nothing compiled, no device), its batch
/// workers started as `gridcheck campaign worker`.
#[test]
fn campaign_runs_its_workers_as_gridcheck_campaign() {
    use gridcheck_campaign::FAKE_GPU;
    let dir = fresh_dir("campaign");
    one_program_campaign(&dir);
    let rules = dir.join("rules.json");
    std::fs::write(&rules, r#"{"rules": []}"#).unwrap();
    let out = dir.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_gridcheck"))
        .args([
            "campaign",
            "run",
            dir.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .current_dir(root())
        .env(FAKE_GPU, &rules)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let records = std::fs::read_to_string(out.join("campaign.jsonl")).unwrap();
    assert_eq!(records.lines().count(), 1, "{records}");
    assert!(
        records.contains("\"worker\":0"),
        "run by a worker: {records}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn campaign_and_check_answer() {
    let o = gridcheck(&["campaign", "--help"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("leads"), "{}", text(&o));
    // A file that is no CUDA binary: an error naming it (exit 2), never a
    // panic; the help exits 0.
    let dir = std::env::temp_dir().join(format!("gridcheck-cli-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let junk = dir.join("not-cuda.bin");
    std::fs::write(&junk, b"this is not an ELF file").unwrap();
    let o = gridcheck(&["check", junk.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("not-cuda.bin"), "{}", text(&o));
    let o = gridcheck(&["check", "--help"]);
    assert!(o.status.success(), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn report_summary_reads_a_committed_record() {
    let rec = "records/nvidia-h100-80gb-hbm3/2026-11-25.2/results.jsonl.gz";
    let o = gridcheck(&["report", "summary", rec]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let runs = v["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1, "{v}");
    let o = gridcheck(&["report", "summary", "no/such/file.jsonl"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("no/such/file.jsonl"), "{}", text(&o));
}

#[test]
fn info_answers_without_a_gpu() {
    let o = gridcheck(&["info", "kernels-folder", "13.5"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "kernels-nvcc-13.5\n");
    let o = gridcheck(&["info", "nvcc-flags", "sm_90"]);
    let flags = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(flags.starts_with("-arch=sm_90 -rdc=true -I"), "{flags}");
    // Without a GPU the slug has no answer: exit 1 and the reason.
    if gridcheck_gpu_absent() {
        let o = gridcheck(&["info", "slug"]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(text(&o).contains("no GPU"), "{}", text(&o));
    } else {
        println!("a GPU is here: the slug's answer without one not checked");
    }
}

fn gridcheck_gpu_absent() -> bool {
    !Path::new("/proc/driver/nvidia/version").exists()
}

/// `gridcheck run` where no GPU can be seen: each GPU trial of the fixture
/// spec is ignored and recorded not-supported with the reason, none
/// passed; `--tier gpu`, a tier that must run, stops with the reason
/// (exit 2) and records nothing.
#[test]
fn run_without_a_gpu_records_why_its_gpu_trials_did_not_run() {
    let dir = fresh_dir("run-no-gpu");
    let results = dir.join("results.jsonl");
    let spec = "conformance/fixtures/spec";
    let r = results.to_str().unwrap();
    let o = without_a_gpu(&["run", "--spec", spec, "--results", r, "-q", "gpu/"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("gpu tier: 7 not-supported: "),
        "{}",
        text(&o)
    );
    let records = std::fs::read_to_string(&results).expect("the results file");
    let records: Vec<serde_json::Value> = records
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    // The fixture spec's seven tests, each a GPU trial.
    assert_eq!(records.len(), 7, "{records:?}");
    for r in &records {
        assert_eq!(r["tier"], "gpu", "{r}");
        assert_eq!(r["status"], "not-supported", "{r}");
        let why = r["message"].as_str().unwrap_or_default();
        assert!(
            why.strip_prefix("not run: ")
                .is_some_and(|reason| reason.len() > 5),
            "{r}"
        );
    }
    std::fs::remove_file(&results).unwrap();
    let o = without_a_gpu(&["run", "--spec", spec, "--tier", "gpu", "--results", r]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("the gpu tier was asked for and cannot run here: "),
        "{}",
        text(&o)
    );
    let written = std::fs::read_to_string(&results).unwrap_or_default();
    assert!(written.is_empty(), "recorded: {written}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A campaign's batch worker (`gridcheck campaign worker BATCH --run I`,
/// what the driver starts) where no GPU can be seen: it reports, on its
/// marked line, that nothing could run because there is no GPU, and exits
/// 4, the campaign's "nothing ran" (`crates/campaign/src/job.rs`).
#[test]
fn a_campaign_worker_without_a_gpu_says_so() {
    let dir = fresh_dir("campaign-no-gpu");
    one_program_campaign(&dir);
    let batch = gridcheck_campaign::batch_dir(&dir, 0);
    let o = without_a_gpu(&["campaign", "worker", batch.to_str().unwrap(), "--run", "0"]);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let report = out
        .lines()
        .find_map(|l| l.strip_prefix("GRIDCHECK-CAMPAIGN "))
        .unwrap_or_else(|| panic!("no report line: {}", text(&o)));
    let v: serde_json::Value = serde_json::from_str(report).expect("a JSON report");
    let reason = v["unusable"]["reason"].as_str().unwrap_or_default();
    assert!(reason.starts_with("no GPU: "), "{v}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The smallest cubin: an ELF64 header for `EM_CUDA` (190), sm_90 in its
/// flags, no sections.
fn empty_cubin() -> Vec<u8> {
    let mut h = vec![0u8; 64];
    h[..4].copy_from_slice(b"\x7fELF");
    (h[4], h[5], h[6]) = (2, 1, 1); // 64-bit, little-endian, version 1
    h[16] = 2; // an executable
    h[18..20].copy_from_slice(&190u16.to_le_bytes());
    h[20] = 1;
    h[48..52].copy_from_slice(&(90u32 << 8).to_le_bytes());
    h[52] = 64; // the header's size
    h[58] = 64; // a section header's size
    h
}

/// `gridcheck check` on a cubin where no nvdisasm can be found (a checkout
/// without `.toolchains/`, a PATH without it): exit 2, and the error names
/// the file and the command that installs one.
#[test]
fn check_without_nvdisasm_names_the_install_command() {
    let dir = fresh_dir("check-no-nvdisasm");
    // A checkout of its own: `[workspace]` beside `spec/`, no toolchains.
    std::fs::create_dir_all(dir.join("spec")).unwrap();
    std::fs::write(dir.join("Cargo.toml"), "[workspace]\nmembers = []\n").unwrap();
    let empty_path = dir.join("bin");
    std::fs::create_dir_all(&empty_path).unwrap();
    let cubin = dir.join("k.cubin");
    std::fs::write(&cubin, empty_cubin()).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_gridcheck"))
        .args(["check", cubin.to_str().unwrap()])
        .current_dir(&dir)
        .env("CARGO_MANIFEST_DIR", &dir)
        .env("PATH", &empty_path)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("k.cubin"), "{t}");
    assert!(
        t.contains("nvdisasm was not found") && t.contains("cargo xtask toolchain install 13.3"),
        "{t}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
