//! A finding shrunk: smaller programs (a kernel, a thread or an operation
//! dropped; [`candidates`]) tried while the finding persists, within a time
//! budget ([`shrink`]). What "persists" means is the caller's: on the GPU it
//! is the same class in a rebuilt and rerun candidate (`leads.rs`); the
//! driver itself knows nothing of GPUs.

use std::time::Instant;

use gridcheck_spec::{KernelLaunch, Litmus, Op, Profile};

/// Kernels launched only from `gone` kernels, transitively, with `gone`.
fn orphans(l: &Litmus, mut gone: Vec<String>) -> Vec<String> {
    loop {
        let more: Vec<String> =
            l.kernels
                .iter()
                .filter(|k| k.launch == KernelLaunch::Device && !gone.contains(&k.name))
                .filter(|k| {
                    l.kernels
                        .iter()
                        .filter(|p| !gone.contains(&p.name))
                        .all(|p| {
                            p.threads.iter().flat_map(|t| &t.ops).all(
                                |o| !matches!(o, Op::Launch { kernel, .. } if *kernel == k.name),
                            )
                        })
                })
                .map(|k| k.name.clone())
                .collect();
        if more.is_empty() {
            return gone;
        }
        gone.extend(more);
    }
}

/// `l` without the named kernels and every launch of them.
fn without_kernels(l: &Litmus, gone: &[String]) -> Litmus {
    let mut c = l.clone();
    c.kernels.retain(|k| !gone.contains(&k.name));
    for k in &mut c.kernels {
        for t in &mut k.threads {
            t.ops
                .retain(|o| !matches!(o, Op::Launch { kernel, .. } if gone.contains(kernel)));
        }
    }
    c
}

/// Every program one step smaller than `l`: a kernel dropped (with the
/// kernels only it launches), a thread dropped, one operation dropped (a
/// launch with its kernel). Unchecked: the caller validates them.
pub fn candidates(l: &Litmus) -> Vec<Litmus> {
    let mut out = Vec::new();
    for k in l.kernels.iter().skip(1) {
        out.push(without_kernels(l, &orphans(l, vec![k.name.clone()])));
    }
    for (ki, k) in l.kernels.iter().enumerate() {
        if k.threads.len() > 1 {
            for ti in 0..k.threads.len() {
                let mut c = l.clone();
                c.kernels[ki].threads.remove(ti);
                let gone = orphans(&c, Vec::new());
                out.push(without_kernels(&c, &gone));
            }
        }
    }
    for (ki, k) in l.kernels.iter().enumerate() {
        for (ti, t) in k.threads.iter().enumerate() {
            for oi in 0..t.ops.len() {
                let mut c = l.clone();
                c.kernels[ki].threads[ti].ops.remove(oi);
                let gone = orphans(&c, Vec::new());
                out.push(without_kernels(&c, &gone));
            }
        }
    }
    out
}

/// A candidate as the loader accepts it, or `None` (a condition naming a
/// register dropped, a kernel left without threads, ...).
pub fn validate(profile: Profile, l: &Litmus) -> Option<Litmus> {
    if l.kernels.iter().any(|k| k.threads.is_empty()) {
        return None;
    }
    gridcheck_spec::render::load_litmus(&gridcheck_spec::render::litmus_spec_yaml(
        profile, "shrunk", l,
    ))
    .ok()
}

/// What shrinking did.
#[derive(Debug, Clone)]
pub struct Shrunk {
    pub litmus: Litmus,
    /// Steps taken (candidates kept) and candidates tried.
    pub steps: usize,
    pub tries: usize,
    /// Whether the deadline stopped it before a fixed point.
    pub out_of_time: bool,
}

/// One step's runner: the candidates, and the index of the first for which
/// the finding persists, with how many it tried.
pub type Step<'a> = dyn FnMut(&[Litmus]) -> (Option<usize>, usize) + 'a;

