//! The facts known before a campaign, read from their one home: every GPU
//! fact of kind `hang`, `discrepancy` or `launch-error` that states a shape
//! (`conformance/facts/`, read through `gridcheck_report::Facts`; its
//! shape is a `gridcheck_shape::Pattern`). A program is of a known fact
//! when one of the fact's patterns matches it; a finding is explained by
//! a fact of its class (a hang by a hang, a violation or an unmodeled
//! state by a discrepancy, a launch error by a launch error) whose shape
//! covers both the program found and what it shrank to. The campaign
//! holds no fact of its own.

use std::path::Path;

use gridcheck_report::{FACTS_DIR, FactKind, Facts, Tier};
use gridcheck_shape::Pattern;
use gridcheck_spec::{Litmus, Spec};

/// One known fact: its key, test, kind and shape.
#[derive(Debug, Clone, PartialEq)]
pub struct KnownFact {
    /// The fact's key (`gpu/sm_90/c2-trigger-record-wait-launch`).
    pub fact: String,
    /// The test it names.
    pub test: String,
    /// The fact's one-line summary.
    pub summary: String,
    pub kind: FactKind,
    pub shape: Vec<Pattern>,
}

impl KnownFact {
    fn covers(&self, l: &Litmus) -> bool {
        self.shape.iter().any(|p| p.matches(l))
    }
}

/// Every known fact with a shape, in the facts' order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KnownFacts {
    pub facts: Vec<KnownFact>,
}

impl KnownFacts {
    /// The facts of `root/conformance/facts`, checked against `root/spec`.
    pub fn load(root: &Path) -> Result<KnownFacts, String> {
        let facts = Facts::load_all(&root.join(FACTS_DIR), root)?;
        let spec_dir = root.join("spec");
        let spec = gridcheck_spec::load_dir(&spec_dir, None)
            .map_err(|e| format!("the known facts' tests ({}): {e}", spec_dir.display()))?;
        KnownFacts::from_facts(&facts, &spec)
    }

    /// The hang, discrepancy and launch-error facts of the GPU tier that
    /// state a shape; a hang or launch-error fact without one, or whose
    /// test is not in `spec`, is an error naming it (the campaign knows
    /// them only by their shapes).
    pub fn from_facts(facts: &Facts, spec: &Spec) -> Result<KnownFacts, String> {
        let mut out: Vec<KnownFact> = Vec::new();
        for f in &facts.entries {
            if f.subject.tier() != Tier::Gpu
                || !matches!(
                    f.kind,
                    FactKind::Hang | FactKind::Discrepancy | FactKind::LaunchError
                )
            {
                continue;
            }
            let name = f.subject.test();
            if spec.test(name).is_none() {
                return Err(format!("{}: the fact names `{name}`, not a test", f.at()));
            }
            if f.shape.is_empty() {
                if f.kind != FactKind::Discrepancy {
                    return Err(format!(
                        "{}: the {} fact of `{name}` states no shape: a campaign cannot know it",
                        f.at(),
                        f.kind.as_str()
                    ));
                }
                continue;
            }
            out.push(KnownFact {
                fact: f.subject.to_string(),
                test: name.to_string(),
                summary: f.summary.clone(),
                kind: f.kind,
                shape: f.shape.clone(),
            });
        }
        Ok(KnownFacts { facts: out })
    }

    /// The first known hang whose shape covers `l` (its records'
    /// `known_hang`, and the campaign's cap). It may still hang for
    /// another reason.
    pub fn matching(&self, l: &Litmus) -> Option<&KnownFact> {
        self.facts
            .iter()
            .find(|h| h.kind == FactKind::Hang && h.covers(l))
    }

