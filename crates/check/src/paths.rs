//! Which instructions can run before the first wait, following branch
//! conditions. A path that took (or did not take) a branch on a predicate
//! knows that predicate's value until an instruction that may write it, so
//! a later branch on the same predicate goes one way only, and an
//! instruction guarded by it runs or not. Kernels test one predicate twice
//! (`BRA.U !UP3` past the wait, then `BRA.U !UP3` past the loads that need
//! it): without this, the path that skips the wait and then enters the
//! loads, which no thread can take, lists those loads as early.
//!
//! Sound by construction: an instruction that may write a predicate (any
//! operand naming it, `PR`/`UPR` for all of a kind, a call for all) forgets
//! it; a path's knowledge only removes paths that contradict it; and past
//! [`STATES_PER_INSTR`] states at one instruction a path forgets all it
//! knows, which only adds paths. Predicates are per thread (`P0`-`P6`) or
//! uniform (`UP0`-`UP6`); a thread's path keeps its own values either way.

use std::collections::HashSet;

use gridcheck_sass::cfg::Cfg;
use gridcheck_sass::{Class, Function, Instr, classify};

/// Distinct knowledge states kept at one instruction before a path there
/// forgets what it knows.
pub const STATES_PER_INSTR: usize = 16;

/// A predicate as a bit: `P0`-`P6` are 0-6, `UP0`-`UP6` 8-14. `PT`/`UPT`
/// (always true) are none.
fn bit(name: &str) -> Option<u32> {
    let (base, n) = match name.strip_prefix("UP") {
        Some(n) => (8, n),
        None => (0, name.strip_prefix('P')?),
    };
    let n: u32 = n.parse().ok()?;
    (n <= 6).then_some(base + n)
}

/// A condition `P0`, `!UP3`: the predicate's bit and whether it is negated.
fn condition(text: &str) -> Option<(u32, bool)> {
    let t = text.trim();
    let (neg, name) = match t.strip_prefix('!') {
        Some(n) => (true, n),
        None => (false, t),
    };
    Some((bit(name)?, neg))
}

/// A branch's condition: its guard (`@!P0 BRA`), or the operand before the
/// label (`BRA.U !UP3, `(.L_x_1)`). `None`: unconditional, or a condition
/// this module does not read (then both ways are followed).
fn branch_condition(i: &Instr) -> Option<(u32, bool)> {
    let operand = i
        .operands
        .split("`(")
        .next()
        .map(|s| s.trim().trim_end_matches(',').trim())
        .filter(|s| !s.is_empty());
    match (&i.pred, operand) {
        (Some(p), None) => condition(p),
        (None, Some(o)) => condition(o),
        _ => None,
    }
}

/// The predicate bits an instruction may write (all of them for a call):
/// every predicate its operands name, and a whole kind for `PR`/`UPR`.
fn clobbers(i: &Instr) -> u32 {
    if classify(i) == Class::Call {
        return u32::MAX;
    }
    let mut m = 0;
    for tok in i
        .operands
        .split(|c: char| c == ',' || c.is_whitespace() || c == '[' || c == ']')
    {
        let name = tok.trim_start_matches('!');
        let name = name.split('.').next().unwrap_or("");
        match name {
            "PR" => m |= 0x7f,
            "UPR" => m |= 0x7f << 8,
            n => m |= bit(n).map_or(0, |b| 1 << b),
        }
    }
    m
}

/// What a path knows: the predicates' bits known, and their values.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
struct Known {
    known: u32,
    value: u32,
}

impl Known {
    /// The value of a condition, if known.
    fn eval(self, (b, neg): (u32, bool)) -> Option<bool> {
        (self.known & (1 << b) != 0).then(|| (self.value & (1 << b) != 0) != neg)
    }

    /// With the condition holding `holds`.
    fn with(self, (b, neg): (u32, bool), holds: bool) -> Known {
        let v = holds != neg;
        Known {
            known: self.known | (1 << b),
            value: if v {
                self.value | (1 << b)
            } else {
                self.value & !(1 << b)
            },
        }
    }

    fn forget(self, bits: u32) -> Known {
        Known {
            known: self.known & !bits,
            value: self.value & !bits,
        }
    }
}

