//! The order check: a modeled thread's operations, in program order, found
//! in a function's machine code by source line and class, must keep their
//! order around every primitive (the PDL wait and trigger, launches, event
//! calls, device synchronization, barriers).
//!
//! For two operations `a` before `b` in program order (one of them a
//! primitive), over the instructions each became:
//!
//! - **violation**: an instruction of `b` reaches one of `a` (so `b` can
//!   execute before `a`), and not the other way round: the compiler moved
//!   `b` above `a`, or `a` below `b`;
//! - **not checked**, with the reason: no instruction of the class at the
//!   operation's line (the compiler removed or transformed it, or it is in
//!   a function that is called, not inlined); a loop holding both (each
//!   reaches the other), or either of the offending pair (a path into or
//!   out of a loop may need a loop condition that never holds: nvcc
//!   unrolls `for (k) { if (k == 0) wait; load }` into copies that each
//!   keep a conditional wait); a predicated instruction in the offending pair
//!   (whether both execute depends on predicates the tier does not
//!   evaluate); control flow the tier cannot follow (an indirect branch);
//! - **ordered** otherwise: no path runs an instruction of `b` and then
//!   one of `a`.
//!
//! The check is about order, not presence: a path on which a guard skips
//! `a` and another runs `b` (the generated kernels guard each operation
//! with `if (gc_lead)`, and the compiler does not always merge the guards)
//! is not a reordering, and the tier does not relate guards to each other.

use crate::cfg::Cfg;
use crate::classify::{Class, classify};
use crate::parse::{Function, Instr};

/// What a program operation is, for finding its instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    Load,
    Store,
    /// `cp.async`, `__pipeline_memcpy_async`, `cp.async.bulk` into shared
    /// memory: a load that is an asynchronous copy (or a plain load, should
    /// the compiler make one).
    AsyncLoad,
    /// `cp.async.bulk` out of shared memory: a store that is an
    /// asynchronous copy (or a plain store).
    AsyncStore,
    Wait,
    Trigger,
    Launch,
    EventRecord,
    StreamWaitEvent,
    DeviceSync,
    Barrier,
}

impl OpKind {
    /// The instruction classes an operation of this kind compiles to.
    pub fn classes(self) -> &'static [Class] {
        match self {
            OpKind::Load => &[Class::GlobalLoad, Class::Atomic],
            OpKind::Store => &[Class::GlobalStore, Class::Atomic],
            OpKind::AsyncLoad => &[Class::AsyncCopy, Class::GlobalLoad],
            OpKind::AsyncStore => &[Class::AsyncCopy, Class::GlobalStore],
            OpKind::Wait => &[Class::Wait],
            OpKind::Trigger => &[Class::Trigger],
            OpKind::Launch => &[Class::Launch],
            OpKind::EventRecord => &[Class::EventRecord],
            OpKind::StreamWaitEvent => &[Class::StreamWaitEvent],
            OpKind::DeviceSync => &[Class::DeviceSync],
            OpKind::Barrier => &[Class::Barrier],
        }
    }

    /// Whether the order checks are about this kind (memory operations are
    /// checked only against primitives).
    pub fn is_primitive(self) -> bool {
        !matches!(
            self,
            OpKind::Load | OpKind::Store | OpKind::AsyncLoad | OpKind::AsyncStore
        )
    }
}

/// One operation of a thread's program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    /// How messages name it: `store x 1`, `load of in[i]`.
    pub label: String,
    pub kind: OpKind,
    /// The source lines (of the function's own file) its code is on.
    pub lines: Vec<u32>,
}

/// The answer for one pair of operations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PairResult {
    Ordered,
    Violation(String),
    NotChecked(String),
}

/// The answer for a thread's program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Pairs found in order.
    pub ordered: usize,
    pub violations: Vec<String>,
    pub not_checked: Vec<String>,
}

impl Verdict {
    pub fn merge(&mut self, other: Verdict) {
        self.ordered += other.ordered;
        self.violations.extend(other.violations);
        self.not_checked.extend(other.not_checked);
    }
}

fn describe(f: &Function, i: &Instr) -> String {
    let line = i
        .loc
        .as_ref()
        .map(|l| format!(" ({l})"))
        .unwrap_or_default();
    format!("`{}`{line} in {}", i.text(), f.name)
}

