//! Makes a drawn program well formed ([`normalize`]): within the budgets of
//! threads, operations and bulk copies, its blocks numbered, its operands
//! existing, its mbarriers and launch sites valid.

use crate::program::{GenConfig, GenLaunch, GenOp, GenProgram, GenStream};

/// Makes a drawn program well formed: at most `max_threads` threads,
/// launches by existing threads, locations that exist, events that are
/// recorded before they are waited on somewhere in the block.
pub(crate) fn normalize(mut p: GenProgram, cfg: GenConfig) -> GenProgram {
    keep_thread_budget(&mut p, cfg.max_threads);
    renumber_blocks(&mut p);
    keep_op_budget(&mut p, cfg.max_total_ops);
    keep_copy_budget(&mut p, cfg.max_agents);
    fix_operands(&mut p);
    fix_mbarriers(&mut p);
    fix_launch_sites(&mut p);
    p
}

/// Thread budget: drops threads from the end, then kernels that have none
/// (and every kernel launched by a dropped one).
fn keep_thread_budget(p: &mut GenProgram, max_threads: usize) {
    let mut budget = max_threads;
    for k in &mut p.kernels {
        let keep = k.threads.len().min(budget);
        k.threads.truncate(keep);
        budget -= keep;
    }
    let mut alive: Vec<bool> = p.kernels.iter().map(|k| !k.threads.is_empty()).collect();
    for i in 0..p.kernels.len() {
        if let GenLaunch::Device { parent, .. } = p.kernels[i].launch
            && !alive[parent]
        {
            alive[i] = false;
        }
    }
    let mut remap = vec![usize::MAX; p.kernels.len()];
    let mut kept = Vec::new();
    for (i, k) in p.kernels.drain(..).enumerate() {
        if alive[i] {
            remap[i] = kept.len();
            kept.push(k);
        }
    }
    for k in &mut kept {
        if let GenLaunch::Device { parent, .. } = &mut k.launch {
            *parent = remap[*parent];
        }
    }
    p.kernels = kept;
}

/// Blocks: one per thread as drawn, renumbered in order of appearance.
fn renumber_blocks(p: &mut GenProgram) {
    for k in &mut p.kernels {
        let mut seen: Vec<usize> = Vec::new();
        let drawn = std::mem::take(&mut k.blocks);
        for ti in 0..k.threads.len() {
            let b = drawn.get(ti).copied().unwrap_or(0);
            let pos = seen.iter().position(|&x| x == b).unwrap_or_else(|| {
                seen.push(b);
                seen.len() - 1
            });
            k.blocks.push(pos);
        }
    }
}

/// Operation budget: launches count, then the longest thread is trimmed.
fn keep_op_budget(p: &mut GenProgram, max_total_ops: usize) {
    let launches = p
        .kernels
        .iter()
        .filter(|k| matches!(k.launch, GenLaunch::Device { .. }))
        .count();
    let budget = max_total_ops.saturating_sub(launches);
    loop {
        let total: usize = p
            .kernels
            .iter()
            .flat_map(|k| &k.threads)
            .map(Vec::len)
            .sum();
        if total <= budget {
            break;
        }
        if let Some(t) = p
            .kernels
            .iter_mut()
            .flat_map(|k| k.threads.iter_mut())
            .max_by_key(|t| t.len())
        {
            t.pop();
        }
    }
}

/// Bulk copies: at most as many as keep the program within `max_agents`
/// threads and copies ([`GenConfig::max_agents`]), the later ones dropped.
fn keep_copy_budget(p: &mut GenProgram, max_agents: usize) {
    let threads: usize = p.kernels.iter().map(|k| k.threads.len()).sum();
    let mut budget = max_agents.saturating_sub(threads);
    for t in p.kernels.iter_mut().flat_map(|k| k.threads.iter_mut()) {
        t.retain(|o| {
            let copy = matches!(o, GenOp::BulkLoad(..) | GenOp::BulkStore(_));
            if copy && budget == 0 {
                return false;
            }
            budget -= usize::from(copy);
            true
        });
    }
}

/// mbarriers: each bulk load of a block gets its own (numbered in the
/// block's thread order), and an `mbarwait` names one of its block's, or
/// goes.
fn fix_mbarriers(p: &mut GenProgram) {
    for k in &mut p.kernels {
        let blocks = k.blocks.iter().max().map_or(1, |b| b + 1);
        for b in 0..blocks {
            let mut loads = 0u8;
            for (t, _) in k
                .threads
                .iter_mut()
                .zip(&k.blocks)
                .filter(|(_, x)| **x == b)
            {
                for o in t.iter_mut() {
                    if let GenOp::BulkLoad(_, bar, _) = o {
                        *bar = loads;
                        loads += 1;
                    }
                }
            }
            for (t, _) in k
                .threads
                .iter_mut()
                .zip(&k.blocks)
                .filter(|(_, x)| **x == b)
            {
                t.retain(|o| loads > 0 || !matches!(o, GenOp::MbarWait(_)));
                for o in t.iter_mut() {
                    if let GenOp::MbarWait(bar) = o {
                        *bar %= loads;
                    }
                }
            }
        }
    }
}

/// Locations that exist, `devicesync` only under CDP1, streams and events
/// of the block that uses them, and no wait on an event the block never
/// records.
fn fix_operands(p: &mut GenProgram) {
    let n_loc = p.locations as u8;
    for k in &mut p.kernels {
        for (t, &b) in k.threads.iter_mut().zip(&k.blocks) {
            for o in t.iter_mut() {
                match o {
                    GenOp::Store(l, _)
                    | GenOp::Load(l)
                    | GenOp::BulkLoad(l, ..)
                    | GenOp::BulkStore(l) => *l %= n_loc,
                    GenOp::DeviceSync(_) if !p.cdp1 => *o = GenOp::GetError,
                    // Named streams and events belong to one block: block
                    // b's are numbered from 2b + 1.
                    GenOp::Record(e, s) | GenOp::Wait(s, e) => {
                        *e = (*e - 1) % 2 + 1 + 2 * b as u8;
                        if let GenStream::Named(n) = s {
                            *n = (*n - 1) % 2 + 1 + 2 * b as u8;
                        }
                    }
                    _ => {}
                }
            }
        }
        for bi in 0..k.threads.len() {
            let recorded: Vec<u8> = k
                .threads
                .iter()
                .zip(&k.blocks)
                .filter(|(_, b)| **b == bi)
                .flat_map(|(t, _)| t)
                .filter_map(|o| match o {
                    GenOp::Record(e, _) => Some(*e),
                    _ => None,
                })
                .collect();
            for (t, _) in k
                .threads
                .iter_mut()
                .zip(&k.blocks)
                .filter(|(_, b)| **b == bi)
            {
                t.retain(|o| !matches!(o, GenOp::Wait(_, e) if !recorded.contains(e)));
            }
        }
    }
}

/// Launches by existing threads, at existing positions.
fn fix_launch_sites(p: &mut GenProgram) {
    let counts: Vec<usize> = p.kernels.iter().map(|k| k.threads.len()).collect();
    let lens: Vec<Vec<usize>> = p
        .kernels
        .iter()
        .map(|k| k.threads.iter().map(Vec::len).collect())
        .collect();
    for k in &mut p.kernels {
        if let GenLaunch::Device {
            parent,
            thread,
            pos,
            ..
        } = &mut k.launch
        {
            *thread %= counts[*parent];
            *pos %= lens[*parent][*thread] + 1;
        }
    }
}
