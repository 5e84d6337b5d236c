//! The tuning search's figures (`conformance --mutants --tune`): each
//! environment's kills, mutants, GPU seconds and kills per GPU second, over
//! the tests the search chooses on and, apart, over the tests it holds out.
//!
//! A testing environment tuned on the suite's own tests is a hypothesis
//! about the GPU; whether it generalizes shows on tests it was not chosen
//! on. A fixed share of the spec's tests, by a hash of their names, is held
//! out of every search: their mutants run under each point like the rest,
//! but the point is chosen on the others' kills, and the held-out kills are
//! reported beside them (and in every mutation score after).

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::mutant::{Count, MutantRecord};

/// The share of the tests a search holds out, in percent.
pub const HOLD_OUT_PERCENT: u64 = 25;

/// Whether a search holds `test` out: FNV-1a of its name, modulo 100,
/// under [`HOLD_OUT_PERCENT`] (a test keeps its side across runs and
/// machines, and a new test falls on either side by its name alone).
pub fn held_out(test: &str) -> bool {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in test.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h % 100 < HOLD_OUT_PERCENT
}

/// Each environment of a search, over the tests it chooses on (kills,
/// mutants, GPU seconds, kills per GPU second) and over the held-out ones
/// (kills of mutants).
pub(crate) fn environments_text(records: &[MutantRecord]) -> String {
    #[derive(Default)]
    struct Figures {
        chosen_on: Count,
        held: Count,
        gpu_s: f64,
    }
    let mut per_env: BTreeMap<&str, Figures> = BTreeMap::new();
    for r in records.iter().filter(|r| !r.runs.is_empty()) {
        for run in &r.runs {
            let e = per_env.entry(&run.environment).or_default();
            let side = if held_out(&r.test) {
                &mut e.held
            } else {
                &mut e.chosen_on
            };
            side.add(run.kills > 0);
            e.gpu_s += run.gpu_s;
        }
    }
    let mut out = format!(
        "environments (chosen on: kills, mutants, GPU s, kills per GPU s; held out, {} % of the tests: kills of mutants):\n",
        HOLD_OUT_PERCENT
    );
    for (env, f) in per_env {
        let g = f.gpu_s;
        let _ = writeln!(
            out,
            "  {env:<24} {:>4} {:>4} {g:>9.3} {:>9.2}   held out {}",
            f.chosen_on.killed,
            f.chosen_on.mutants,
            if g > 0.0 {
                f.chosen_on.killed as f64 / g
            } else {
                0.0
            },
            f.held
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn about_a_quarter_of_the_spec_is_held_out_by_name() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec");
        let spec = gridcheck_spec::load_dir(&root, None).unwrap();
        let n = spec.tests.len();
        let held = spec.tests.iter().filter(|t| held_out(&t.name)).count();
        // 25 % of a few hundred names, within a wide margin of chance.
        assert!(held * 100 > n * 15 && held * 100 < n * 35, "{held} of {n}");
        // A name keeps its side.
        assert_eq!(
            held_out("pdl-no-wait-may-be-stale"),
            held_out("pdl-no-wait-may-be-stale")
        );
    }

    #[test]
    fn the_search_reports_held_out_tests_apart() {
        use crate::{MutantRun, MutantStatus};
        let names = ["a", "b", "c", "d", "e", "f", "g", "h"];
        let held = names.iter().find(|t| held_out(t)).unwrap();
        let kept = names.iter().find(|t| !held_out(t)).unwrap();
        let rec = |test: &str, kills: u64| MutantRecord {
            mutant: format!("{test}~op"),
            test: test.into(),
            operator: "op".into(),
            site: String::new(),
            original: gridcheck_spec::Verdict::Forbidden,
            status: MutantStatus::Killed,
            message: String::new(),
            verdict: None,
            decided_by: String::new(),
            kill_states: Vec::new(),
            runs: vec![MutantRun {
                environment: "p".into(),
                histogram: Vec::new(),
                instances: 1,
                kills,
                launch_failures: 0,
                first_launch_error: None,
                gpu_s: 0.5,
                time_to_kill_s: None,
                wall_s: 0.5,
            }],
            budget_s: 0.5,
            environment: None,
            commit: None,
        };
        let text = environments_text(&[rec(kept, 1), rec(held, 0)]);
        // Chosen on: 1 of 1 in 1 GPU s; held out: 0 of 1.
        assert!(
            text.contains("   1    1     1.000      1.00   held out 0/1 (0.0 %)"),
            "{text}"
        );
    }
}
