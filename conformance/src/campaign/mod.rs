//! `conformance campaign DIR`: random programs at scale on one GPU. `cargo
//! xtask fuzz gpu` writes batches of programs (`DIR/batches/bNNNN/`: one
//! `batch.cu` holding every program of the batch, one namespace each, and
//! `programs.jsonl`, each program's spec YAML and the axiomatic model's
//! final states); this command
//!
//! 1. compiles each batch once (`compile.rs`: `nvcc -rdc=true -cubin`, then
//!    `-dlink -cubin -lcudadevrt`), batches in parallel, each nvcc under a
//!    time limit;
//! 2. runs each batch in one worker process (`batch_worker.rs`, driven by
//!    `run.rs`: the module loaded
//!    once, every program a few launches of many instances, each launch
//!    watched), one JSON line a program appended to `campaign.jsonl` as it
//!    finishes; a worker that stops (a hang, a fault, a kill at the
//!    deadline) is restarted after the program in flight, which is
//!    classified;
//! 3. classifies (`findings.rs`: violation, unmodeled, hang, launch-error),
//!    groups findings by shape, shrinks one program of each group on the
//!    GPU (`shrink.rs`) and writes `findings.jsonl`, one `.yaml` a distinct
//!    finding and `summary.txt`.
//!
//! `--dry-run` compiles and checks every batch (each program's YAML loads,
//! its kernels are in the cubin's source) and runs nothing on a GPU.

mod args;
mod batch_worker;
mod compile;
pub mod findings;
mod report;
mod run;
pub mod shrink;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gridcheck_spec::{Litmus, State, Test, TestBody};
use serde::{Deserialize, Serialize};

pub use args::{Args, USAGE};
pub use batch_worker::{FAKE_GPU, worker_main};

/// A batch's directory under the campaign's.
pub const BATCHES: &str = "batches";
/// A batch's programs, one JSON line each ([`CampaignProgram`]).
pub const PROGRAMS: &str = "programs.jsonl";
/// A batch's source and its linked module.
pub const SOURCE: &str = "batch.cu";
pub const CUBIN: &str = "batch.cubin";

/// One program of a campaign, as `cargo xtask fuzz gpu` writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CampaignProgram {
    /// The test name (its kernels' symbols start with it).
    pub name: String,
    /// A whole spec document holding the test (`render::litmus_spec_yaml`).
    pub yaml: String,
    /// The final states the oracle allows, keyed as `Litmus::observables`.
    pub states: Vec<State>,
    /// Which oracle(s) gave `states`: `axiom` (the axiomatic model).
    pub oracle: String,
}

impl CampaignProgram {
    /// The test, loaded through the spec loader.
    pub fn test(&self) -> Result<Test, String> {
        let file = PathBuf::from(format!("{}.yaml", self.name));
        let spec = gridcheck_spec::load_sources(&[(file, self.yaml.clone())], None)
            .map_err(|e| format!("program {}: {e}", self.name))?;
        spec.tests
            .into_iter()
            .next()
            .ok_or_else(|| format!("program {}: its YAML holds no test", self.name))
    }

    /// The test and its litmus body.
    pub fn litmus(&self) -> Result<(Test, Litmus), String> {
        let t = self.test()?;
        match &t.body {
            TestBody::Litmus(l) => {
                let l = l.clone();
                Ok((t, l))
            }
            _ => Err(format!("program {} is not a litmus test", self.name)),
        }
    }
}

/// The directory of batch `i`.
pub fn batch_dir(dir: &Path, i: usize) -> PathBuf {
    dir.join(BATCHES).join(format!("b{i:04}"))
}

/// Writes one batch's `programs.jsonl` (its `batch.cu` is written where it
/// is compiled, [`write_source`]: the programs travel smaller than their
/// CUDA).
pub fn write_batch(dir: &Path, programs: &[CampaignProgram]) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut lines = String::new();
    for p in programs {
        p.litmus()?;
        lines += &serde_json::to_string(p).map_err(|e| e.to_string())?;
        lines.push('\n');
    }
    let f = dir.join(PROGRAMS);
    std::fs::write(&f, lines).map_err(|e| format!("cannot write {}: {e}", f.display()))
}

