//! The tuning search's figures (`conformance --mutants --tune`): each
//! environment's kills, mutants, GPU seconds and kills per GPU second, over
//! the tests the search chooses on and, apart, over the tests it holds out.
//!
//! A testing environment tuned on the suite's own tests is a hypothesis
//! about the GPU; whether it generalizes shows on tests it was not chosen
//! on. A fixed share of the spec's tests, by a hash of their names, is held
//! out of every search: their mutants run under each point like the rest,
//! but the point is chosen on the others' kills, and the held-out kills are
//! reported beside them (and in every mutation score after). Which tests
//! are held out is `gridcheck_judge::held_out`.

use std::collections::BTreeMap;
use std::fmt::Write;

use gridcheck_judge::{HOLD_OUT_PERCENT, held_out};

use crate::{Count, MutantRecord};
use crate::{SearchPoint, Tuning};

/// A search point's figures: kills of the mutants of the tests a search
/// chooses on and of the held-out ones, and the GPU seconds of its runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PointFigures {
    pub chosen_on: Count,
    pub held: Count,
    pub gpu_s: f64,
}

impl PointFigures {
    /// Kills on the tests it is chosen on, a GPU second.
    pub fn kills_per_s(&self) -> f64 {
        if self.gpu_s > 0.0 {
            self.chosen_on.killed as f64 / self.gpu_s
        } else {
            0.0
        }
    }
}

/// Each environment's figures in a search's records (the last record of a
/// mutant counts).
pub fn figures(records: &[MutantRecord]) -> BTreeMap<String, PointFigures> {
    let mut last: BTreeMap<&str, &MutantRecord> = BTreeMap::new();
    for r in records {
        last.insert(&r.mutant, r);
    }
    let mut per_env: BTreeMap<String, PointFigures> = BTreeMap::new();
    for r in last.values().filter(|r| !r.runs.is_empty()) {
        for run in &r.runs {
            let e = per_env.entry(run.environment.clone()).or_default();
            let side = if held_out(&r.test) {
                &mut e.held
            } else {
                &mut e.chosen_on
            };
            side.add(run.kills > 0);
            e.gpu_s += run.gpu_s;
        }
    }
    per_env
}

/// The point a search chooses: the most kills on the tests it chooses on,
/// then the most of them a GPU second; the held-out kills never decide.
pub fn choose(records: &[MutantRecord]) -> Option<(String, PointFigures)> {
    figures(records).into_iter().max_by(|(_, a), (_, b)| {
        a.chosen_on
            .killed
            .cmp(&b.chosen_on.killed)
            .then(a.kills_per_s().total_cmp(&b.kills_per_s()))
    })
}

/// The tuned file a search makes. The search ranks points by the mutants
/// they kill, not by what they cost the suite's litmus trials (on an H200,
/// 2026-11-27, its best point, 1 024 instances a launch with delays below
/// 2^20 cycles, took the GPU tier from 58 to 65 s and made a tail-launch
/// test a 3 s long run), so the litmus trials keep `base`'s environment
/// (the file the GPU ran under before, whose suite time is measured) and
/// the chosen point joins its extra environments for the mutants only
/// (`launches = 0`): a surviving mutant goes on under it. A point equal to
/// `base`'s own environment adds nothing. The header says how it was
/// chosen.
pub fn tuned_file(
    point: &SearchPoint,
    f: &PointFigures,
    base: &Tuning,
    header: &str,
) -> Result<String, String> {
    let same = Tuning {
        extra: Vec::new(),
        mutant_budget_s: base.mutant_budget_s,
        ..point.tuning.clone()
    } == Tuning {
        extra: Vec::new(),
        ..base.clone()
    };
    let mut tuning = base.clone();
    if !same {
        tuning.extra.push(SearchPoint {
            name: point.name.clone(),
            tuning: Tuning {
                launches: 0,
                extra: Vec::new(),
                ..point.tuning.clone()
            },
        });
    }
    let body = toml::to_string(&tuning).map_err(|e| e.to_string())?;
    let mut out = String::new();
    for line in header.lines() {
        let _ = writeln!(out, "# {line}");
    }
    let _ = writeln!(
        out,
        "# Chosen by the search: point `{}`, {} on the tests it chose on, {:.3} GPU s ({:.2} kills a GPU s);\n# {} on the {} % of the tests it held out. {}",
        point.name,
        f.chosen_on,
        f.gpu_s,
        f.kills_per_s(),
        f.held,
        HOLD_OUT_PERCENT,
        if same {
            "It is the base file's own environment."
        } else {
            "The litmus trials keep the base file's environment;\n# the point runs for the mutants only (launches = 0), after the base's extra environments."
        }
    );
    Ok(out + &body)
}