/// The instructions of `op` in `f`: on one of its lines of `file` (matched
/// by the file name's end), of one of its classes.
pub fn instances(f: &Function, file: &str, op: &Op) -> Vec<usize> {
    f.instrs
        .iter()
        .enumerate()
        .filter(|(_, i)| {
            i.loc
                .as_ref()
                .is_some_and(|l| l.file.ends_with(file) && op.lines.contains(&l.line))
                && op.kind.classes().contains(&classify(i))
        })
        .map(|(k, _)| k)
        .collect()
}

/// Checks `a` before `b`.
pub fn pair(f: &Function, g: &Cfg, file: &str, a: &Op, b: &Op) -> PairResult {
    if let Some(why) = &g.incomplete {
        return PairResult::NotChecked(format!("{}: {why}", f.name));
    }
    let (ia, ib) = (instances(f, file, a), instances(f, file, b));
    for (op, is) in [(a, &ia), (b, &ib)] {
        if is.is_empty() {
            return PairResult::NotChecked(format!(
                "`{}`: no {} at {file}:{:?} in {} (removed, transformed, or in a called function)",
                op.label,
                op.kind
                    .classes()
                    .iter()
                    .map(|c| c.name())
                    .collect::<Vec<_>>()
                    .join(" or "),
                op.lines,
                f.name
            ));
        }
    }
    let none = vec![false; f.instrs.len()];
    for &x in &ib {
        let from_b = g.reach(&[x], &none);
        for &y in &ia {
            if from_b[y] {
                let back = g.reach(&[y], &none)[x];
                // An instance inside a loop of its own (the compiler's
                // unrolled or peeled copies of a source loop, where a
                // conditional wait is copied into every iteration): the
                // path found may need a loop condition that never holds.
                let looped = g.reach(&[x], &none)[x] || g.reach(&[y], &none)[y];
                let (bi, ai) = (&f.instrs[x], &f.instrs[y]);
                if bi.pred.is_some() || ai.pred.is_some() {
                    return PairResult::NotChecked(format!(
                        "`{}` at {} reaches `{}` at {}, but one of them is predicated: the tier cannot tell whether both execute",
                        b.label,
                        describe(f, bi),
                        a.label,
                        describe(f, ai)
                    ));
                }
                if back || looped {
                    // Whether the first run of `b` can come before every
                    // `a`: the tier cannot evaluate the loop's conditions,
                    // so this is said, not judged.
                    let mut avoid = none.clone();
                    for &z in &ia {
                        avoid[z] = true;
                    }
                    let first = if g.from_entry(&avoid)[x] {
                        format!(
                            "; from the entry, `{}` at {} is reached before any `{}`: look at the loop's first iteration",
                            b.label,
                            bi.text(),
                            a.label
                        )
                    } else {
                        String::new()
                    };
                    return PairResult::NotChecked(format!(
                        "a loop holds `{}` at {} or `{}` at {} (the first reaches the second): their order is not straight-line{first}",
                        b.label,
                        describe(f, bi),
                        a.label,
                        describe(f, ai)
                    ));
                }
                return PairResult::Violation(format!(
                    "`{}` can execute before `{}`: {} reaches {}",
                    b.label,
                    a.label,
                    describe(f, bi),
                    describe(f, ai)
                ));
            }
        }
    }
    PairResult::Ordered
}

/// Checks every pair of a program (in program order) of which one is a
/// primitive.
pub fn check(f: &Function, file: &str, program: &[Op]) -> Verdict {
    let g = Cfg::new(f);
    let mut v = Verdict {
        ordered: 0,
        violations: Vec::new(),
        not_checked: Vec::new(),
    };
    for (k, a) in program.iter().enumerate() {
        for b in &program[k + 1..] {
            if !(a.kind.is_primitive() || b.kind.is_primitive()) {
                continue;
            }
            match pair(f, &g, file, a, b) {
                PairResult::Ordered => v.ordered += 1,
                PairResult::Violation(m) => v.violations.push(m),
                PairResult::NotChecked(m) => v.not_checked.push(m),
            }
        }
    }
    v
}

/// A test-only transform: swaps the instructions at `i` and `j` (their
/// addresses stay where they were), as a compiler that reordered them
/// would have emitted them.
pub fn swap(f: &mut Function, i: usize, j: usize) {
    let (ai, aj) = (f.instrs[i].addr, f.instrs[j].addr);
    f.instrs.swap(i, j);
    f.instrs[i].addr = ai;
    f.instrs[j].addr = aj;
}