/// Writes a batch's `batch.cu` from its programs: each program's generated
/// kernels in its namespace.
pub fn write_source(dir: &Path) -> Result<(), String> {
    let mut sources = Vec::new();
    for p in read_batch(dir)? {
        let (t, l) = p.litmus()?;
        sources.push((
            p.name.clone(),
            gridcheck_kernelgen::generate(&t, &l, "", &[]),
        ));
    }
    let cu =
        gridcheck_kernelgen::batch_source(sources.iter().map(|(n, s)| (n.as_str(), s.as_str())));
    let f = dir.join(SOURCE);
    std::fs::write(&f, cu).map_err(|e| format!("cannot write {}: {e}", f.display()))
}

/// Reads a batch's programs; an unreadable line is an error naming the
/// file and line.
pub fn read_batch(dir: &Path) -> Result<Vec<CampaignProgram>, String> {
    let f = dir.join(PROGRAMS);
    let text =
        std::fs::read_to_string(&f).map_err(|e| format!("cannot read {}: {e}", f.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l)
                .map_err(|e| format!("{}:{}: not a program: {e}", f.display(), i + 1))
        })
        .collect()
}

/// Every batch directory of a campaign, in order.
pub fn batches(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let root = dir.join(BATCHES);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&root)
        .map_err(|e| {
            format!(
                "cannot read {} (write it with `cargo xtask fuzz gpu`): {e}",
                root.display()
            )
        })?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join(PROGRAMS).is_file())
        .collect();
    v.sort();
    if v.is_empty() {
        return Err(format!("no batches in {}", root.display()));
    }
    Ok(v)
}

/// `conformance campaign ...`.
pub fn main(argv: &[String], root: &Path) -> ExitCode {
    if argv.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let a = match Args::parse(argv, root) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run::campaign(&a) {
        Ok(clean) if clean => ExitCode::SUCCESS,
        Ok(_) => ExitCode::from(1),
        Err(e) => {
            eprintln!("campaign: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(name: &str, ops: &str) -> CampaignProgram {
        let yaml = format!(
            "rules:\n  - id: cdp2.t.{name}\n    source: {{ seed: s.txt, section: \"1\" }}\n    quote: q\n    profile: cdp2\n    tests: [{name}]\ntests:\n  - name: {name}\n    kind: litmus\n    memory: {{ x: 0 }}\n    kernels:\n      - kernel: k0\n        launch: host\n        threads:\n          t0: [{ops}]\n      - kernel: k1\n        launch: device\n        threads:\n          t0: [load r0 x]\n    condition: exists x == 1\n    expect: allowed\n"
        );
        CampaignProgram {
            name: name.into(),
            yaml,
            states: Vec::new(),
            oracle: "axiom".into(),
        }
    }

    /// A batch of two programs written, read back, and (where nvcc is
    /// found, as for the static tier) compiled into one module holding
    /// both programs' kernels.
    #[test]
    fn a_batch_is_written_read_and_compiled_into_one_module() {
        let dir = std::env::temp_dir().join(format!("gridcheck-campaign-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let b = batch_dir(&dir, 0);
        let ps = [
            program("fuzz-9-0", "store x 1, launch k1 tail"),
            program("fuzz-9-1", "launch k1, store x 1"),
        ];
        write_batch(&b, &ps).unwrap();
        assert_eq!(read_batch(&b).unwrap(), ps);
        assert_eq!(batches(&dir).unwrap(), std::slice::from_ref(&b));
        std::fs::write(b.join(PROGRAMS), "{\"name\": 1}\n").unwrap();
        let e = read_batch(&b).unwrap_err();
        assert!(e.contains("programs.jsonl:1: not a program"), "{e}");
        write_batch(&b, &ps).unwrap();
        let root = gridcheck_toolchain::checkout_root(env!("CARGO_MANIFEST_DIR"));
        let Ok(nvcc) = gridcheck_toolchain::find_nvcc(&root) else {
            eprintln!("no nvcc: the batch is not compiled");
            return;
        };
        compile::batch(&nvcc, &root.join(gridcheck_kernelgen::INCLUDE_DIR), &b, 300).unwrap();
        let batch = run::Batch::read(&b).unwrap();
        run::dry_check(&batch).unwrap();
        // A program whose kernels are not in the module is caught.
        let mut other = batch;
        other.programs[0] = program("fuzz-9-7", "store x 1, launch k1");
        other.parsed[0] = other.programs[0].litmus();
        assert!(run::dry_check(&other).unwrap_err().contains("fuzz_9_7__k0"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
