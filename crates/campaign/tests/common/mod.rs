//! What the stand-in GPU's end-to-end tests share: programs, a fresh
//! directory with the stand-in's rules, `gridcheck-campaign` run on it, and
//! its JSON-lines files read back.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use gridcheck_campaign::{CampaignProgram, FAKE_GPU};
use serde_json::Value;

/// A program whose host kernel `k0`'s thread runs `k0` and whose device
/// kernel `k1` loads x, with the axiomatic model's states.
pub fn program(name: &str, k0: &str) -> CampaignProgram {
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

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fresh directory for one test, with the stand-in's `rules`.
pub fn fresh(name: &str, rules: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("gridcheck-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("rules.json");
    std::fs::write(&file, rules).unwrap();
    (dir, file)
}

/// `gridcheck-campaign ARGS` on the stand-in: exit code and output.
pub fn campaign(rules: &Path, args: &[&str]) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_gridcheck-campaign"))
        .args(args)
        .args(["--root", &root().display().to_string()])
        .env(FAKE_GPU, rules)
        .output()
        .unwrap();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.code(), text)
}

pub fn lines(f: &Path) -> Vec<Value> {
    std::fs::read_to_string(f)
        .unwrap_or_else(|e| panic!("{}: {e}", f.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub fn by_name<'a>(records: &'a [Value], name: &str) -> &'a Value {
    records
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no record of {name}"))
}
