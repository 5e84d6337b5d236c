//! `conformance campaign` end to end without a GPU: a small campaign
//! compiled with the nvcc found (as the static tier; left out without one)
//! and run by workers on a fake GPU (`GRIDCHECK_CAMPAIGN_FAKE_GPU`: a program
//! matching a known hang hangs, every other shows an allowed state). The
//! driver restarts the worker after each hang, caps the known hang, groups
//! the findings and shrinks the hang by rebuilding and rerunning candidates.

use std::path::PathBuf;
use std::process::Command;

use conformance::campaign::{self, CampaignProgram, FAKE_GPU};

fn program(name: &str, k0: &str) -> CampaignProgram {
    let yaml = format!(
        "rules:\n  - id: cdp2.t.{name}\n    source: {{ seed: s.txt, section: \"1\" }}\n    quote: q\n    profile: cdp2\n    tests: [{name}]\ntests:\n  - name: {name}\n    kind: litmus\n    memory: {{ x: 0 }}\n    kernels:\n      - kernel: k0\n        launch: host\n        threads:\n          t0: [{k0}]\n      - kernel: k1\n        launch: device\n        threads:\n          t0: [load r0 x]\n    condition: exists x == 1\n    expect: allowed\n"
    );
    let mut p = CampaignProgram {
        name: name.into(),
        yaml,
        states: Vec::new(),
        oracle: "axiom".into(),
    };
    let (_, l) = p.litmus().unwrap();
    p.states = gridcheck_axiom::check(&l)
        .unwrap()
        .states
        .into_iter()
        .collect();
    p
}

#[test]
fn a_campaign_on_a_fake_gpu_restarts_caps_groups_and_shrinks() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    if gridcheck_toolchain::find_nvcc(&root).is_err() {
        eprintln!("no nvcc: the campaign is not compiled (as the static tier)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("gridcheck-campaign-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let programs = [
        program("c-0", "store x 1, launch k1 tail"),
        program("c-1", "store x 1, record e1, launch k1, record e2"),
        program("c-4", "launch k1 tail, store x 1"),
        program("c-2", "launch k1, store x 1"),
        program("c-3", "record e1, store x 1, record e2, launch k1"),
    ];
    campaign::write_batch(&campaign::batch_dir(&dir, 0), &programs[..3]).unwrap();
    campaign::write_batch(&campaign::batch_dir(&dir, 1), &programs[3..]).unwrap();
    let out = dir.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .arg("campaign")
        .arg(&dir)
        .args([
            "--root",
            &root.display().to_string(),
            "--out",
            &out.display().to_string(),
        ])
        .args(["--jobs", "2", "--hang-cap", "1", "--shrink", "120"])
        .env(FAKE_GPU, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    // Findings: exit code 1.
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{stderr}");
    let lines = std::fs::read_to_string(out.join("campaign.jsonl")).unwrap();
    let mut classes: Vec<(String, String)> = lines
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["name"].as_str().unwrap().to_string(),
                v["class"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    classes.sort();
    // c-1 hangs (its worker ends, and the next one runs c-4, the program
    // after it, which is not blamed); c-3, of the same known hang, is
    // skipped once the cap of one is reached.
    let want = [
        ("c-0", "pass"),
        ("c-1", "hang"),
        ("c-2", "pass"),
        ("c-3", "not-run"),
        ("c-4", "pass"),
    ];
    assert_eq!(
        classes,
        want.map(|(a, b)| (a.to_string(), b.to_string())),
        "{lines}"
    );
    let findings = std::fs::read_to_string(out.join("findings.jsonl")).unwrap();
    assert_eq!(findings.lines().count(), 1, "{findings}");
    let f: serde_json::Value = serde_json::from_str(findings.lines().next().unwrap()).unwrap();
    assert_eq!(f["class"], "hang");
    let yaml = std::fs::read_to_string(f["yaml"].as_str().unwrap()).unwrap();
    // Shrunk: the hang persists with the two records, the launch is gone.
    assert!(
        f["shrink_steps"].as_u64().unwrap() >= 1,
        "{findings}\n{yaml}"
    );
    assert!(
        yaml.contains("record e1") && yaml.contains("record e2"),
        "{yaml}"
    );
    assert!(!yaml.contains("kernel: k1"), "{yaml}");
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    assert!(
        summary.contains("5 programs, 4 run on the GPU"),
        "{summary}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
