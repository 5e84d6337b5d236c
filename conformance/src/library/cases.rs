//! The library tier's cases, from one table (`conformance/library.toml`):
//! the targets, sizes, environments and calls a run of each algorithm, as
//! a full set (`--tier library`) and the default run's smaller one, with
//! an algorithm's own values where it needs them. A case is named
//! `n<size>-<env>` (`n100000-stress`).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::contract::TARGETS;

/// The table, relative to the checkout.
pub const CASES_FILE: &str = "conformance/library.toml";

/// The environments a program knows (`--env`).
pub const ENVS: [&str; 5] = ["quiet", "back-to-back", "stress", "burst", "delay"];

/// One set of cases.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Set {
    pub targets: Vec<String>,
    pub sizes: Vec<u64>,
    pub envs: Vec<String>,
    pub reps: u64,
    /// The rounds of a failing case's controls, each after the first
    /// beside the case's own build run again (`controls.rs`); 1 when not
    /// given.
    #[serde(default = "one")]
    pub control_rounds: u64,
}

fn one() -> u64 {
    1
}

/// An algorithm's own values.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
struct Own {
    sizes: Option<Vec<u64>>,
    envs: Option<Vec<String>>,
    reps: Option<u64>,
}

/// The whole table.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cases {
    full: Set,
    default: Set,
    #[serde(default)]
    algorithm: BTreeMap<String, Own>,
}

/// One case of an algorithm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    pub size: u64,
    pub env: String,
    pub reps: u64,
    /// The set's `control_rounds`.
    pub control_rounds: u64,
}

impl Case {
    /// The case's part of a trial name: `n100000-stress`.
    pub fn name(&self) -> String {
        format!("n{}-{}", self.size, self.env)
    }
}

impl Cases {
    /// The checkout's table, or an error naming the file (and the line or
    /// the field).
    pub fn load(root: &Path) -> Result<Cases, String> {
        let path = root.join(CASES_FILE);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Cases::parse(&text, &path.display().to_string())
    }

    pub fn parse(text: &str, file: &str) -> Result<Cases, String> {
        let c: Cases = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| format!(":{}", 1 + text[..s.start].matches('\n').count()))
                .unwrap_or_default();
            format!("{file}{line}: {}", e.message().trim())
        })?;
        for (name, set) in [("full", &c.full), ("default", &c.default)] {
            if let Some(t) = set.targets.iter().find(|t| !TARGETS.contains(&t.as_str())) {
                return Err(format!(
                    "{file}: [{name}] targets: `{t}` is not a target ({})",
                    TARGETS.join(", ")
                ));
            }
            check(file, name, &set.sizes, &set.envs, set.reps)?;
            if set.control_rounds == 0 {
                return Err(format!("{file}: [{name}] control_rounds: at least 1"));
            }
        }
        for (alg, own) in &c.algorithm {
            let name = format!("algorithm.{alg}");
            check(
                file,
                &name,
                own.sizes.as_deref().unwrap_or(&[1]),
                own.envs.as_deref().unwrap_or(&[]),
                own.reps.unwrap_or(1),
            )?;
        }
        Ok(c)
    }

    /// The set a run takes: the full one, or the default run's.
    pub fn set(&self, full: bool) -> &Set {
        if full { &self.full } else { &self.default }
    }

    /// An algorithm's cases in a set, its own values first.
    pub fn cases(&self, full: bool, algorithm: &str) -> Vec<Case> {
        let set = self.set(full);
        let own = self.algorithm.get(algorithm).cloned().unwrap_or_default();
        let sizes = own.sizes.unwrap_or_else(|| set.sizes.clone());
        let envs = own.envs.unwrap_or_else(|| set.envs.clone());
        let reps = own.reps.unwrap_or(set.reps);
        let control_rounds = set.control_rounds;
        sizes
            .iter()
            .flat_map(|&size| {
                envs.iter().map(move |env| Case {
                    size,
                    env: env.clone(),
                    reps,
                    control_rounds,
                })
            })
            .collect()
    }
}

fn check(file: &str, name: &str, sizes: &[u64], envs: &[String], reps: u64) -> Result<(), String> {
    if sizes.is_empty() || sizes.contains(&0) {
        return Err(format!(
            "{file}: [{name}] sizes: at least one, each above 0"
        ));
    }
    if reps == 0 {
        return Err(format!("{file}: [{name}] reps: at least 1"));
    }
    if let Some(e) = envs.iter().find(|e| !ENVS.contains(&e.as_str())) {
        return Err(format!(
            "{file}: [{name}] envs: `{e}` is not an environment ({})",
            ENVS.join(", ")
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checked_in_table_reads_and_the_default_set_is_smaller() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let c = Cases::load(&root).unwrap();
        let full = c.cases(true, "merge_sort_keys");
        let small = c.cases(false, "merge_sort_keys");
        assert!(!small.is_empty() && small.len() < full.len());
        assert!(c.set(false).reps <= c.set(true).reps);
        assert!(c.set(false).targets.len() <= c.set(true).targets.len());
        assert_eq!(
            small[0].name(),
            format!("n{}-{}", small[0].size, small[0].env)
        );
    }

    #[test]
    fn an_algorithms_own_values_and_bad_tables() {
        let base = "[full]\ntargets = [\"sm_90\"]\nsizes = [10, 20]\nenvs = [\"quiet\"]\nreps = 3\n\
                    [default]\ntargets = [\"sm_90\"]\nsizes = [10]\nenvs = [\"stress\"]\nreps = 2\n";
        let c = Cases::parse(
            &format!("{base}[algorithm.a]\nsizes = [7]\nreps = 9\n"),
            "t.toml",
        )
        .unwrap();
        let names: Vec<String> = c.cases(true, "b").iter().map(Case::name).collect();
        assert_eq!(names, ["n10-quiet", "n20-quiet"]);
        assert_eq!(
            c.cases(true, "a"),
            vec![Case {
                size: 7,
                env: "quiet".into(),
                reps: 9,
                control_rounds: 1
            }]
        );
        assert_eq!(c.cases(false, "b")[0].name(), "n10-stress");
        for (bad, says) in [
            (
                base.replace("\"quiet\"", "\"loud\""),
                "t.toml: [full] envs: `loud`",
            ),
            (base.replace("reps = 2", "reps = 0"), "[default] reps"),
            (
                base.replace("reps = 2", "reps = 2\ncontrol_rounds = 0"),
                "[default] control_rounds",
            ),
            (base.replace("[10, 20]", "[]"), "[full] sizes"),
            (
                base.replace(
                    "targets = [\"sm_90\"]\nsizes = [10]",
                    "targets = [\"sm_80\"]\nsizes = [10]",
                ),
                "`sm_80` is not a target",
            ),
            (format!("{base}extra = 1\n"), "t.toml:"),
            ("[full]\nreps = \"x\"\n".to_string(), "t.toml:2"),
        ] {
            let e = Cases::parse(&bad, "t.toml").unwrap_err();
            assert!(e.contains(says), "{says}: {e}");
        }
    }
}
