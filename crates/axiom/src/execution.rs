//! Candidate executions and the axioms that keep or reject them.
//!
//! A candidate is a control resolution ([`crate::control`]), a choice of
//! what starts each PDL secondary, and for every location a coherence order
//! `co` (a total order of its writes, the initial write first) and a
//! reads-from `rf` (each read takes the value of one write). The axioms:
//!
//! 1. **Execution order is acyclic**: `exec = hb | pdl-start |
//!    block-stream-order | pool-order` has no cycle. A cycle through a
//!    blocking wait (`gridsync`, `devicesync`) that disappears without the
//!    wait is a **deadlock**: a wait that can never return, reported as an
//!    error (as the loom model does).
//! 2. **Coherence** (000 §4.18.3.1: "Parent and child grids have coherent
//!    access to global memory"): `hb ; eco?` is irreflexive, with
//!    `eco = (rf | co | fr)+` on one location. Spelled out: `co` extends `hb`
//!    on writes (CoWW); a read does not take a write `hb`-hidden by another
//!    (CoWR), nor one `hb`-after it or `co`-after a write `hb`-after it
//!    (CoRW); two `hb`-ordered reads take `co`-ordered writes (CoRR).
//!    Nothing else constrains `co`: writes that no edge of the guide orders
//!    may land in either order, whenever they ran.
//! 3. **No load buffering** (the default, [`crate::Options::load_buffering`]
//!    `false`): `exec | rf` is acyclic: a read takes a write that executed
//!    before it. Decision: the guide says nothing about load buffering; the
//!    PTX memory model the guide builds on (Lustig et al., ASPLOS 2019,
//!    and the PTX ISA's "Memory Consistency Model") allows it for weak and
//!    relaxed accesses, forbidding only values out of thin air (`rf | dep`
//!    cycles; the DSL's stores write constants, so no test has a
//!    dependency). The suite keeps the operational reading, the one loom
//!    explores and the one the PDL "no early start" tests state: a thread
//!    that has not started cannot have written what a read returned.
//!    With `load_buffering: true` the axiom is dropped and the model gives
//!    the PTX answer; `check` reports which tests' verdicts depend on it.
//!
//! Final values come from `co` (the last write of each location), never
//! from the order in which writes ran.
//!
//! The loom model orders a location's writes by when they ran (its
//! modification order is execution order). [`crate::Options::co_follows_execution`]
//! adds that as an axiom (`exec | rf | co` acyclic), which gives the loom
//! model's state set: the cross-check compares loom with that set, and the
//! guide's set with it, so that every difference between the two oracles
//! is either this pinned limit or a bug in one of them.

use std::collections::{BTreeMap, BTreeSet};

use gridcheck_spec::State;
use gridcheck_spec::place::observe;

use crate::control::{self, Control, product};
use crate::error::{AxiomError, ErrorKind};
use crate::graph::{Bits, Graph};
use crate::options::Options;
use crate::program::{AOp, INIT, POOL_FULL, Prog, SYNC_DEPTH};
use crate::proxy::Proxies;
use crate::relations::{self, Edges};

/// What the enumeration found.
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub states: BTreeSet<State>,
    pub candidates: u64,
    pub consistent: u64,
}

/// A write's value: a store's constant, or what a bulk copy's read
/// (the event) read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Val {
    Const(u32),
    Copied(usize),
}

/// One location's `co` and `rf`, with the final value.
#[derive(Debug, Clone)]
struct LocChoice {
    /// (write event, read event) for reads from a write of another thread.
    rf_edges: Edges,
    /// Consecutive writes in `co` (the initial write left out).
    co_edges: Edges,
    /// (read event, value).
    values: Vec<(usize, Val)>,
    last: Val,
}

