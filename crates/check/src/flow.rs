//! The dataflow: for every register at every instruction, where its value
//! may come from, as a set of [`Origin`]s, computed forward over the
//! control flow to a fixed point (sets only grow; a register that may hold
//! more than a few parameter addresses is widened to "an address in the
//! parameters, offset unknown", which then absorbs exact ones: the sets
//! form a finite lattice and the iteration ends).
//!
//! Transfer, per instruction:
//! - a constant-bank operand `c[0x0][X]` inside the parameters (from the
//!   bank offset `EIATTR_PARAM_CBANK` gives) is [`Origin::Param`] at
//!   `X - base`; the slot that holds the parameters' own address
//!   (`c[0x0][0x198]` on sm_90, `c[0x0][0x348]` on sm_100 and sm_103: how a
//!   `__grid_constant__` parameter's address is made, checked on cubins of
//!   nvcc 13.3) is [`Origin::ParamAddr`]; other bank-0 slots (launch sizes,
//!   the stack) are no origin, like immediates; other banks are memory;
//! - a move or an add of immediates keeps a parameter address's offset
//!   exact; any other arithmetic makes it unknown; every other source
//!   origin passes to the destination (an address "derives from" all it
//!   was computed from);
//! - a global load's destination is [`Origin::LoadedVia`] each pointer
//!   parameter its address derives from (a load through a parameter's own
//!   address reads the parameter: [`Origin::Param`]); shared, local and
//!   other loads, and a call's results, are [`Origin::Memory`];
//! - special registers (thread and block indices) are no origin;
//! - a guarded instruction adds to its destination's origins.

use std::collections::{BTreeMap, BTreeSet};

use gridcheck_sass::cfg::Cfg;
use gridcheck_sass::{Class, Function, Instr, access, classify};

use crate::operand::{self, Operand, Reg};

/// Where a register's value may come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Origin {
    /// The 4 bytes of the parameters at this offset (from the first).
    Param(u32),
    /// The address of the parameters' byte at this offset, if known.
    ParamAddr(Option<i64>),
    /// A value loaded from global memory through an address derived from
    /// the parameter bytes at this offset.
    LoadedVia(u32),
    /// Memory not reached through a parameter (shared or local memory,
    /// another constant bank, a call's result).
    Memory,
}

/// What the dataflow needs of the kernel's target.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    /// The parameters' offset in constant bank 0.
    pub param_base: u32,
    pub param_size: u32,
    /// The bank-0 slot holding an address and the bank-0 offset it points at.
    pub addr_slot: Option<(u32, u32)>,
}

impl Target {
    pub fn new(param_base: u32, param_size: u32) -> Target {
        let addr_slot = match param_base {
            0x210 => Some((0x198, 0x210)),
            0x380 => Some((0x348, 0x380)),
            _ => None,
        };
        Target {
            param_base,
            param_size,
            addr_slot,
        }
    }
}

type Set = BTreeSet<Origin>;
type State = BTreeMap<Reg, Set>;

const WIDEN: usize = 8;

/// Widens a set of exact parameter addresses past [`WIDEN`] (or beside an
/// unknown one) to the unknown address.
fn widen(s: &mut Set) {
    let exact = s
        .iter()
        .filter(|o| matches!(o, Origin::ParamAddr(Some(_))))
        .count();
    if exact > WIDEN || (exact > 0 && s.contains(&Origin::ParamAddr(None))) {
        s.retain(|o| !matches!(o, Origin::ParamAddr(Some(_))));
        s.insert(Origin::ParamAddr(None));
    }
}

/// How many registers an instruction's destination spans.
fn width(i: &Instr) -> u16 {
    let parts: Vec<&str> = i.opcode.split('.').collect();
    if parts.contains(&"128") {
        4
    } else if parts.contains(&"64") || parts.contains(&"WIDE") {
        2
    } else {
        1
    }
}

fn no_destination(i: &Instr) -> bool {
    matches!(
        i.base(),
        "ST" | "STG"
            | "STS"
            | "STL"
            | "RED"
            | "REDG"
            | "LDGSTS"
            | "SYNCS"
            | "BAR"
            | "BRA"
            | "BRX"
            | "EXIT"
            | "CALL"
            | "RET"
    ) || i.base().starts_with("UTMA")
        || i.base().starts_with("UBLK")
}

fn is_move_or_add(base: &str, opcode: &str) -> bool {
    matches!(
        base,
        "MOV" | "UMOV" | "IADD3" | "UIADD3" | "IADD" | "UIADD" | "R2UR" | "LDC" | "ULDC" | "LDCU"
    ) || opcode.starts_with("IMAD.MOV")
}

