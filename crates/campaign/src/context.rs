//! A finding's context: the programs its worker ran before it
//! ([`prefix`], from the records), the smallest part of that prefix that
//! brings the finding back ([`ddmin`], delta debugging over programs,
//! order kept), and the bound on the rate of a finding that never came back
//! ([`upper_bound_95`]).

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

/// What [`ddmin`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Reduced {
    /// The programs kept, in their order in the prefix.
    pub kept: Vec<usize>,
    /// Subsets tested.
    pub tests: usize,
    /// Whether it is 1-minimal (no program of it can go), rather than cut
    /// short by the time.
    pub minimal: bool,
}

/// `c` cut into `n` nearly equal runs, in order.
fn chunks(c: &[usize], n: usize) -> Vec<Vec<usize>> {
    let n = n.clamp(1, c.len().max(1));
    (0..n)
        .map(|i| c[i * c.len() / n..(i + 1) * c.len() / n].to_vec())
        .filter(|v| !v.is_empty())
        .collect()
}

/// The smallest subsequence of `prefix` after which the finding shows
/// (`shows`), by delta debugging (ddmin: Zeller and Hildebrandt, 2002):
/// each of `n` runs of the current set, then each complement, is tested; a
/// run that shows becomes the set, a complement that shows too (with one
/// run fewer); when none does the runs are halved, until they are single
/// programs. Given that the whole prefix shows and the empty one does not
/// (the finding was not shown alone), the result is 1-minimal unless
/// `out_of_time` stopped it first. `shows` is the caller's: on a GPU, a
/// few reruns in fresh workers.
pub fn ddmin(
    prefix: &[usize],
    shows: &mut dyn FnMut(&[usize]) -> bool,
    out_of_time: &mut dyn FnMut() -> bool,
) -> Reduced {
    let mut c = prefix.to_vec();
    let mut n = 2;
    let mut tests = 0;
    while c.len() >= 2 {
        if out_of_time() {
            return Reduced {
                kept: c,
                tests,
                minimal: false,
            };
        }
        let parts = chunks(&c, n);
        let mut next = None;
        for p in &parts {
            tests += 1;
            if shows(p) {
                next = Some((p.clone(), 2));
                break;
            }
        }
        // With two runs each complement is the other run, tested already.
        if next.is_none() && parts.len() > 2 {
            for i in 0..parts.len() {
                let rest: Vec<usize> = parts
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != i)
                    .flat_map(|(_, p)| p.iter().copied())
                    .collect();
                tests += 1;
                if shows(&rest) {
                    next = Some((rest, (parts.len() - 1).max(2)));
                    break;
                }
            }
        }
        match next {
            Some((kept, runs)) => (c, n) = (kept, runs),
            None if parts.len() >= c.len() => break,
            None => n = (2 * parts.len()).min(c.len()),
        }
    }
    Reduced {
        kept: c,
        tests,
        minimal: true,
    }
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
        ddmin(
            prefix,
            &mut |s| needed.iter().all(|n| s.contains(n)),
            &mut || false,
        )
    }

    #[test]
    fn ddmin_finds_the_one_earlier_program_a_finding_needs() {
        let prefix: Vec<usize> = (0..40).collect();
        let r = needs(&[17], &prefix);
        assert_eq!((r.kept.as_slice(), r.minimal), (&[17][..], true));
        assert!(r.tests <= 16, "{} tests", r.tests);
        // Two needed programs far apart, the order kept.
        let r = needs(&[31, 3], &prefix);
        assert_eq!(r.kept, [3, 31]);
        // The whole prefix needed: nothing goes.
        let r = needs(&[0, 1, 2], &[0, 1, 2]);
        assert_eq!(r.kept, [0, 1, 2]);
        // Out of time at once: the prefix as it was, not minimal.
        let r = ddmin(&prefix, &mut |_| true, &mut || true);
        assert_eq!((r.kept.len(), r.minimal, r.tests), (40, false, 0));
    }

    #[test]
    fn the_bound_of_a_rate_never_seen_is_about_three_over_n() {
        assert_eq!(upper_bound_95(0), 1.0);
        assert!((upper_bound_95(1) - 0.95).abs() < 1e-12);
        let b = upper_bound_95(10_240);
        assert!(b > 2.9 / 10_240.0 && b < 3.0 / 10_240.0, "{b}");
    }
}