pub(crate) fn explore(p: &Prog, opts: &Options) -> Result<Found, AxiomError> {
    let controls = control::enumerate(p, opts.max_candidates)?;
    let acts = relations::activations(p);
    let lens: Vec<usize> = acts.iter().map(|(_, o)| o.len()).collect();
    let mut found = Found::default();
    for c in &controls {
        let (hb_edges, waits) = relations::happens_before(p, c);
        let mut hb = Graph::new(p.events);
        for &(a, b) in hb_edges.iter().chain(&waits) {
            hb.edge(a, b);
        }
        // Execution order without the PDL starts: hb, the implicit
        // trigger's wait for every exit, and the block stream and pool orders.
        let order: Edges = relations::all_exited(p, c)
            .into_iter()
            .chain(c.order.iter().copied())
            .collect();
        let mut base = hb.clone();
        for &(a, b) in &order {
            base.edge(a, b);
        }
        // The per-location choices depend on hb alone: made once a control
        // resolution, when some start order is possible.
        let mut per_loc = None;
        let mut feasible = false;
        let mut deadlock = false;
        for pick in product(&lens) {
            let activation: Vec<(usize, usize)> = acts
                .iter()
                .zip(&pick)
                .map(|((s, o), &i)| (*s, o[i]))
                .collect();
            let sched = relations::pdl_start(p, &activation);
            if !base.is_acyclic_with(&sched) {
                // A deadlock: the schedule is possible up to the wait, and
                // the wait itself waits for something after it. A cycle that
                // needs the stream, pool or start orders is only an order
                // that cannot happen.
                let mut no_wait = Graph::new(p.events);
                for &(a, b) in hb_edges.iter().chain(&order).chain(&sched) {
                    no_wait.edge(a, b);
                }
                deadlock |= no_wait.is_acyclic_with(&[]) && !hb.is_acyclic_with(&[]);
                continue;
            }
            feasible = true;
            if per_loc.is_none() {
                per_loc = Some(locations(p, c, &hb, opts)?);
            }
            let per_loc = per_loc.as_deref().unwrap_or_default();
            combine(p, c, per_loc, &base, &sched, opts, &mut found)?;
        }
        if !feasible && deadlock {
            return Err(AxiomError {
                kind: ErrorKind::Deadlock,
                message: "deadlock: some execution blocks forever (a wait whose condition can \
                          only hold after the wait returns)"
                    .into(),
            });
        }
    }
    Ok(found)
}

/// Every location's `co` and `rf` choices under one control resolution's
/// happens-before (`hb`, acyclic: it is part of a possible execution order).
fn locations(
    p: &Prog,
    c: &Control,
    hb: &Graph,
    opts: &Options,
) -> Result<Vec<Vec<LocChoice>>, AxiomError> {
    let topo = hb
        .topo_with(&[])
        .expect("happens-before is part of the acyclic execution order");
    let reach = hb.closure(&topo);
    let mut rank = vec![0; p.events];
    for (i, &e) in topo.iter().enumerate() {
        rank[e] = i;
    }
    let proxies = Proxies::new(p, c);
    let before = |a: usize, b: usize| proxies.before(&reach, a, b);
    let mut per_loc = Vec::new();
    for (loc, (_, init)) in p.memory.iter().enumerate() {
        let mut writes = vec![(INIT, Val::Const(*init))];
        let mut reads = Vec::new();
        for t in &p.threads {
            if !c.runs[t.kernel] {
                continue;
            }
            for (i, op) in t.ops.iter().enumerate() {
                match *op {
                    AOp::Store { loc: l, value } if l == loc => {
                        writes.push((t.op(i), Val::Const(value)))
                    }
                    AOp::Load { loc: l } if l == loc => reads.push(t.op(i)),
                    _ => {}
                }
            }
        }
        for cp in &p.copies {
            if !c.runs[p.threads[cp.thread].kernel] {
                continue;
            }
            for (j, &(src, dst)) in cp.words.iter().enumerate() {
                if dst == loc {
                    writes.push((cp.writes[j], Val::Copied(cp.reads[j])));
                }
                if src == loc {
                    reads.push(cp.reads[j]);
                }
            }
        }
        reads.sort_by_key(|&r| rank[r]);
        per_loc.push(location(&writes, &reads, &reach, &before, p, opts)?);
    }
    Ok(per_loc)
}

