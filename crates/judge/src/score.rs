//! The mutation score, computed from the mutants' records (`mutant.rs`):
//! overall, per operator, per test and for the tests a tuning search holds
//! out. A mutant is killed when the GPU showed an outcome its original
//! test's verdict rules out; only mutants count (candidates the oracles
//! say are not mutants are recorded with why, and left out).
//!
//! A survivor that an `unobserved` fact covers where it ran (measured on
//! that GPU, or a fact that travels there: `Facts::equivalent`) is
//! *equivalent on that hardware*: the outcome that would kill it is one
//! the GPU never shows. It is listed apart, with the fact, and left out of
//! the score ([`Score::judged_by`]); any other survivor is a miss. A fact
//! covers a survivor by [`Equivalence::Shape`] (its shape matches the
//! mutated program and its envelope holds the run: the rule) or, to
//! compare, by [`Equivalence::Name`] (its `mutants` name it, or its key
//! names the mutant's test: the rule before facts had shapes).

use std::collections::BTreeMap;

use gridcheck_record::{Count, MutantRecord, MutantStatus, Subject, Tier, TrialId};
use gridcheck_spec::Litmus;
use serde::Serialize;

use crate::applicability::Here;
use crate::{Applies, Fact, FactKind, Facts};

/// How a fact makes a surviving mutant equivalent.
#[derive(Debug, Clone, Copy)]
pub enum Equivalence<'a> {
    /// The fact names the mutant (`mutants`), or its key names the
    /// mutant's test.
    Name,
    /// The fact's shape matches the mutated program (the programs by
    /// mutant name, as the current spec makes them) and its envelope holds
    /// the run (GPU, testing environment, size).
    Shape(&'a BTreeMap<String, Litmus>),
}

impl Equivalence<'_> {
    pub fn as_str(&self) -> &'static str {
        match self {
            Equivalence::Name => "name",
            Equivalence::Shape(_) => "shape",
        }
    }
}

/// A survivor equivalent on the hardware it ran on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Equivalent {
    pub mutant: String,
    /// The `unobserved` fact's key (`gpu/sm_90/<test>`) and `file:line`.
    pub fact: String,
    pub at: String,
    pub summary: String,
    /// Measured on this GPU, or where it was measured and what differs.
    pub place: String,
    /// `name`, or the shape that matched the mutated program.
    pub by: String,
}

/// The mutation score of a set of records.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Score {
    /// Killed or survived: mutants that ran.
    pub overall: Count,
    pub per_operator: BTreeMap<String, Count>,
    pub per_test: BTreeMap<String, Count>,
    /// Mutants that did not run or failed (not in the score), by status.
    pub left_out: BTreeMap<&'static str, usize>,
    /// Candidates that are not mutants.
    pub not_mutants: usize,
    /// Survivors equivalent on their hardware (not in the score).
    pub equivalent: Vec<Equivalent>,
    /// How they were found equivalent: `name` or `shape`.
    pub equivalence: &'static str,
    /// The slowest time to kill among the killed, in GPU seconds.
    pub slowest_kill_s: f64,
    /// GPU seconds of every run.
    pub gpu_s: f64,
    /// The mutants of the tests a tuning search holds out
    /// ([`crate::held_out`]): how the environment does on tests it
    /// was not chosen on.
    pub held_out: Count,
}

impl Score {
    /// The score of the records (the last record of a mutant counts, so a
    /// resumed or repeated run is counted once), without facts: every
    /// survivor is a miss.
    pub fn of(records: &[MutantRecord]) -> Score {
        Score::judged(records, None)
    }

    /// The score with the facts: a survivor an `unobserved` fact covers
    /// where it ran is [`Equivalent`], apart and out of the score.
    pub fn judged(records: &[MutantRecord], facts: Option<&Facts>) -> Score {
        Score::judged_by(records, facts, Equivalence::Name)
    }