/// The instructions that can run on a path from the entry that enters no
/// instruction of `avoid` (an instruction guarded by a predicate the path
/// knows false is passed, not run).
pub fn before(f: &Function, cfg: &Cfg, avoid: &[bool]) -> Vec<bool> {
    let n = f.instrs.len();
    let mut runs = vec![false; n];
    let mut seen: HashSet<(usize, Known)> = HashSet::new();
    let mut states = vec![0usize; n];
    let mut stack = vec![(0usize, Known::default())];
    while let Some((k, mut s)) = stack.pop() {
        if k >= n || avoid.get(k).copied().unwrap_or(false) || !seen.insert((k, s)) {
            continue;
        }
        states[k] += 1;
        if states[k] > STATES_PER_INSTR && s != Known::default() {
            stack.push((k, Known::default()));
            continue;
        }
        let i = &f.instrs[k];
        let guard = i.pred.as_deref().and_then(condition);
        let guard_holds = guard.and_then(|g| s.eval(g));
        let executes = guard_holds != Some(false);
        if executes {
            runs[k] = true;
        }
        let class = classify(i);
        let cond = if class == Class::Branch && i.branch_targets.is_empty() {
            branch_condition(i)
        } else {
            None
        };
        let taken = i.target.as_deref().and_then(|l| f.label(l));
        if executes && cond.is_none() {
            s = s.forget(clobbers(i));
        }
        match (class, cond, taken) {
            (Class::Branch, Some(c), Some(t)) => match s.eval(c) {
                Some(true) => stack.push((t, s)),
                Some(false) => stack.push((k + 1, s)),
                None => {
                    stack.push((t, s.with(c, true)));
                    stack.push((k + 1, s.with(c, false)));
                }
            },
            (Class::Exit, _, _) if let Some(g) = guard => match guard_holds {
                Some(true) => {}
                Some(false) => stack.push((k + 1, s)),
                None => stack.push((k + 1, s.with(g, false))),
            },
            _ => stack.extend(cfg.succ[k].iter().map(|&t| (t, s))),
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use gridcheck_sass::parse;

    fn early(body: &str) -> Vec<u64> {
        let f = &parse(&format!(".section .text.k,\"ax\"\n{body}")).unwrap()[0];
        let cfg = Cfg::new(f);
        let avoid: Vec<bool> = f
            .instrs
            .iter()
            .map(|i| classify(i) == Class::Wait)
            .collect();
        let old = cfg.from_entry(&avoid);
        let new = before(f, &cfg, &avoid);
        for k in 0..new.len() {
            assert!(!new[k] || old[k], "never more than the plain reach");
        }
        f.instrs
            .iter()
            .zip(new)
            .filter(|(i, r)| *r && i.base() == "LDG")
            .map(|(i, _)| i.addr)
            .collect()
    }

    /// The shape of a kernel that skips its wait and then the loads on the
    /// same uniform predicate; `between` goes before the second test.
    fn twice(between: &str) -> String {
        format!(
            "/*0000*/ UISETP.NE.AND UP3, UPT, UR4, URZ, UPT ;\n\
             /*0010*/ BRA.U !UP3, `(.L_x_1) ;\n\
             /*0020*/ ACQBULK ;\n\
             .L_x_1:\n{between}\
             /*0030*/ BRA.U !UP3, `(.L_x_2) ;\n\
             /*0040*/ LDG.E R2, desc[UR6][R4.64] ;\n\
             .L_x_2:\n\
             /*0050*/ @!P0 LDG.E R3, desc[UR6][R4.64] ;\n\
             /*0060*/ EXIT ;\n"
        )
    }

    #[test]
    fn a_predicate_tested_twice_keeps_its_value_until_written() {
        // The load at 0x40 runs only where UP3 held, past the wait.
        assert_eq!(early(&twice("")), [0x50]);
        // Written between the tests: the path may reach it again.
        assert_eq!(
            early(&twice(
                "/*0028*/ UISETP.GT.AND UP3, UPT, UR5, 0x7f, UPT ;\n"
            )),
            [0x40, 0x50]
        );
        // All predicates written at once, or a call: the same.
        assert_eq!(
            early(&twice(
                "/*0028*/ R2UR UR9, R0 ;\n/*002c*/ R2P PR, R0, 0x7f ;\n"
            )),
            [0x50]
        );
        assert_eq!(
            early(&twice("/*0028*/ UR2P UPR, UR0, 0x7f ;\n")),
            [0x40, 0x50]
        );
        assert_eq!(
            early(&twice("/*0028*/ CALL.REL.NOINC `(f) ;\n")),
            [0x40, 0x50]
        );
    }

    #[test]
    fn a_guard_the_path_knows_false_does_not_run() {
        // @P0 BRA past the wait; then @!P0 LDG runs only where P0 was false,
        // which is the path through the wait.
        let body = "/*0000*/ ISETP.GE.AND P0, PT, R1, R2, PT ;\n\
                    /*0010*/ @P0 BRA `(.L_x_1) ;\n\
                    /*0020*/ ACQBULK ;\n\
                    .L_x_1:\n\
                    /*0030*/ @!P0 LDG.E R3, desc[UR6][R4.64] ;\n\
                    /*0040*/ @P0 LDG.E R5, desc[UR6][R4.64] ;\n\
                    /*0050*/ @P0 EXIT ;\n\
                    /*0060*/ LDG.E R6, desc[UR6][R4.64] ;\n\
                    /*0070*/ EXIT ;\n";
        assert_eq!(early(body), [0x40]);
    }
}