/// The candidates of one control resolution and start order: every
/// combination of the locations' choices that the execution-order axioms
/// keep, each giving a final state.
fn combine(
    p: &Prog,
    c: &Control,
    per_loc: &[Vec<LocChoice>],
    exec: &Graph,
    sched: &Edges,
    opts: &Options,
    found: &mut Found,
) -> Result<(), AxiomError> {
    // Reads-from is in the execution order unless load buffering is
    // allowed; loom's write order adds coherence order too.
    let rf_in_exec = !opts.load_buffering || opts.co_follows_execution;
    let lens: Vec<usize> = per_loc.iter().map(Vec::len).collect();
    let mut extra: Edges = sched.clone();
    let base_len = extra.len();
    for pick in product_bounded(&lens, opts.max_candidates)? {
        found.candidates += 1;
        if found.candidates > opts.max_candidates as u64 {
            return Err(AxiomError {
                kind: ErrorKind::BoundExceeded,
                message: format!(
                    "more than {} candidate executions: the test is too large",
                    opts.max_candidates
                ),
            });
        }
        if rf_in_exec {
            extra.truncate(base_len);
            for (l, &i) in pick.iter().enumerate() {
                let ch = &per_loc[l][i];
                extra.extend(&ch.rf_edges);
                if opts.co_follows_execution {
                    extra.extend(&ch.co_edges);
                }
            }
            if !exec.is_acyclic_with(&extra) {
                continue;
            }
        }
        let mut read = BTreeMap::new();
        for (l, &i) in pick.iter().enumerate() {
            read.extend(per_loc[l][i].values.iter().copied());
        }
        // A copy's write takes what its read took: a cycle of copies
        // reading each other's writes is a value out of thin air (no
        // candidate, also with load buffering allowed).
        let Some(values) = resolve_all(&read) else {
            continue;
        };
        found.consistent += 1;
        let mut state = State::new();
        for (l, &i) in pick.iter().enumerate().take(p.globals) {
            let last = resolve(per_loc[l][i].last, &read);
            state.insert(p.memory[l].0.clone(), last.unwrap_or(0));
        }
        registers(p, c, &values, &mut state);
        found.states.insert(state);
    }
    Ok(())
}

/// The value `v` stands for, following copies through what their reads
/// read; `None` for a cycle.
fn resolve(mut v: Val, read: &BTreeMap<usize, Val>) -> Option<u32> {
    for _ in 0..=read.len() {
        match v {
            Val::Const(n) => return Some(n),
            Val::Copied(r) => v = *read.get(&r)?,
        }
    }
    None
}

/// Every read's value, resolved; `None` when some is out of thin air.
fn resolve_all(read: &BTreeMap<usize, Val>) -> Option<BTreeMap<usize, u32>> {
    read.iter()
        .map(|(&r, &v)| resolve(v, read).map(|n| (r, n)))
        .collect()
}

/// Every (co, rf) of one location that the coherence axioms allow: `co`
/// extends happens-before (`reach`) on its writes, and a read is bound by
/// the accesses `before` orders before it (see `proxy.rs`).
fn location(
    writes: &[(usize, Val)],
    reads: &[usize],
    reach: &[Bits],
    before: &dyn Fn(usize, usize) -> bool,
    p: &Prog,
    opts: &Options,
) -> Result<Vec<LocChoice>, AxiomError> {
    let hb = |a: usize, b: usize| a == INIT && b != INIT || reach[a].contains(b);
    let mut out = Vec::new();
    // co: linear extensions of hb on the writes, the initial write first.
    let n = writes.len();
    let mut cos = Vec::new();
    let mut cur = vec![0usize];
    let mut used = vec![false; n];
    used[0] = true;
    linear_extensions(
        writes,
        &hb,
        &mut used,
        &mut cur,
        &mut cos,
        opts.max_candidates,
    )?;
    let thread_of = |e: usize| {
        p.threads
            .iter()
            .position(|t| e >= t.start() && e <= t.exit())
    };
    for co in &cos {
        let mut pos = vec![0usize; n];
        for (i, &w) in co.iter().enumerate() {
            pos[w] = i;
        }
        let mut rf = vec![usize::MAX; reads.len()];
        assign(0, reads, writes, &pos, before, &mut rf, &mut |rf| {
            let rf_edges = reads
                .iter()
                .zip(rf)
                .filter(|&(&r, &w)| writes[w].0 != INIT && thread_of(writes[w].0) != thread_of(r))
                .map(|(&r, &w)| (writes[w].0, r))
                .collect();
            let co_edges = co[1..]
                .windows(2)
                .map(|w| (writes[w[0]].0, writes[w[1]].0))
                .collect();
            out.push(LocChoice {
                rf_edges,
                co_edges,
                values: reads
                    .iter()
                    .zip(rf)
                    .map(|(&r, &w)| (r, writes[w].1))
                    .collect(),
                last: writes[*co.last().expect("the initial write")].1,
            });
        });
        if out.len() > opts.max_candidates {
            return Err(AxiomError {
                kind: ErrorKind::BoundExceeded,
                message: format!(
                    "more than {} coherence and reads-from choices for one location",
                    opts.max_candidates
                ),
            });
        }
    }
    Ok(out)
}

