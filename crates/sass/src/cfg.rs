//! A function's control flow at instruction granularity: each
//! instruction's successors (a predicated branch or exit also falls
//! through; a call returns), and which instructions a path can reach,
//! optionally avoiding some.

use crate::classify::{Class, classify};
use crate::parse::Function;

/// The successors of every instruction.
#[derive(Debug, Clone)]
pub struct Cfg {
    pub succ: Vec<Vec<usize>>,
    /// Why the graph is not the function's whole control flow (an indirect
    /// branch, a branch to a label it does not have), if it is not.
    pub incomplete: Option<String>,
}

impl Cfg {
    pub fn new(f: &Function) -> Cfg {
        let n = f.instrs.len();
        let mut succ = vec![Vec::new(); n];
        let mut incomplete = None;
        for (k, i) in f.instrs.iter().enumerate() {
            let next = (k + 1 < n).then_some(k + 1);
            // A guard (`@P0 BRA`), or a condition among the operands
            // (`BRA.U !UP0, `(.L_x_8)`, `BRA.DIV UR4, ...`): either way
            // the instruction may fall through. Anything before the target
            // counts as a condition (more edges: never fewer paths).
            let conditional_operand = i
                .operands
                .split("`(")
                .next()
                .is_some_and(|before| !before.trim().trim_end_matches(',').trim().is_empty());
            // An indirect branch with its targets annotated (a jump
            // table): it goes to one of them; its register is no condition.
            let table = !i.branch_targets.is_empty();
            let guarded = i.pred.is_some() || (conditional_operand && !table);
            match classify(i) {
                Class::Branch => {
                    // A direct branch's one label, or a jump table's labels.
                    let labels: Vec<Option<&str>> = if table {
                        i.branch_targets.iter().map(|l| Some(l.as_str())).collect()
                    } else {
                        vec![i.target.as_deref()]
                    };
                    for l in labels {
                        match l.and_then(|l| f.label(l)) {
                            Some(t) if t < n => succ[k].push(t),
                            _ => {
                                incomplete.get_or_insert_with(|| match l.filter(|_| table) {
                                    Some(l) => format!(
                                        "`{}` branches to `{l}`, which the function lacks",
                                        i.text()
                                    ),
                                    None => format!(
                                        "`{}` branches where the tier cannot follow",
                                        i.text()
                                    ),
                                });
                            }
                        }
                    }
                    if guarded {
                        succ[k].extend(next);
                    }
                }
                Class::Exit => {
                    if guarded {
                        succ[k].extend(next);
                    }
                }
                _ => succ[k].extend(next),
            }
        }
        Cfg { succ, incomplete }
    }

    /// The instructions some path of one or more steps reaches from `from`
    /// without passing through an instruction of `avoid` (those are neither
    /// entered nor left).
    pub fn reach(&self, from: &[usize], avoid: &[bool]) -> Vec<bool> {
        let mut seen = vec![false; self.succ.len()];
        let mut stack: Vec<usize> = from.iter().flat_map(|&f| self.succ[f].clone()).collect();
        while let Some(k) = stack.pop() {
            if seen[k] || avoid.get(k).copied().unwrap_or(false) {
                continue;
            }
            seen[k] = true;
            stack.extend(self.succ[k].iter().copied());
        }
        seen
    }

    /// What the entry (instruction 0, included) reaches avoiding `avoid`.
    pub fn from_entry(&self, avoid: &[bool]) -> Vec<bool> {
        if self.succ.is_empty() || avoid.first().copied().unwrap_or(false) {
            return vec![false; self.succ.len()];
        }
        let mut r = self.reach(&[0], avoid);
        r[0] = true;
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse;

    #[test]
    fn branches_fall_through_only_when_guarded() {
        let f = &parse(
            ".section .text.k,\"ax\"\n/*0000*/ @P0 BRA `(.L_a) ;\n/*0010*/ NOP ;\n.L_a:\n/*0020*/ BRA `(.L_b) ;\n/*0030*/ NOP ;\n.L_b:\n/*0040*/ @P1 EXIT ;\n/*0050*/ EXIT ;\n",
        )
        .unwrap()[0];
        let g = Cfg::new(f);
        assert_eq!(g.succ[0], vec![2, 1]);
        assert_eq!(g.succ[2], vec![4]);
        assert_eq!(g.succ[4], vec![5]);
        assert!(g.succ[5].is_empty());
        let r = g.from_entry(&[false; 6]);
        assert!(!r[3], "the instruction after an unguarded branch is dead");
        let avoid = [false, false, true, false, false, false];
        assert!(!g.from_entry(&avoid)[4]);
        assert!(g.incomplete.is_none());
        // A uniform branch's condition is an operand, not a guard.
        let f = &parse(
            ".section .text.k,\"ax\"\n.L_top:\n/*0000*/ NOP ;\n/*0010*/ BRA.U !UP0, `(.L_top) ;\n/*0020*/ EXIT ;\n",
        )
        .unwrap()[0];
        assert_eq!(Cfg::new(f).succ[1], vec![0, 2]);
        let f = &parse(".section .text.k,\"ax\"\n/*0000*/ BRX R2 ;\n").unwrap()[0];
        assert!(Cfg::new(f).incomplete.is_some());
        // A jump table, as nvdisasm annotates it (nvcc 13.3 and later for
        // sm_100 turn a thread switch into one): its targets are followed,
        // nothing falls through; a target the function lacks is named.
        let table = |targets: &str| {
            format!(
                ".section .text.k,\"ax\"\n/*0000*/ BRX R6 `(((.text.k - .) - 0x10)) (*\"BRANCH_TARGETS {targets}\"*) ;\n\
                 /*0010*/ NOP ;\n.L_x_1:\n/*0020*/ EXIT ;\n.L_x_2:\n/*0030*/ EXIT ;\n"
            )
        };
        let f = &parse(&table(".L_x_1,.L_x_2")).unwrap()[0];
        assert_eq!(f.instrs[0].branch_targets, [".L_x_1", ".L_x_2"]);
        let g = Cfg::new(f);
        assert_eq!(g.succ[0], vec![2, 3]);
        assert!(g.incomplete.is_none(), "{:?}", g.incomplete);
        let g = Cfg::new(&parse(&table(".L_x_1,.L_x_9")).unwrap()[0]);
        assert!(g.incomplete.unwrap().contains(".L_x_9"));
    }
}
