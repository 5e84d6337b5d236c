//! The hangs known before a campaign, read from their one home: every fact
//! of kind `hang` on the GPU tier (`conformance/facts/`, read through
//! `gridcheck_report::Facts`) names a test of the spec, and that test's
//! [`Shape`] is the known hang's. A program is of a known hang when the
//! test's shape embeds in the program's ([`Shape::embeds`]: the test's
//! calls, in the same threads and order). The campaign holds no hang shape
//! of its own.

use std::path::Path;

use gridcheck_report::{FACTS_DIR, FactKind, Facts, Tier};
use gridcheck_spec::{Litmus, Spec, TestBody};

use crate::shape::Shape;

/// One known hang: a hang fact and its test's shape.
#[derive(Debug, Clone, PartialEq)]
pub struct KnownHang {
    /// The fact's key (`gpu/sm_90/c2-trigger-record-wait-launch`).
    pub fact: String,
    /// The test it names.
    pub test: String,
    /// The fact's one-line summary.
    pub summary: String,
    pub shape: Shape,
}

/// Every known hang, in the facts' order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KnownHangs {
    pub hangs: Vec<KnownHang>,
}

impl KnownHangs {
    /// The hang facts of `root/conformance/facts` with their tests' shapes
    /// from `root/spec`.
    pub fn load(root: &Path) -> Result<KnownHangs, String> {
        let facts = Facts::load_all(&root.join(FACTS_DIR), root)?;
        let spec_dir = root.join("spec");
        let spec = gridcheck_spec::load_dir(&spec_dir, None)
            .map_err(|e| format!("the known hangs' tests ({}): {e}", spec_dir.display()))?;
        KnownHangs::from_facts(&facts, &spec)
    }

    /// The hang facts of the GPU tier, each with its test's shape; a fact
    /// whose test is not a litmus test of `spec` is an error naming it.
    pub fn from_facts(facts: &Facts, spec: &Spec) -> Result<KnownHangs, String> {
        let mut hangs: Vec<KnownHang> = Vec::new();
        for f in &facts.entries {
            if f.kind != FactKind::Hang || f.subject.tier() != Tier::Gpu {
                continue;
            }
            let name = f.subject.test();
            let test = spec
                .test(name)
                .ok_or_else(|| format!("{}: the hang fact names `{name}`, not a test", f.at()))?;
            let TestBody::Litmus(l) = &test.body else {
                return Err(format!(
                    "{}: the hang fact's test `{name}` is not a litmus test: it has no shape",
                    f.at()
                ));
            };
            let shape = Shape::of(l);
            // A test's fact and a trial's fact of the same test are one hang.
            if hangs.iter().any(|h| h.shape == shape) {
                continue;
            }
            hangs.push(KnownHang {
                fact: f.subject.to_string(),
                test: name.to_string(),
                summary: f.summary.clone(),
                shape,
            });
        }
        Ok(KnownHangs { hangs })
    }

    /// The first known hang whose test's shape embeds in `l`'s: the
    /// program makes that hang's calls (its records' `known_hang`, and the
    /// campaign's cap). It may still hang for another reason.
    pub fn matching(&self, l: &Litmus) -> Option<&KnownHang> {
        let s = Shape::of(l);
        self.hangs.iter().find(|h| h.shape.embeds(&s))
    }

    /// The known hang that explains a hang found in `found` and shrunk to
    /// `shrunk`: `found` makes its calls, and what `shrunk` kept (what the
    /// hang needs) is within its test. A program that makes a known
    /// hang's calls but needs others to hang (a call the test lacks) is not
    /// explained by it; nor is a test's call the hang does not need (its
    /// observers, a launch it kept) asked of the shrunk program.
    pub fn explaining(&self, found: &Litmus, shrunk: &Litmus) -> Option<&KnownHang> {
        let (f, s) = (Shape::of(found), Shape::of(shrunk));
        self.hangs
            .iter()
            .find(|h| h.shape.embeds(&f) && s.embeds(&h.shape))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::tests::litmus;

    fn checkout() -> KnownHangs {
        let root = gridcheck_toolchain::checkout_root(env!("CARGO_MANIFEST_DIR"));
        KnownHangs::load(&root).expect("the checkout's facts and spec load")
    }

    /// The checkout's hang facts give the known hangs, and programs are
    /// matched by their tests' shapes: the trigger before a tail launch,
    /// the two records, and the trigger, launch, record and wait of
    /// campaign finding 001 (fuzz-2026-8580), whose fact came after the
    /// campaign.
    #[test]
    fn the_known_hangs_are_the_hang_facts_tests() {
        let k = checkout();
        let tests: Vec<&str> = k.hangs.iter().map(|h| h.test.as_str()).collect();
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
        assert_eq!(k.explaining(&found, &shrunk), None);
        let found = l("          t0: [store x 1, record e1, record e2, launch k1]\n");
        // Shrunk to the records alone: the child kernel and its launch gone.
        let mut shrunk = l("          t0: [record e1, record e2, launch k1]\n");
        shrunk.kernels.truncate(1);
        shrunk.kernels[0].threads[0].ops.truncate(2);
        assert_eq!(
            k.explaining(&found, &shrunk).map(|h| h.test.as_str()),
            Some("c2-event-two-records-null-stream")
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
        let e = KnownHangs::from_facts(&facts, &empty).unwrap_err();
        assert!(
            e.contains("f.toml:1") && e.contains("c2-trigger-record-wait-launch"),
            "{e}"
        );
    }
}