/// Greedy shrinking, a step at a time: every valid candidate of the step
/// goes to `first_persisting` at once (on the GPU: one batch, one compile,
/// one worker), which says the first for which the finding persists and how
/// many it tried; that one replaces the program, until none persists or
/// `deadline` passes.
pub fn shrink(
    l: &Litmus,
    profile: Profile,
    deadline: Instant,
    first_persisting: &mut Step<'_>,
) -> Shrunk {
    let mut cur = l.clone();
    let (mut steps, mut tries) = (0, 0);
    loop {
        if Instant::now() >= deadline {
            return Shrunk {
                litmus: cur,
                steps,
                tries,
                out_of_time: true,
            };
        }
        let cands: Vec<Litmus> = candidates(&cur)
            .iter()
            .filter_map(|c| validate(profile, c))
            .collect();
        if cands.is_empty() {
            return Shrunk {
                litmus: cur,
                steps,
                tries,
                out_of_time: false,
            };
        }
        let (found, tried) = first_persisting(&cands);
        tries += tried;
        match found.and_then(|i| cands.into_iter().nth(i)) {
            Some(c) => {
                cur = c;
                steps += 1;
            }
            None => {
                return Shrunk {
                    litmus: cur,
                    steps,
                    tries,
                    out_of_time: false,
                };
            }
        }
    }
}

/// [`shrink`]'s step for a test: the candidates one at a time.
#[cfg(test)]
fn one_by_one(
    persists: &mut dyn FnMut(&Litmus) -> bool,
) -> impl FnMut(&[Litmus]) -> (Option<usize>, usize) + '_ {
    move |cs| {
        for (i, c) in cs.iter().enumerate() {
            if persists(c) {
                return (Some(i), i + 1);
            }
        }
        (None, cs.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn litmus() -> Litmus {
        let yaml = "rules:\n  - id: cdp2.t.r\n    source: { seed: s.txt, section: \"1\" }\n    quote: q\n    profile: cdp2\n    tests: [t]\ntests:\n  - name: t\n    kind: litmus\n    memory: { x: 0, y: 0 }\n    kernels:\n      - kernel: k0\n        launch: host\n        threads:\n          t0: [store y 1, record e1, launch k1 tail, record e2, store x 1]\n          t1: [load r0 y]\n      - kernel: k1\n        launch: device\n        threads:\n          t0: [load r1 x, launch k2]\n      - kernel: k2\n        launch: device\n        threads:\n          t0: [store y 2]\n    condition: exists x == 1\n    expect: allowed\n";
        gridcheck_spec::render::load_litmus(yaml).unwrap_or_else(|e| panic!("{e}"))
    }

    fn records(l: &Litmus) -> usize {
        l.kernels
            .iter()
            .flat_map(|k| &k.threads)
            .map(|t| {
                t.ops
                    .iter()
                    .filter(|o| matches!(o, Op::EventRecord { .. }))
                    .count()
            })
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn a_fake_hang_shrinks_to_its_two_records() {
        // The fake GPU: the program "hangs" while one thread records twice.
        let mut runs = 0;
        let s = shrink(
            &litmus(),
            Profile::Cdp2,
            Instant::now() + Duration::from_secs(60),
            &mut one_by_one(&mut |c| {
                runs += 1;
                records(c) >= 2
            }),
        );
        assert!(!s.out_of_time);
        assert_eq!(runs, s.tries);
        assert_eq!(s.litmus.kernels.len(), 1, "{:?}", s.litmus);
        assert_eq!(s.litmus.kernels[0].threads.len(), 1);
        let ops: Vec<String> = s.litmus.kernels[0].threads[0]
            .ops
            .iter()
            .map(|o| o.to_string())
            .collect();
        // `store x 1` stays: the condition names x's value, nothing else.
        assert_eq!(records(&s.litmus), 2, "{ops:?}");
        assert!(ops.len() <= 3, "{ops:?}");
    }

    #[test]
    fn dropping_a_launch_drops_the_kernels_only_it_reaches() {
        let l = litmus();
        let c = candidates(&l);
        assert!(c.iter().any(|c| c.kernels.len() == 1));
        // Dropping k1 drops k2 too: nothing else launches it.
        assert!(
            c.iter()
                .all(|c| c.kernels.len() != 2 || c.kernels.iter().any(|k| k.name == "k1"))
        );
        // A finding that never persists is not shrunk at all.
        let s = shrink(
            &l,
            Profile::Cdp2,
            Instant::now() + Duration::from_secs(60),
            &mut one_by_one(&mut |_| false),
        );
        assert_eq!(s.steps, 0);
        assert_eq!(s.litmus.kernels.len(), l.kernels.len());
        assert!(s.tries > 0);
        // Out of time: stops at once.
        let s = shrink(
            &l,
            Profile::Cdp2,
            Instant::now(),
            &mut one_by_one(&mut |_| true),
        );
        assert!(s.out_of_time && s.steps == 0);
    }
}