    /// The known fact of `kind` (a finding's, `Class::fact_kind`) that
    /// explains a finding found in `found` and shrunk to `shrunk`: its
    /// shape covers both. A program that makes a known mechanism's calls
    /// but shrinks to something else (a call the shape needs dropped) is
    /// not explained by it.
    pub fn explaining(
        &self,
        kind: FactKind,
        found: &Litmus,
        shrunk: &Litmus,
    ) -> Option<&KnownFact> {
        self.facts
            .iter()
            .find(|f| f.kind == kind && f.covers(found) && f.covers(shrunk))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::tests::litmus;

    fn checkout() -> KnownFacts {
        let root = gridcheck_toolchain::checkout_root(env!("CARGO_MANIFEST_DIR"));
        KnownFacts::load(&root).expect("the checkout's facts and spec load")
    }

    /// The checkout's hang facts give the known hangs, and programs are
    /// matched by the facts' shapes: the trigger before a tail launch,
    /// the two records, and the trigger, launch, record and wait of
    /// campaign finding 001 (fuzz-2026-8580), whose fact came after the
    /// campaign.
    #[test]
    fn the_known_hangs_are_the_hang_facts_tests() {
        let k = checkout();
        let tests: Vec<&str> = k
            .facts
            .iter()
            .filter(|h| h.kind == FactKind::Hang)
            .map(|h| h.test.as_str())
            .collect();
        for t in [
            "c2-tail-trigger-before-tail-launch",
            "c2-event-two-records-null-stream",
            "c2-trigger-record-wait-launch",
        ] {
            assert!(tests.contains(&t), "{t} not in {tests:?}");
        }
        let fact = |threads: &str| {
            k.matching(&litmus(threads, "exists x == 0", "allowed"))
                .map(|h| h.test.clone())
        };
        assert_eq!(
            fact("          t0: [trigger, launch k1 tail]\n").as_deref(),
            Some("c2-tail-trigger-before-tail-launch")
        );
        assert_eq!(
            fact("          t0: [record e1, store x 1, record e1, launch k1]\n").as_deref(),
            Some("c2-event-two-records-null-stream")
        );
        // fuzz-2026-8580, as the campaign drew it.
        assert_eq!(
            fact(
                "          t0: [syncthreads, trigger, record e2 s1]\n          t1: [syncthreads, load r0 x, store x 1]\n          t2: [trigger, syncthreads, launch k1 s1, load r1 x, waitevent s1 e2]\n"
            )
            .as_deref(),
            Some("c2-trigger-record-wait-launch")
        );
        // Not a known hang: the launch before the trigger, one record.
        assert_eq!(fact("          t0: [launch k1 tail, trigger]\n"), None);
        assert_eq!(fact("          t0: [record e1, launch k1]\n"), None);
    }

    /// Campaign finding 004 of 2026-11-26 (fuzz-2026-7079): its program
    /// makes the calls of the late-write environment's never-start hang (a
    /// tail launch, another thread's trigger), but it shrank to a hang
    /// without the tail launch: not explained by that fact. Two records
    /// shrunk to the records alone are explained by the two-records fact,
    /// whose test also launches.
    #[test]
    fn a_known_hang_explains_a_finding_only_within_its_test() {
        let k = checkout();
        let l = |threads: &str| litmus(threads, "exists x == 0", "allowed");
        let found = l(
            "          t0: [store x 1, launch k1 tail, record e2]\n          t1: [record e2, trigger, load r0 x]\n",
        );
        assert!(k.matching(&found).is_some());
        let shrunk = l(
            "          t0: [store x 2, record e2]\n          t1: [record e2, trigger, load r0 x, launch k1 s2]\n",
        );
        assert_eq!(k.explaining(FactKind::Hang, &found, &shrunk), None);
        let found = l("          t0: [store x 1, record e1, record e2, launch k1]\n");
        // Shrunk to the records alone: the child kernel and its launch gone.
        let mut shrunk = l("          t0: [record e1, record e2, launch k1]\n");
        shrunk.kernels.truncate(1);
        shrunk.kernels[0].threads[0].ops.truncate(2);
        assert_eq!(
            k.explaining(FactKind::Hang, &found, &shrunk)
                .map(|h| h.test.as_str()),
            Some("c2-event-two-records-null-stream")
        );
    }

    /// Findings of every class meet the facts of their kind: a violation
    /// in a program of the early-tail mechanism (other threads, another
    /// order of unrelated operations) is explained by the discrepancy, not
    /// a hang fact; a launch error by a launch-error fact.
    #[test]
    fn a_violation_of_a_known_mechanism_is_known() {
        let k = checkout();
        let early = litmus(
            "          t0: [store x 2, launch k1 tail]\n          t2: [load r0 x, trigger, store x 1]\n",
            "exists k1.t0.r0 == 0",
            "forbidden",
        );
        let f = k
            .explaining(FactKind::Discrepancy, &early, &early)
            .map(|f| f.fact.as_str());
        assert_eq!(
            f,
            Some("gpu/sm_90/c2-tail-sees-other-thread-write-after-trigger")
        );
        assert_eq!(
            crate::findings::Class::LaunchError.fact_kind(),
            Some(FactKind::LaunchError)
        );
        // The store before the trigger: not of the mechanism.
        let before = litmus(
            "          t0: [store x 2, launch k1 tail]\n          t2: [load r0 x, store x 1, trigger]\n",
            "exists k1.t0.r0 == 0",
            "forbidden",
        );
        assert_eq!(k.explaining(FactKind::Discrepancy, &before, &before), None);
    }

    /// The launch-error class of the campaigns of 2026-11-27: every shrunk
    /// test of a launch-error finding on either GPU is explained by the
    /// launch-error fact (a record or a wait on an event the block made);
    /// a program without an event call is not, and a violation in a
    /// program that records is not explained by it either (its kind is
    /// not a discrepancy).
    #[test]
    fn the_recorded_launch_errors_are_the_launch_error_fact() {
        let k = checkout();
        let fact = "gpu/sm_90/c2-event-cross-stream-dependency";
        let root = gridcheck_toolchain::checkout_root(env!("CARGO_MANIFEST_DIR"));
        let mut explained = 0;
        for gpu in ["nvidia-h200", "nvidia-h100-80gb-hbm3"] {
            let dir = root.join(format!("records/{gpu}/campaigns/2026-11-27/fuzz"));
            let findings = std::fs::read_to_string(dir.join("findings.jsonl")).unwrap();
            for line in findings.lines() {
                let f: serde_json::Value = serde_json::from_str(line).unwrap();
                let Some(yaml) = f["test"]["yaml"].as_str() else {
                    continue;
                };
                let file = dir.join(yaml);
                let text = std::fs::read_to_string(&file).unwrap();
                let tests = gridcheck_spec::render::load_litmus_tests(&file, &text).unwrap();
                let (name, l) = tests.last().unwrap();
                let by = k
                    .explaining(FactKind::LaunchError, l, l)
                    .map(|f| f.fact.as_str());
                if f["class"] == "launch-error" {
                    assert_eq!(by, Some(fact), "{gpu} {name}");
                    explained += 1;
                }
            }
        }
        assert_eq!(explained, 18);
        let l = |threads: &str| litmus(threads, "exists x == 0", "allowed");
        assert_eq!(
            k.explaining(
                FactKind::LaunchError,
                &l("          t0: [launch k1 s1]\n"),
                &l("          t0: [launch k1 s1]\n")
            ),
            None
        );
        let records = l("          t0: [record e1 s1, launch k1 s1]\n");
        assert!(
            k.explaining(FactKind::LaunchError, &records, &records)
                .is_some()
        );
        assert_eq!(
            k.explaining(FactKind::Discrepancy, &records, &records),
            None
        );
    }

    #[test]
    fn a_hang_fact_without_a_litmus_test_is_named() {
        let root = gridcheck_toolchain::checkout_root(env!("CARGO_MANIFEST_DIR"));
        let text = "[\"gpu/sm_90/c2-trigger-record-wait-launch\"]\nkind = \"hang\"\nsummary = \"s\"\nevidence = \"e\"\ndepends_on = [\"driver\"]\nmeasured = [{ sm = \"sm_90\", driver = \"1\", date = \"2026-01-01\" }]\n";
        let facts = Facts {
            entries: Facts::parse(text, Path::new("f.toml"), &root).unwrap(),
        };
        let empty = Spec {
            rules: Vec::new(),
            tests: Vec::new(),
        };
        let e = KnownFacts::from_facts(&facts, &empty).unwrap_err();
        assert!(
            e.contains("f.toml:1") && e.contains("c2-trigger-record-wait-launch"),
            "{e}"
        );
    }
}