    /// The score with the facts, a survivor equivalent as `eq` says.
    pub fn judged_by(records: &[MutantRecord], facts: Option<&Facts>, eq: Equivalence) -> Score {
        let mut last: BTreeMap<&str, &MutantRecord> = BTreeMap::new();
        for r in records {
            last.insert(&r.mutant, r);
        }
        let mut s = Score {
            equivalence: eq.as_str(),
            ..Score::default()
        };
        for r in last.values() {
            s.gpu_s += r.runs.iter().map(|x| x.gpu_s).sum::<f64>();
            let killed = match r.status {
                MutantStatus::Killed => true,
                MutantStatus::Survived => {
                    if let Some(e) = facts.and_then(|f| equivalent(f, r, eq)) {
                        s.equivalent.push(e);
                        continue;
                    }
                    false
                }
                MutantStatus::NotAMutant => {
                    s.not_mutants += 1;
                    continue;
                }
                other => {
                    *s.left_out.entry(other.as_str()).or_default() += 1;
                    continue;
                }
            };
            if killed {
                let t = r
                    .runs
                    .iter()
                    .filter_map(|x| x.time_to_kill_s)
                    .fold(0.0, f64::max);
                s.slowest_kill_s = s.slowest_kill_s.max(t);
            }
            s.overall.add(killed);
            if crate::held_out::held_out(&r.test) {
                s.held_out.add(killed);
            }
            s.per_operator
                .entry(r.operator.clone())
                .or_default()
                .add(killed);
            s.per_test.entry(r.test.clone()).or_default().add(killed);
        }
        s
    }
}

impl Facts {
    /// The `unobserved` fact that makes a surviving mutant equivalent on the
    /// GPU it ran on, and where it stands there (measured there, or one
    /// that travels there: never [`Applies::No`]). A fact covers a mutant
    /// that it names (`mutants`), or whose test its key names on the GPU
    /// tier and the mutant's architecture. `None` for a mutant that did not
    /// survive or names no GPU environment.
    pub fn equivalent<'a>(
        &'a self,
        m: &MutantRecord,
        eq: Equivalence,
    ) -> Option<(&'a Fact, Applies<'a>)> {
        let env = m
            .environment
            .as_ref()
            .filter(|_| m.status == MutantStatus::Survived)?;
        let here = Here::of_environment(env);
        let covers = |f: &Fact| match eq {
            Equivalence::Name => f.covers_mutant(m, &env.sm),
            Equivalence::Shape(programs) => {
                f.shape_covers_mutant(m, programs) == Some(Inside::Within)
            }
        };
        let mut found: Vec<(&Fact, Applies)> = self
            .entries
            .iter()
            .filter(|f| f.kind == FactKind::Unobserved && covers(f))
            .map(|f| (f, f.applies(&here)))
            .filter(|(_, a)| !matches!(a, Applies::No(_)))
            .collect();
        found.sort_by_key(|(_, a)| a.rank());
        found.into_iter().next()
    }
}

/// Where a mutant's run stands against the envelope of a fact whose shape
/// covers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "envelope", content = "why")]
pub enum Inside {
    /// The fact states no envelope (it is not an `unobserved` fact).
    NoEnvelope,
    /// The run was on a GPU, under an environment and of a size it tried.
    Within,
    /// Outside it, and why.
    Outside(String),
}

impl Fact {
    /// Whether the fact's shape matches a mutant's program (`programs`, by
    /// mutant name, as the current spec makes them: `gridcheck_mutate::programs`)
    /// on the architecture it ran on, and if so, where its run stands
    /// against the envelope. A mutant recorded without a GPU environment
    /// is matched on its program alone, and is outside any envelope.
    pub fn shape_covers_mutant(
        &self,
        m: &MutantRecord,
        programs: &BTreeMap<String, Litmus>,
    ) -> Option<Inside> {
        let p = programs.get(&m.mutant)?;
        let env = m.environment.as_ref();
        let matches = match env {
            Some(env) => self.shape_covers(&TrialId::gpu(&env.sm, "", &m.test), p),
            None => self.subject.tier() == Tier::Gpu && self.shape_of(p).is_some(),
        };
        if !matches {
            return None;
        }
        Some(match (&self.envelope, env) {
            (None, _) => Inside::NoEnvelope,
            (Some(_), None) => Inside::Outside("it ran on no GPU".into()),
            (Some(e), Some(env)) => {
                match e.covers(
                    &env.gpu,
                    env.tuning_file.as_deref(),
                    p.largest_location_words(),
                ) {
                    Ok(()) => Inside::Within,
                    Err(why) => Inside::Outside(why),
                }
            }
        })
    }