/// The origins of every register each access's address is made of, by
/// instruction index, after the fixed point.
pub struct Flow {
    /// Index of an instruction with a global access -> the origins of its
    /// address: (the pair's or registers' origins, the low register's).
    pub address: BTreeMap<usize, (Set, Set)>,
}

struct Run<'a> {
    f: &'a Function,
    t: Target,
}

impl Run<'_> {
    fn source(&self, op: &Operand, s: &State, wide: bool, out: &mut Set) {
        match op {
            Operand::Reg(r, pair) => {
                out.extend(s.get(r).into_iter().flatten().copied());
                if *pair || wide {
                    out.extend(s.get(&(r + 1)).into_iter().flatten().copied());
                }
            }
            Operand::Const {
                bank: 0, offset, ..
            } => {
                let base = i64::from(self.t.param_base);
                if *offset >= base && *offset < base + i64::from(self.t.param_size.max(4)) {
                    let o = (*offset - base) as u32;
                    out.insert(Origin::Param(o));
                    if wide {
                        out.insert(Origin::Param(o + 4));
                    }
                } else if let Some((slot, to)) = self.t.addr_slot
                    && (*offset == i64::from(slot) || *offset == i64::from(slot) + 4)
                {
                    out.insert(Origin::ParamAddr(Some(i64::from(to) - base)));
                }
            }
            Operand::Const { .. } => {
                out.insert(Origin::Memory);
            }
            Operand::Mem(regs) => {
                for (r, pair) in regs {
                    self.source(&Operand::Reg(*r, *pair), s, false, out);
                }
            }
            Operand::Imm(_) | Operand::Other => {}
        }
    }

    /// The origins of an access's address operand.
    fn address(&self, i: &Instr, s: &State) -> Option<(Set, Set)> {
        let (_, which) = access(i)?;
        let ops = operand::split(&i.operands);
        let mems: Vec<Vec<(Reg, bool)>> = ops
            .iter()
            .filter_map(|o| match operand::parse(o) {
                Operand::Mem(r) => Some(r),
                _ => None,
            })
            .collect();
        // A TMA or bulk operand `[UR4]` names a 64-bit address too.
        let regs = mems.get(which).or(mems.last())?;
        let mut all = Set::new();
        let mut low = Set::new();
        for (k, (r, _)) in regs.iter().enumerate() {
            self.source(&Operand::Reg(*r, true), s, false, &mut all);
            if k == 0 {
                low.extend(s.get(r).into_iter().flatten().copied());
            }
        }
        Some((all, low))
    }

    fn step(&self, i: &Instr, s: &mut State) {
        let ops: Vec<Operand> = operand::split(&i.operands)
            .into_iter()
            .map(operand::parse)
            .collect();
        if classify(i) == Class::Call {
            for set in s.values_mut() {
                set.insert(Origin::Memory);
            }
            return;
        }
        if no_destination(i) {
            return;
        }
        let base = i.base();
        let first = match ops.first() {
            Some(Operand::Other) if matches!(base, "ATOMG" | "ATOM") => 1,
            _ => 0,
        };
        let Some(Operand::Reg(dst, _)) = ops.get(first) else {
            return;
        };
        let w = width(i);
        let srcs = &ops[first + 1..];
        let mut new = Set::new();
        match base {
            "S2R" | "S2UR" | "CS2R" => {}
            "LDG" | "LD" | "ATOMG" | "ATOM" => {
                let (all, low) = self.address(i, s).unwrap_or_default();
                for o in &all {
                    if let Origin::Param(p) = o {
                        new.insert(Origin::LoadedVia(*p));
                    }
                }
                for o in &low {
                    match o {
                        Origin::ParamAddr(Some(a)) if *a >= 0 => {
                            new.insert(Origin::Param(*a as u32));
                        }
                        Origin::ParamAddr(_) => {
                            new.insert(Origin::Memory);
                        }
                        _ => {}
                    }
                }
                if new.is_empty() {
                    new.insert(Origin::Memory);
                }
            }
            "LDS" | "LDL" | "LDSM" | "ATOMS" | "LDTM" | "SULD" | "TLD" | "TEX" => {
                new.insert(Origin::Memory);
            }
            _ => {
                // `.64` makes every source a pair; `IMAD.WIDE d, a, b, c`
                // multiplies 32-bit `a` and `b` and adds the pair `c`.
                let all_wide = i.opcode.split('.').any(|p| p == "64");
                let widening = i.opcode.contains(".WIDE");
                for (n, op) in srcs.iter().enumerate() {
                    let wide = all_wide || (widening && n + 1 == srcs.len());
                    self.source(op, s, wide, &mut new);
                }
                let imms: i64 = srcs
                    .iter()
                    .filter_map(|o| match o {
                        Operand::Imm(v) => Some(*v),
                        _ => None,
                    })
                    .sum();
                let exact = is_move_or_add(base, &i.opcode)
                    && !i.opcode.contains(".X")
                    && srcs
                        .iter()
                        .filter(|o| matches!(o, Operand::Reg(..) | Operand::Const { .. }))
                        .count()
                        <= 1;
                let addrs: Vec<Origin> = new
                    .iter()
                    .filter(|o| matches!(o, Origin::ParamAddr(_)))
                    .copied()
                    .collect();
                if !i.opcode.contains(".X") {
                    for a in addrs {
                        new.remove(&a);
                        new.insert(match a {
                            Origin::ParamAddr(Some(o)) if exact => {
                                Origin::ParamAddr(Some(o + imms))
                            }
                            _ => Origin::ParamAddr(None),
                        });
                    }
                }
            }
        }
        widen(&mut new);
        for k in 0..w {
            let r = dst + k;
            if i.pred.is_some() {
                s.entry(r).or_default().extend(new.iter().copied());
            } else {
                s.insert(r, new.clone());
            }
        }
    }
}

