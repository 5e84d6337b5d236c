//! A finding's context: the programs its worker ran before it
//! ([`prefix`], from the records), the part of that prefix that brings the
//! finding back ([`halves`], halving with early stopping, order kept), the
//! bound on the rate of a finding that never came back ([`upper_bound_95`])
//! and the reruns that bound a rate seen ([`instances_to_bound`]).

use crate::findings::ProgramRecord;

/// The indices (in its batch) of the programs that ran before `lead` in
/// its worker, in the order they ran. Records that name their worker give
/// it exactly; older records (no `worker`) are read as their campaign ran
/// them: in file order, a worker restarted after each program that ended
/// one (a hang or an error).
pub fn prefix(records: &[ProgramRecord], lead: &ProgramRecord) -> Vec<usize> {
    let same_batch = records.iter().filter(|r| r.batch == lead.batch);
    if let (Some(w), Some(seq)) = (lead.worker, lead.seq) {
        let mut v: Vec<(u32, usize)> = same_batch
            .filter(|r| r.worker == Some(w))
            .filter_map(|r| r.seq.filter(|&s| s < seq).map(|s| (s, r.index)))
            .collect();
        v.sort();
        return v.into_iter().map(|(_, i)| i).collect();
    }
    let mut ran = Vec::new();
    for r in same_batch {
        if r.index == lead.index {
            break;
        }
        if r.outcome.ends_worker() {
            ran.clear();
        } else if r.outcome.instances() > 0 {
            ran.push(r.index);
        }
    }
    ran
}

/// What [`halves`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Reduced {
    /// The programs kept, in their order in the prefix.
    pub kept: Vec<usize>,
    /// Subsets tested.
    pub tests: usize,
    /// Whether it is 1-minimal (one program, given that the finding does
    /// not show alone), rather than cut short by the time or by a context
    /// that neither half brings back.
    pub minimal: bool,
    /// Whether it stopped because neither half of what it kept brings the
    /// finding back: it needs programs of both (or more of them).
    pub spread: bool,
}

/// The part of `prefix` after which the finding shows (`shows`), by
/// halving with early stopping: the later half of the current set (the
/// programs nearest the finding) is tested, then the earlier; a half that
/// shows becomes the set; when neither does, the set is kept (`spread`):
/// the finding needs programs of both halves, which halving cannot find
/// and bisecting further (ddmin's complements and quarters) costs a rerun a
/// subset. At most two tests a halving, so about `2 log2(n)` in all. Given
/// that the finding was not shown alone, a single program kept is
/// 1-minimal. `shows` is the caller's: on a GPU, a rerun in a fresh worker.
pub fn halves(
    prefix: &[usize],
    shows: &mut dyn FnMut(&[usize]) -> bool,
    out_of_time: &mut dyn FnMut() -> bool,
) -> Reduced {
    let mut c = prefix.to_vec();
    let mut tests = 0;
    let stop = |c: Vec<usize>, tests, spread| Reduced {
        kept: c,
        tests,
        minimal: false,
        spread,
    };
    while c.len() >= 2 {
        let (early, late) = c.split_at(c.len() / 2);
        let (early, late) = (early.to_vec(), late.to_vec());
        let mut next = None;
        for half in [late, early] {
            if out_of_time() {
                return stop(c, tests, false);
            }
            tests += 1;
            if shows(&half) {
                next = Some(half);
                break;
            }
        }
        match next {
            Some(half) => c = half,
            None => return stop(c, tests, true),
        }
    }
    Reduced {
        kept: c,
        tests,
        minimal: true,
        spread: false,
    }
}

/// The instances of reruns, none showing it, that bound an event's rate
/// below `p` (95 %, [`upper_bound_95`]): about `3 / p`, the reruns a lead
/// seen at rate `p` needs and no more.
pub fn instances_to_bound(p: f64) -> u64 {
    if p.is_nan() || p <= 0.0 {
        return u64::MAX;
    }
    if p >= 1.0 {
        return 1;
    }
    (0.05f64.ln() / (1.0 - p).ln()).ceil().max(1.0) as u64
}

