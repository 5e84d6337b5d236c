//! A campaign's programs on disk. `cargo xtask fuzz gpu` writes batches of
//! programs (`DIR/batches/bNNNN/programs.jsonl`: each program's spec YAML
//! and the oracle's final states, [`CampaignProgram`]); each batch's
//! `batch.cu` (every program's kernels in a namespace of its own) is written
//! where it is compiled, into `batch.cubin`. [`Batch`] is one batch read
//! back with its programs' tests.

use std::path::{Path, PathBuf};

use gridcheck_spec::{Litmus, Profile, State, Test, TestBody};
use serde::{Deserialize, Serialize};

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
    /// The program's spec document, loaded through the spec loader.
    fn spec(&self) -> Result<gridcheck_spec::Spec, String> {
        let file = PathBuf::from(format!("{}.yaml", self.name));
        gridcheck_spec::load_sources(&[(file, self.yaml.clone())], None)
            .map_err(|e| format!("program {}: {e}", self.name))
    }

    /// The test.
    pub fn test(&self) -> Result<Test, String> {
        self.spec()?
            .tests
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

    /// The profile of its one rule (CDP2 where it names none).
    pub fn profile(&self) -> Profile {
        self.spec()
            .ok()
            .and_then(|s| s.rules.first().map(|r| r.profile))
            .unwrap_or(Profile::Cdp2)
    }

    /// A program of `l` named `name`, its expectation and states the
    /// axiomatic model's; `None` where the model cannot decide it.
    pub fn decided(profile: Profile, name: &str, l: &Litmus) -> Option<CampaignProgram> {
        let o = gridcheck_axiom::check(l).ok()?;
        let mut l = l.clone();
        l.expect = o.verdict;
        Some(CampaignProgram {
            yaml: gridcheck_spec::render::litmus_spec_yaml(profile, name, &l),
            name: name.to_string(),
            states: o.states.into_iter().collect(),
            oracle: "axiom".into(),
        })
    }
}

/// The profile a program of `l` is written under, as the generator picks
/// it: CDP1 where it synchronizes on the device, PDL where a host kernel is
/// a PDL secondary, else CDP2.
pub fn profile_of(l: &Litmus) -> Profile {
    let ops = || {
        l.kernels
            .iter()
            .flat_map(|k| &k.threads)
            .flat_map(|t| &t.ops)
    };
    if ops().any(|o| matches!(o, gridcheck_spec::Op::DeviceSynchronize { .. })) {
        Profile::Cdp1
    } else if l
        .kernels
        .iter()
        .any(|k| k.launch == gridcheck_spec::KernelLaunch::Host { pdl: true })
    {
        Profile::Pdl
    } else {
        Profile::Cdp2
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
/// kernels in its namespace. A file that already says the same is left as
/// it is, so that a batch compiled elsewhere and copied here keeps its cubin.
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
    if std::fs::read_to_string(&f).is_ok_and(|old| old == cu) {
        return Ok(());
    }
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

/// A batch's programs with their tests, ready to run and classify.
pub struct Batch {
    /// Its directory's name (`b0042`).
    pub name: String,
    pub dir: PathBuf,
    pub programs: Vec<CampaignProgram>,
    pub parsed: Vec<Result<(Test, Litmus), String>>,
}

impl Batch {
    pub fn read(dir: &Path) -> Result<Batch, String> {
        let programs = read_batch(dir)?;
        let parsed = programs.iter().map(CampaignProgram::litmus).collect();
        Ok(Batch {
            name: dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            dir: dir.to_path_buf(),
            programs,
            parsed,
        })
    }

    /// The litmus body of program `i`, if it loads.
    pub fn litmus(&self, i: usize) -> Option<&Litmus> {
        self.parsed.get(i)?.as_ref().ok().map(|(_, l)| l)
    }
}

/// A dry run's check of a compiled batch: every program loads, and the
/// cubin holds each program's kernels.
pub fn dry_check(b: &Batch) -> Result<(), String> {
    let cubin = b.dir.join(CUBIN);
    let bytes =
        std::fs::read(&cubin).map_err(|e| format!("cannot read {}: {e}", cubin.display()))?;
    // The ELF string table: every symbol, NUL-terminated.
    let strings: std::collections::HashSet<&[u8]> = bytes.split(|&c| c == 0).collect();
    for (p, t) in b.programs.iter().zip(&b.parsed) {
        let (t, l) = t.as_ref().map_err(Clone::clone)?;
        for k in &l.kernels {
            let sym = gridcheck_kernelgen::kernel_symbol(&t.name, &k.name);
            if !strings.contains(sym.as_bytes()) {
                return Err(format!(
                    "{}: kernel `{sym}` of {} is not in it",
                    cubin.display(),
                    p.name
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A program whose host kernel `k0`'s thread runs `ops` and whose
    /// device kernel `k1` loads x, with the axiomatic model's states.
    pub fn program(name: &str, ops: &str) -> CampaignProgram {
        let yaml = format!(
            "rules:\n  - id: cdp2.t.{name}\n    source: {{ seed: s.txt, section: \"1\" }}\n    quote: q\n    profile: cdp2\n    tests: [{name}]\ntests:\n  - name: {name}\n    kind: litmus\n    memory: {{ x: 0 }}\n    kernels:\n      - kernel: k0\n        launch: host\n        threads:\n          t0: [{ops}]\n      - kernel: k1\n        launch: device\n        threads:\n          t0: [load r0 x]\n    condition: exists x == 1\n    expect: allowed\n"
        );
        let mut p = CampaignProgram {
            name: name.into(),
            yaml,
            states: Vec::new(),
            oracle: "axiom".into(),
        };
        if let Ok((_, l)) = p.litmus() {
            p.states = gridcheck_axiom::check(&l)
                .map(|o| o.states.into_iter().collect())
                .unwrap_or_default();
        }
        p
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
        assert_eq!(ps[0].profile(), Profile::Cdp2);
        std::fs::write(b.join(PROGRAMS), "{\"name\": 1}\n").unwrap();
        let e = read_batch(&b).unwrap_err();
        assert!(e.contains("programs.jsonl:1: not a program"), "{e}");
        write_batch(&b, &ps).unwrap();
        let root = gridcheck_toolchain::checkout_root(env!("CARGO_MANIFEST_DIR"));
        let Ok(nvcc) = gridcheck_toolchain::find_nvcc(&root) else {
            eprintln!("no nvcc: the batch is not compiled");
            return;
        };
        crate::compile::batch(&nvcc, &root.join(gridcheck_kernelgen::INCLUDE_DIR), &b, 300)
            .unwrap();
        let batch = Batch::read(&b).unwrap();
        dry_check(&batch).unwrap();
        // A program whose kernels are not in the module is caught.
        let mut other = batch;
        other.programs[0] = program("fuzz-9-7", "store x 1, launch k1");
        other.parsed[0] = other.programs[0].litmus();
        assert!(dry_check(&other).unwrap_err().contains("fuzz_9_7__k0"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
