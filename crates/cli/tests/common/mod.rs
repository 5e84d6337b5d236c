//! What the tests of the `gridcheck` binary share: the checkout, the
//! binary run with or without a GPU to see, fresh folders, its output, and
//! a campaign of one program.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the checkout")
}

pub fn gridcheck(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gridcheck"))
        .args(args)
        .current_dir(root())
        .env_remove("OUT")
        .output()
        .expect("gridcheck runs")
}

/// `gridcheck ARGS` where no GPU can be seen, whatever the machine.
pub fn without_a_gpu(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gridcheck"))
        .args(args)
        .current_dir(root())
        .env("CUDA_VISIBLE_DEVICES", "")
        .env_remove("GRIDCHECK_REQUIRE_TIERS")
        .env_remove("OUT")
        .output()
        .expect("gridcheck runs")
}

/// A fresh temporary folder of this test process.
pub fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gridcheck-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A campaign folder in `dir` of one batch of one program (a store, then
/// a tail launch whose child loads it), with the model's states.
pub fn one_program_campaign(dir: &Path) {
    use gridcheck_campaign::{CampaignProgram, batch_dir, write_batch};
    let yaml = "rules:\n  - id: cdp2.t.c-0\n    source: { seed: s.txt, section: \"1\" }\n    \
                quote: q\n    profile: cdp2\n    tests: [c-0]\ntests:\n  - name: c-0\n    \
                kind: litmus\n    memory: { x: 0 }\n    kernels:\n      - kernel: k0\n        \
                launch: host\n        threads:\n          t0: [store x 1, launch k1 tail]\n      \
                - kernel: k1\n        launch: device\n        threads:\n          t0: [load r0 x]\n    \
                condition: exists x == 1\n    expect: allowed\n";
    let mut p = CampaignProgram {
        name: "c-0".into(),
        yaml: yaml.into(),
        states: Vec::new(),
        oracle: "axiom".into(),
    };
    let (_, l) = p.litmus().expect("the program's test");
    p.states = gridcheck_axiom::check(&l)
        .unwrap()
        .states
        .into_iter()
        .collect();
    write_batch(&batch_dir(dir, 0), &[p]).unwrap();
}