/// Each environment of a search, over the tests it chooses on (kills,
/// mutants, GPU seconds, kills per GPU second) and over the held-out ones
/// (kills of mutants).
pub(crate) fn environments_text(records: &[MutantRecord]) -> String {
    let mut out = format!(
        "environments (chosen on: kills, mutants, GPU s, kills per GPU s; held out, {} % of the tests: kills of mutants):\n",
        HOLD_OUT_PERCENT
    );
    for (env, f) in figures(records) {
        let _ = writeln!(
            out,
            "  {env:<24} {:>4} {:>4} {:>9.3} {:>9.2}   held out {}",
            f.chosen_on.killed,
            f.chosen_on.mutants,
            f.gpu_s,
            f.kills_per_s(),
            f.held
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A record of `test`'s mutant under each `(environment, kills, gpu_s)`.
    fn search_rec(test: &str, runs: &[(&str, u64, f64)]) -> MutantRecord {
        use crate::{MutantRun, MutantStatus};
        MutantRecord {
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
            runs: runs
                .iter()
                .map(|&(environment, kills, gpu_s)| MutantRun {
                    environment: environment.into(),
                    histogram: Vec::new(),
                    instances: 1,
                    kills,
                    launch_failures: 0,
                    first_launch_error: None,
                    gpu_s,
                    time_to_kill_s: None,
                    wall_s: gpu_s,
                })
                .collect(),
            budget_s: 0.25,
            environment: None,
            commit: None,
        }
    }

    #[test]
    fn the_search_chooses_on_kept_tests_then_speed_and_writes_a_file_that_loads() {
        let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"];
        let held: Vec<&str> = names.iter().copied().filter(|t| held_out(t)).collect();
        let kept: Vec<&str> = names.iter().copied().filter(|t| !held_out(t)).collect();
        // `slow` and `fast` kill both kept tests; `fast` in less GPU time.
        // `held` kills only the held-out test: its kills never decide.
        let records = vec![
            search_rec(
                kept[0],
                &[("slow", 1, 0.5), ("fast", 1, 0.1), ("held", 0, 0.1)],
            ),
            search_rec(
                kept[1],
                &[("slow", 1, 0.5), ("fast", 1, 0.1), ("held", 0, 0.1)],
            ),
            search_rec(
                held[0],
                &[("slow", 0, 0.5), ("fast", 0, 0.1), ("held", 1, 0.1)],
            ),
        ];
        let (name, f) = choose(&records).unwrap();
        assert_eq!(name, "fast");
        assert_eq!((f.chosen_on.killed, f.chosen_on.mutants), (2, 2));
        assert_eq!((f.held.killed, f.held.mutants), (0, 1));
        assert!(choose(&[]).is_none());
        let point = SearchPoint {
            name: "fast".into(),
            tuning: Tuning {
                instances: 64,
                ..Tuning::default()
            },
        };
        let base = Tuning {
            extra: vec![SearchPoint {
                name: "late-write".into(),
                tuning: Tuning {
                    launches: 48,
                    ..Tuning::default()
                },
            }],
            ..Tuning::default()
        };
        let text = tuned_file(&point, &f, &base, "The GPU X.").unwrap();
        assert!(
            text.starts_with("# The GPU X.\n# Chosen by the search: point `fast`"),
            "{text}"
        );
        let back = Tuning::parse(&text, std::path::Path::new("x.toml")).unwrap();
        // The litmus trials keep the base's environment; the chosen point
        // runs for the mutants only, after the base's extra environments.
        assert_eq!(back.instances, base.instances);
        assert_eq!(back.extra[0], base.extra[0]);
        assert_eq!(back.extra[1].name, "fast");
        assert_eq!(
            (
                back.extra[1].tuning.instances,
                back.extra[1].tuning.launches
            ),
            (64, 0)
        );
        // The base's own environment chosen adds nothing.
        let own = SearchPoint {
            name: "own".into(),
            tuning: Tuning {
                extra: Vec::new(),
                ..base.clone()
            },
        };
        let text = tuned_file(&own, &f, &base, "X").unwrap();
        let back = Tuning::parse(&text, std::path::Path::new("x.toml")).unwrap();
        assert_eq!(back, base, "{text}");
    }
}