    /// Whether the fact is about a mutant run on `sm`: it names the mutant
    /// in `mutants`, or its key names the mutant's test on the GPU tier (any
    /// rule), on that architecture.
    pub fn covers_mutant(&self, m: &MutantRecord, sm: &str) -> bool {
        if self.mutants.contains(&m.mutant) {
            return true;
        }
        // A mutant has a test, not a rule: a fact about one rule's trial
        // covers it when the rest of its key does.
        let rule = match &self.subject {
            Subject::Trial(t) => t.rule.as_str(),
            Subject::Test(_) => "",
        };
        self.covers(&TrialId::gpu(sm, rule, &m.test))
    }
}

/// The [`Equivalent`] of a survivor, when a fact makes it one.
fn equivalent(facts: &Facts, r: &MutantRecord, eq: Equivalence) -> Option<Equivalent> {
    let (f, a) = facts.equivalent(r, eq)?;
    let by = match eq {
        Equivalence::Name => "name".to_string(),
        Equivalence::Shape(programs) => programs
            .get(&r.mutant)
            .and_then(|p| f.shape_of(p))
            .map_or_else(|| "shape".to_string(), |s| format!("shape `{s}`")),
    };
    let place = match &a {
        Applies::Measured(p) => format!("measured here: {p}"),
        Applies::Elsewhere(p) => format!("first measured on {p}"),
        Applies::Beyond(p, why) => format!("first measured on {p}; it travels: {why}"),
        Applies::No(why) => why.clone(),
    };
    Some(Equivalent {
        mutant: r.mutant.clone(),
        fact: f.subject.to_string(),
        at: f.at(),
        summary: f.summary.clone(),
        place,
        by,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use gridcheck_record::{Environment, MutantRun};
    use gridcheck_spec::Verdict;

    fn rec(mutant: &str, op: &str, status: MutantStatus, ttk: Option<f64>) -> MutantRecord {
        MutantRecord {
            mutant: mutant.into(),
            test: mutant.split('~').next().unwrap_or_default().into(),
            operator: op.into(),
            site: String::new(),
            original: Verdict::Forbidden,
            status,
            message: String::new(),
            verdict: Some(Verdict::Allowed),
            decided_by: "both".into(),
            kill_states: Vec::new(),
            runs: vec![MutantRun {
                environment: "tuned".into(),
                histogram: Vec::new(),
                instances: 10,
                kills: u64::from(ttk.is_some()),
                launch_failures: 0,
                first_launch_error: None,
                gpu_s: 0.5,
                time_to_kill_s: ttk,
                wall_s: 0.6,
            }],
            budget_s: 1.0,
            environment: None,
            commit: None,
        }
    }

    #[test]
    fn the_score_counts_mutants_once_by_their_last_record() {
        let records = vec![
            rec("a~x", "x", MutantStatus::Survived, None),
            rec("a~x", "x", MutantStatus::Killed, Some(0.25)),
            rec("a~y", "y", MutantStatus::Survived, None),
            rec("b~x", "x", MutantStatus::Killed, Some(0.5)),
            rec("b~z", "z", MutantStatus::NotAMutant, None),
            rec("c~x", "x", MutantStatus::NotRun, None),
        ];
        let s = Score::of(&records);
        assert_eq!(
            s.overall,
            Count {
                killed: 2,
                mutants: 3
            }
        );
        assert_eq!(
            s.per_operator["x"],
            Count {
                killed: 2,
                mutants: 2
            }
        );
        assert_eq!(
            s.per_operator["y"],
            Count {
                killed: 0,
                mutants: 1
            }
        );
        assert_eq!(
            s.per_test["a"],
            Count {
                killed: 1,
                mutants: 2
            }
        );
        assert_eq!(s.not_mutants, 1);
        assert_eq!(s.left_out["not-run"], 1);
        assert_eq!(s.slowest_kill_s, 0.5);
        assert!((s.overall.percent() - 66.666).abs() < 0.01);
    }

    /// A survivor run on `gpu` with `driver`.
    fn on(mut r: MutantRecord, gpu: &str, driver: &str) -> MutantRecord {
        r.environment = Some(Environment {
            gpu: gpu.into(),
            sm: "sm_90".into(),
            driver: "13.0".into(),
            nvcc: Some("13.0.88".into()),
            driver_version: Some(driver.into()),
            tuning: None,
            tuning_file: None,
            device: None,
            binary: None,
            toolchain: None,
        });
        r
    }

    /// `unobserved` facts: one about test `a`, one naming the mutant
    /// `b~y`; a `discrepancy` about `c`; all measured on an H100 with
    /// driver 580, depending on the driver.
    fn facts() -> Facts {
        let fact = |key: &str, kind: &str, extra: &str| {
            format!(
                "[\"{key}\"]\nkind = \"{kind}\"\nsummary = \"never shown\"\ndepends_on = [\"driver\"]\n{extra}{}\
                 measured = [{{ gpu = \"H100\", sm = \"sm_90\", driver = \"580\", date = \"2026-11-26\" }}]\n\
                 evidence = \"e\"\n",
                if kind == "unobserved" {
                    "envelope = { gpus = [\"H100\"], environments = [\"t.toml\"], instances = 9, words = 1 }\n"
                } else {
                    ""
                }
            )
        };
        let text = fact("gpu/sm_90/a", "unobserved", "")
            + &fact("gpu/sm_90/z", "unobserved", "mutants = [\"b~y\"]\n")
            + &fact("gpu/sm_90/c", "discrepancy", "");
        Facts {
            entries: Facts::parse(
                &text,
                std::path::Path::new("f.toml"),
                std::path::Path::new("."),
            )
            .unwrap(),
        }
    }

    #[test]
    fn a_survivor_the_gpu_cannot_kill_is_equivalent_and_out_of_the_score() {
        let survived = |m: &str, op: &str| rec(m, op, MutantStatus::Survived, None);
        let records = vec![
            on(survived("a~x", "x"), "H100", "580"),
            on(survived("b~y", "y"), "H100", "580"),
            on(survived("c~x", "x"), "H100", "580"),
            on(survived("d~x", "x"), "H100", "580"),
            on(
                rec("a~z", "z", MutantStatus::Killed, Some(0.1)),
                "H100",
                "580",
            ),
        ];
        let f = facts();
        let s = Score::judged(&records, Some(&f));
        let eq: Vec<(&str, &str)> = s
            .equivalent
            .iter()
            .map(|e| (e.mutant.as_str(), e.fact.as_str()))
            .collect();
        // By its test's key, and by the fact's list of mutants.
        assert_eq!(eq, [("a~x", "gpu/sm_90/a"), ("b~y", "gpu/sm_90/z")]);
        assert!(
            s.equivalent[0].place.starts_with("measured here"),
            "{:?}",
            s.equivalent
        );
        assert_eq!(
            (s.equivalent[0].by.as_str(), s.equivalent[0].at.as_str()),
            ("name", "f.toml:1")
        );
        // A discrepancy, or no fact: misses. The kill stays a kill.
        assert_eq!(
            s.overall,
            Count {
                killed: 1,
                mutants: 3
            }
        );
        assert_eq!(s.per_test.get("b"), None);
        // Without facts, every survivor is a miss.
        assert_eq!(
            Score::of(&records).overall,
            Count {
                killed: 1,
                mutants: 5
            }
        );
    }

    #[test]
    fn a_fact_that_travels_counts_one_about_another_architecture_does_not() {
        let f = facts();
        // Another driver: the fact travels there (measured only under
        // another value of what it depends on).
        let travels = on(rec("a~x", "x", MutantStatus::Survived, None), "H100", "590");
        let s = Score::judged(std::slice::from_ref(&travels), Some(&f));
        assert_eq!(s.equivalent.len(), 1);
        assert!(
            s.equivalent[0].place.contains("it travels: "),
            "{:?}",
            s.equivalent
        );
        // Another architecture, outside the key's: not covered.
        let mut other = travels.clone();
        other.environment.as_mut().unwrap().sm = "sm_100".into();
        assert!(Score::judged(&[other], Some(&f)).equivalent.is_empty());
        // No environment recorded: where it ran is unknown, no fact applies.
        let mut nowhere = travels;
        nowhere.environment = None;
        assert!(Score::judged(&[nowhere], Some(&f)).equivalent.is_empty());
    }

    #[test]
    fn records_round_trip_as_json_lines() {
        let r = rec("a~x", "x", MutantStatus::Killed, Some(0.1));
        let line = serde_json::to_string(&r).expect("serializes");
        assert!(line.contains("\"status\":\"killed\""), "{line}");
        let back: MutantRecord = serde_json::from_str(&line).expect("parses");
        assert_eq!(back, r);
    }
}