/// Basic blocks: the start of each, and the block of each instruction.
fn blocks(cfg: &Cfg) -> (Vec<usize>, Vec<usize>) {
    let n = cfg.succ.len();
    let mut leader = vec![false; n];
    if n > 0 {
        leader[0] = true;
    }
    for (k, s) in cfg.succ.iter().enumerate() {
        if s.len() != 1 || s[0] != k + 1 {
            for &t in s {
                leader[t] = true;
            }
            if k + 1 < n {
                leader[k + 1] = true;
            }
        }
    }
    let starts: Vec<usize> = (0..n).filter(|&k| leader[k]).collect();
    let mut of = vec![0; n];
    for (b, &st) in starts.iter().enumerate() {
        let end = starts.get(b + 1).copied().unwrap_or(n);
        of[st..end].fill(b);
    }
    (starts, of)
}

/// Runs the dataflow over a function.
pub fn run(f: &Function, cfg: &Cfg, t: Target) -> Flow {
    let run = Run { f, t };
    let n = f.instrs.len();
    let (starts, of) = blocks(cfg);
    let end = |b: usize| starts.get(b + 1).copied().unwrap_or(n);
    let mut entry: Vec<Option<State>> = vec![None; starts.len()];
    if !starts.is_empty() {
        entry[0] = Some(State::new());
    }
    // The lowest block first (program order), each block queued once.
    let mut work: BTreeSet<usize> = BTreeSet::new();
    if !starts.is_empty() {
        work.insert(0);
    }
    while let Some(b) = work.pop_first() {
        let Some(mut s) = entry[b].clone() else {
            continue;
        };
        for k in starts[b]..end(b) {
            run.step(&run.f.instrs[k], &mut s);
        }
        let last = end(b) - 1;
        for &t in &cfg.succ[last] {
            let tb = of[t];
            let changed = match &mut entry[tb] {
                None => {
                    entry[tb] = Some(s.clone());
                    true
                }
                Some(old) => {
                    let mut changed = false;
                    for (r, set) in &s {
                        let o = old.entry(*r).or_default();
                        // An exact address beside the unknown one is
                        // already widened away: skipped, so that a grown
                        // set is a changed set after widening too.
                        let unknown = o.contains(&Origin::ParamAddr(None));
                        let mut grew = false;
                        for &x in set {
                            if unknown && matches!(x, Origin::ParamAddr(Some(_))) {
                                continue;
                            }
                            grew |= o.insert(x);
                        }
                        if grew {
                            widen(o);
                            changed = true;
                        }
                    }
                    changed
                }
            };
            if changed {
                work.insert(tb);
            }
        }
    }
    let mut address = BTreeMap::new();
    for (b, st) in entry.into_iter().enumerate() {
        let Some(mut s) = st else { continue };
        for k in starts[b]..end(b) {
            let i = &f.instrs[k];
            if let Some(a) = run.address(i, &s) {
                address.insert(k, a);
            }
            run.step(i, &mut s);
        }
    }
    Flow { address }
}