/// The 95 % upper confidence bound on the rate of an event never seen in
/// `n` independent tries (exact, one-sided: `1 - 0.05^(1/n)`, about 3/n).
pub fn upper_bound_95(n: u64) -> f64 {
    if n == 0 {
        1.0
    } else {
        1.0 - 0.05f64.powf(1.0 / n as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::{Class, Outcome};

    fn rec(index: usize, outcome: Outcome, worker: Option<(u64, u32)>) -> ProgramRecord {
        ProgramRecord {
            batch: "b0000".into(),
            index,
            name: format!("p{index}"),
            class: Class::Pass,
            detail: String::new(),
            shape: String::new(),
            known_hang: None,
            oracle: "axiom".into(),
            outcome,
            worker: worker.map(|w| w.0),
            seq: worker.map(|w| w.1),
        }
    }

    fn ran() -> Outcome {
        Outcome::Ran {
            histogram: Vec::new(),
            instances: 4,
            launch_failures: 0,
            first_launch_error: None,
            elapsed_s: 0.0,
            stale: Vec::new(),
        }
    }

    fn hang() -> Outcome {
        Outcome::Hang {
            message: "stall".into(),
        }
    }

    #[test]
    fn the_prefix_is_what_ran_before_in_the_same_worker() {
        // Worker 7 ran 0, 1 and hung at 2; worker 8 ran 3, 5 (4 skipped), 6.
        let named = [
            rec(0, ran(), Some((7, 0))),
            rec(1, ran(), Some((7, 1))),
            rec(2, hang(), Some((7, 2))),
            rec(3, ran(), Some((8, 0))),
            rec(
                4,
                Outcome::NotRun {
                    reason: "skipped".into(),
                },
                None,
            ),
            rec(5, ran(), Some((8, 1))),
            rec(6, ran(), Some((8, 2))),
        ];
        assert_eq!(prefix(&named, &named[2]), [0, 1]);
        assert_eq!(prefix(&named, &named[6]), [3, 5]);
        assert_eq!(prefix(&named, &named[3]), Vec::<usize>::new());
        // Older records: the same read from the order and the hangs.
        let old: Vec<ProgramRecord> = named
            .iter()
            .cloned()
            .map(|mut r| {
                (r.worker, r.seq) = (None, None);
                r
            })
            .collect();
        assert_eq!(prefix(&old, &old[2]), [0, 1]);
        assert_eq!(prefix(&old, &old[6]), [3, 5]);
    }

    /// A stand-in for the GPU: the finding shows when all of `needed` ran
    /// before it; the tests it was asked are counted.
    fn needs(needed: &[usize], prefix: &[usize]) -> Reduced {
        halves(
            prefix,
            &mut |s| needed.iter().all(|n| s.contains(n)),
            &mut || false,
        )
    }

    #[test]
    fn halving_finds_the_one_earlier_program_a_finding_needs_and_stops_early() {
        let prefix: Vec<usize> = (0..40).collect();
        let r = needs(&[17], &prefix);
        assert_eq!(
            (r.kept.as_slice(), r.minimal, r.spread),
            (&[17][..], true, false)
        );
        assert!(r.tests <= 2 * 6, "{} tests", r.tests);
        // The program nearest the finding: one test a halving.
        let r = needs(&[39], &prefix);
        assert_eq!((r.kept.as_slice(), r.tests), (&[39][..], 6));
        // Two needed programs in different halves: kept with all between,
        // after two tests, and said so.
        let r = needs(&[31, 3], &prefix);
        assert_eq!(
            (r.kept.len(), r.tests, r.minimal, r.spread),
            (40, 2, false, true)
        );
        // Both in the later half: halved once, then spread.
        let r = needs(&[22, 35], &prefix);
        assert_eq!(
            (r.kept, r.tests, r.spread),
            ((20..40).collect::<Vec<_>>(), 3, true)
        );
        // Out of time at once: the prefix as it was, not minimal.
        let r = halves(&prefix, &mut |_| true, &mut || true);
        assert_eq!(
            (r.kept.len(), r.minimal, r.spread, r.tests),
            (40, false, false, 0)
        );
    }

    #[test]
    fn a_rate_seen_is_bounded_by_about_three_over_it() {
        assert_eq!(instances_to_bound(1.0), 1);
        assert_eq!(instances_to_bound(0.0), u64::MAX);
        // Seen once in 1 024 instances: about 3 000 instances, whose bound
        // is then just below the rate seen.
        let n = instances_to_bound(1.0 / 1024.0);
        assert!((3000..3100).contains(&n), "{n}");
        assert!(upper_bound_95(n) <= 1.0 / 1024.0);
        assert!(upper_bound_95(n - 1) > 1.0 / 1024.0);
        assert_eq!(instances_to_bound(0.5), 5);
    }

    #[test]
    fn the_bound_of_a_rate_never_seen_is_about_three_over_n() {
        assert_eq!(upper_bound_95(0), 1.0);
        assert!((upper_bound_95(1) - 0.95).abs() < 1e-12);
        let b = upper_bound_95(10_240);
        assert!(b > 2.9 / 10_240.0 && b < 3.0 / 10_240.0, "{b}");
    }
}