fn linear_extensions(
    writes: &[(usize, Val)],
    hb: &dyn Fn(usize, usize) -> bool,
    used: &mut [bool],
    cur: &mut Vec<usize>,
    out: &mut Vec<Vec<usize>>,
    limit: usize,
) -> Result<(), AxiomError> {
    if cur.len() == writes.len() {
        out.push(cur.clone());
        if out.len() > limit {
            return Err(AxiomError {
                kind: ErrorKind::BoundExceeded,
                message: format!("more than {limit} coherence orders for one location"),
            });
        }
        return Ok(());
    }
    for i in 0..writes.len() {
        if used[i] {
            continue;
        }
        // Every write hb-before this one is already placed.
        let ready = (0..writes.len()).all(|j| used[j] || j == i || !hb(writes[j].0, writes[i].0));
        if !ready {
            continue;
        }
        used[i] = true;
        cur.push(i);
        linear_extensions(writes, hb, used, cur, out, limit)?;
        cur.pop();
        used[i] = false;
    }
    Ok(())
}

/// Backtracking over the reads (in hb-compatible order): each takes a write
/// the coherence axioms allow given `co` (`pos`) and the earlier reads.
fn assign(
    i: usize,
    reads: &[usize],
    writes: &[(usize, Val)],
    pos: &[usize],
    hb: &dyn Fn(usize, usize) -> bool,
    rf: &mut Vec<usize>,
    emit: &mut dyn FnMut(&[usize]),
) {
    if i == reads.len() {
        emit(rf);
        return;
    }
    let r = reads[i];
    'w: for w in 0..writes.len() {
        let we = writes[w].0;
        // Not a write hb-after the read (CoRW with itself).
        if hb(r, we) {
            continue;
        }
        for (w2, &(e2, _)) in writes.iter().enumerate() {
            // CoWR: a write hb-before the read hides every write co-before it.
            if hb(e2, r) && pos[w] < pos[w2] {
                continue 'w;
            }
            // CoRW: a write hb-after the read is co-after what it read.
            if hb(r, e2) && pos[w] >= pos[w2] {
                continue 'w;
            }
        }
        // CoRR with the reads already assigned.
        for (j, &r2) in reads[..i].iter().enumerate() {
            if hb(r2, r) && pos[rf[j]] > pos[w] {
                continue 'w;
            }
            if hb(r, r2) && pos[w] > pos[rf[j]] {
                continue 'w;
            }
        }
        rf[i] = w;
        assign(i + 1, reads, writes, pos, hb, rf, emit);
    }
    rf[i] = usize::MAX;
}

/// Registers of every thread: loads from `values`, error queries from the
/// thread's last error, `devicesync` results; 0 for threads that never ran.
fn registers(p: &Prog, c: &Control, values: &BTreeMap<usize, u32>, state: &mut State) {
    for t in &p.threads {
        if !c.runs[t.kernel] {
            for r in &t.regs {
                state.insert(r.name.clone(), 0);
            }
            continue;
        }
        // The thread's loads and queries in order; a tile register's
        // segment takes `count` of them (see `program.rs`).
        let mut raw = Vec::new();
        let mut last = 0u32;
        for (i, op) in t.ops.iter().enumerate() {
            match op {
                AOp::Load { .. } => raw.push(values.get(&t.op(i)).copied().unwrap_or(0)),
                AOp::Launch { child } if !c.runs[*child] => last = POOL_FULL,
                AOp::DeviceSync { record } => {
                    let code = if (p.kernels[t.kernel].depth as u64) > p.sync_depth {
                        last = SYNC_DEPTH;
                        SYNC_DEPTH
                    } else {
                        0
                    };
                    if *record {
                        raw.push(code);
                    }
                }
                AOp::GetError => raw.push(std::mem::take(&mut last)),
                AOp::PeekError => raw.push(last),
                _ => {}
            }
        }
        let mut raw = raw.into_iter();
        for r in &t.regs {
            let v: Vec<u32> = raw.by_ref().take(r.count).collect();
            state.insert(r.name.clone(), observe(r.width, &v));
        }
    }
}

fn product_bounded(lens: &[usize], limit: usize) -> Result<Vec<Vec<usize>>, AxiomError> {
    let total = lens
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .unwrap_or(usize::MAX);
    if total > limit {
        return Err(AxiomError {
            kind: ErrorKind::BoundExceeded,
            message: format!(
                "{total} combinations of per-location choices exceed the limit of {limit}"
            ),
        });
    }
    Ok(product(lens))
}
