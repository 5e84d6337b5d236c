//! The control part of a candidate execution: which device launches
//! succeed, which grids a launch waits for in its stream, what a CDP1
//! `cudaDeviceSynchronize()` waits for, and the orders these depend on.
//!
//! Two orders decide them, and neither synchronizes memory:
//!
//! - **The block's stream order.** 4.18.2.4 "Ordering and Concurrency":
//!   "If multiple threads in a thread block launch into the implicit stream,
//!   then these launches will be executed in-order", an order "dependent on
//!   the thread scheduling within the grid". The launches, event records,
//!   stream waits and device synchronizations of one block happen in one
//!   total order (a candidate enumerates every interleaving of the block's
//!   threads). A launch into an in-order stream waits for the grids before
//!   it in that stream (4.18.2.3: "kernels launched into the same stream
//!   execute in-order"); `cudaEventRecord` captures the stream's work so far
//!   and `cudaStreamWaitEvent` adds it to the stream's ("events may be used
//!   to create dependencies between streams"); waiting on an event never
//!   recorded is a no-op; several tail launches of one block run in launch
//!   order; CDP1 `cudaDeviceSynchronize()` waits for the block's launches
//!   before it in this order.
//! - **The pool order** (only when a test makes more device launches than
//!   `cudaLimitDevRuntimePendingLaunchCount`): 4.18.5.2.1.2 "When a kernel is
//!   launched, all associated configuration and parameter data is tracked
//!   until the kernel completes" and 001 "When the buffer is full, launches
//!   will set the thread's last error to
//!   `cudaErrorLaunchPendingCountExceeded`". A candidate orders every
//!   device launch (which takes a slot) and every device grid's completion
//!   (which frees one); a launch into a full pool fails, and its grid never
//!   runs (decision shared with the loom model, `crates/model` resources).
//!
//! Both orders are execution orders: `execution.rs` adds them to the graph
//! that must be acyclic, never to happens-before.

use std::collections::BTreeMap;

use crate::error::{AxiomError, ErrorKind};
use crate::program::{AOp, Prog, Start, Stream};

/// One resolution of the control choices.
#[derive(Debug, Clone)]
pub(crate) struct Control {
    /// Per kernel: the grid runs (host kernels always; a device kernel when
    /// its launcher ran and its launch succeeded).
    pub runs: Vec<bool>,
    /// Per kernel: the grids its launch makes it wait for in its stream.
    pub deps: Vec<Vec<usize>>,
    /// Per `devicesync` event (within the depth limit): the grids it waits for.
    pub devicesync: BTreeMap<usize, Vec<usize>>,
    /// Execution-order edges of the block stream and pool orders.
    pub order: Vec<(usize, usize)>,
}

/// Enumerates every control resolution, at most `limit` of them.
pub(crate) fn enumerate(p: &Prog, limit: usize) -> Result<Vec<Control>, AxiomError> {
    let mut out = Vec::new();
    // Every block of every kernel, as (kernel, block).
    let all_blocks: Vec<(usize, usize)> = p
        .kernels
        .iter()
        .enumerate()
        .flat_map(|(ki, k)| (0..k.blocks.len()).map(move |b| (ki, b)))
        .collect();
    for (runs, pool_order) in pool_choices(p, limit)? {
        let mut per_block: Vec<Vec<Vec<usize>>> = Vec::new();
        let mut blocks = Vec::new();
        for &(ki, b) in &all_blocks {
            if !runs[ki] || !needs_order(p, ki, b) {
                continue;
            }
            let seqs: Vec<Vec<usize>> = p.kernels[ki].blocks[b]
                .threads
                .iter()
                .map(|&t| stream_ops(p, t))
                .filter(|s| !s.is_empty())
                .collect();
            per_block.push(interleavings(&seqs, limit)?);
            blocks.push((ki, b));
        }
        // The product of the blocks' interleavings.
        let lens: Vec<usize> = per_block.iter().map(Vec::len).collect();
        for pick in product(&lens) {
            let mut c = Control {
                runs: runs.clone(),
                deps: vec![Vec::new(); p.kernels.len()],
                devicesync: BTreeMap::new(),
                order: pool_order.clone(),
            };
            for &(ki, b) in &all_blocks {
                if !runs[ki] {
                    continue;
                }
                let seq: Vec<usize> = match blocks.iter().position(|&x| x == (ki, b)) {
                    Some(bi) => {
                        let seq = per_block[bi][pick[bi]].clone();
                        c.order.extend(seq.windows(2).map(|w| (w[0], w[1])));
                        seq
                    }
                    // The order changes nothing: program order, thread by thread.
                    None => p.kernels[ki].blocks[b]
                        .threads
                        .iter()
                        .flat_map(|&t| stream_ops(p, t))
                        .collect(),
                };
                simulate_block(p, ki, &seq, &mut c);
            }
            out.push(c);
            if out.len() > limit {
                return Err(too_many(limit));
            }
        }
    }
    Ok(out)
}

/// Every choice of one index below each length (one empty choice for none).
pub(crate) fn product(lens: &[usize]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new()];
    for &n in lens {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                (0..n).map(move |i| {
                    let mut v = prefix.clone();
                    v.push(i);
                    v
                })
            })
            .collect();
    }
    out
}

fn too_many(limit: usize) -> AxiomError {
    AxiomError {
        kind: ErrorKind::BoundExceeded,
        message: format!(
            "more than {limit} control resolutions (stream and pool orders): the test is too \
             large for exhaustive enumeration"
        ),
    }
}

/// The events of thread `t`'s block stream operations, in program order.
fn stream_ops(p: &Prog, t: usize) -> Vec<usize> {
    let th = &p.threads[t];
    (0..th.ops.len())
        .filter(|&i| th.ops[i].is_block_stream_op())
        .map(|i| th.op(i))
        .collect()
}

/// Whether the order of a block's stream operations can change anything:
/// a stream with two launches, an event, or a device synchronization.
fn needs_order(p: &Prog, ki: usize, b: usize) -> bool {
    let mut launches: BTreeMap<String, usize> = BTreeMap::new();
    let mut ordered_ops = 0;
    let mut threads_with_ops = 0;
    for &t in &p.kernels[ki].blocks[b].threads {
        let th = &p.threads[t];
        let mut any = false;
        for op in &th.ops {
            match op {
                AOp::Launch { child } => {
                    any = true;
                    let key = match &p.kernels[*child].start {
                        Start::Device { stream, .. } => match stream {
                            Stream::InOrder(n) => format!("s:{n}"),
                            Stream::Tail => "tail".to_string(),
                            Stream::FireAndForget => continue,
                        },
                        _ => continue,
                    };
                    *launches.entry(key).or_default() += 1;
                }
                AOp::Record { .. } | AOp::WaitEvent { .. } | AOp::DeviceSync { .. } => {
                    any = true;
                    ordered_ops += 1;
                }
                _ => {}
            }
        }
        threads_with_ops += usize::from(any);
    }
    threads_with_ops > 1 && (ordered_ops > 0 || launches.values().any(|&n| n > 1))
}

/// Replays one block's stream operations in `seq`'s order: its NULL
/// stream, named streams, events and launches are its own (4.18.2.4: "the
/// implicit NULL stream is only shared by all threads within a thread
/// block"; 001, `cudaDeviceSynchronize()`: "all work launched by any thread
/// in the thread-block"). Named streams and events of the DSL belong to one
/// block each (the loader checks it), so the tail stream is the only other
/// one a grid's blocks could share: several blocks' tail launches are not
/// ordered with each other (the seeds say nothing of their order).
fn simulate_block(p: &Prog, ki: usize, seq: &[usize], c: &mut Control) {
    let mut streams: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut events: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut launched: Vec<usize> = Vec::new();
    let key = |s: &Stream| match s {
        Stream::InOrder(n) => format!("s:{n}"),
        Stream::Tail => "tail".to_string(),
        Stream::FireAndForget => "faf".to_string(),
    };
    for &e in seq {
        let Some((t, i)) = locate(p, ki, e) else {
            continue;
        };
        match &p.threads[t].ops[i] {
            AOp::Launch { child } => {
                if !c.runs[*child] {
                    continue;
                }
                launched.push(*child);
                if let Start::Device { stream, .. } = &p.kernels[*child].start {
                    if *stream == Stream::FireAndForget {
                        continue;
                    }
                    let slot = streams.entry(key(stream)).or_default();
                    c.deps[*child] = std::mem::replace(slot, vec![*child]);
                }
            }
            AOp::Record { event, stream } => {
                let cur = streams.get(&key(stream)).cloned().unwrap_or_default();
                events.insert(event.clone(), cur);
            }
            AOp::WaitEvent { stream, event } => {
                let add = events.get(event).cloned().unwrap_or_default();
                let slot = streams.entry(key(stream)).or_default();
                for g in add {
                    if !slot.contains(&g) {
                        slot.push(g);
                    }
                }
            }
            AOp::DeviceSync { .. } if (p.kernels[ki].depth as u64) <= p.sync_depth => {
                c.devicesync.insert(e, launched.clone());
            }
            _ => {}
        }
    }
}

/// The thread and operation index of event `e` among kernel `ki`'s threads.
pub(crate) fn locate(p: &Prog, ki: usize, e: usize) -> Option<(usize, usize)> {
    p.kernels[ki].threads.iter().find_map(|&t| {
        let th = &p.threads[t];
        (e > th.start() && e < th.exit()).then(|| (t, e - th.start() - 1))
    })
}

/// Every interleaving of the sequences (each kept in its order).
fn interleavings(seqs: &[Vec<usize>], limit: usize) -> Result<Vec<Vec<usize>>, AxiomError> {
    fn go(
        seqs: &[Vec<usize>],
        pos: &mut [usize],
        cur: &mut Vec<usize>,
        out: &mut Vec<Vec<usize>>,
        limit: usize,
    ) -> Result<(), AxiomError> {
        if seqs.iter().zip(pos.iter()).all(|(s, &p)| p == s.len()) {
            out.push(cur.clone());
            if out.len() > limit {
                return Err(too_many(limit));
            }
            return Ok(());
        }
        for i in 0..seqs.len() {
            if pos[i] < seqs[i].len() {
                cur.push(seqs[i][pos[i]]);
                pos[i] += 1;
                go(seqs, pos, cur, out, limit)?;
                pos[i] -= 1;
                cur.pop();
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    go(
        seqs,
        &mut vec![0; seqs.len()],
        &mut Vec::new(),
        &mut out,
        limit,
    )?;
    Ok(out)
}

/// A pool event: a device launch takes a slot, a device grid's completion
/// frees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PoolEvent {
    Take(usize),
    Release(usize),
}

/// Which grids run, with the pool order's execution edges. Without a pool
/// that can fill, every grid runs and nothing is ordered.
#[allow(clippy::type_complexity)]
fn pool_choices(
    p: &Prog,
    limit: usize,
) -> Result<Vec<(Vec<bool>, Vec<(usize, usize)>)>, AxiomError> {
    let Some(size) = p.pool else {
        return Ok(vec![(vec![true; p.kernels.len()], Vec::new())]);
    };
    let device: Vec<usize> = (0..p.kernels.len())
        .filter(|&k| matches!(p.kernels[k].start, Start::Device { .. }))
        .collect();
    let items: Vec<PoolEvent> = device
        .iter()
        .flat_map(|&c| [PoolEvent::Take(c), PoolEvent::Release(c)])
        .collect();
    let mut out = Vec::new();
    let mut used = vec![false; items.len()];
    let mut cur = Vec::new();
    permute(p, size, &items, &mut used, &mut cur, &mut out, limit)?;
    Ok(out)
}

#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn permute(
    p: &Prog,
    size: usize,
    items: &[PoolEvent],
    used: &mut [bool],
    cur: &mut Vec<PoolEvent>,
    out: &mut Vec<(Vec<bool>, Vec<(usize, usize)>)>,
    limit: usize,
) -> Result<(), AxiomError> {
    if cur.len() == items.len() {
        out.push(replay_pool(p, size, cur));
        if out.len() > limit {
            return Err(too_many(limit));
        }
        return Ok(());
    }
    for i in 0..items.len() {
        if used[i] {
            continue;
        }
        // A grid completes after its launch; a launch by a device grid comes
        // after that grid's own launch.
        let ok = match items[i] {
            PoolEvent::Release(c) => cur.contains(&PoolEvent::Take(c)),
            PoolEvent::Take(c) => match p.kernels[c].start {
                Start::Device { parent, .. } => match p.kernels[parent].start {
                    Start::Device { .. } => cur.contains(&PoolEvent::Take(parent)),
                    _ => true,
                },
                _ => true,
            },
        };
        if !ok {
            continue;
        }
        used[i] = true;
        cur.push(items[i]);
        permute(p, size, items, used, cur, out, limit)?;
        cur.pop();
        used[i] = false;
    }
    Ok(())
}

fn replay_pool(p: &Prog, size: usize, order: &[PoolEvent]) -> (Vec<bool>, Vec<(usize, usize)>) {
    let mut runs: Vec<bool> = p
        .kernels
        .iter()
        .map(|k| !matches!(k.start, Start::Device { .. }))
        .collect();
    let mut held = 0;
    let mut nodes = Vec::new();
    for &e in order {
        match e {
            PoolEvent::Take(c) => {
                let Start::Device {
                    parent, thread, op, ..
                } = p.kernels[c].start
                else {
                    continue;
                };
                if !runs[parent] {
                    continue;
                }
                if held < size {
                    held += 1;
                    runs[c] = true;
                }
                nodes.push(p.threads[thread].op(op));
            }
            PoolEvent::Release(c) => {
                if runs[c] {
                    held -= 1;
                    nodes.push(p.kernels[c].finished);
                }
            }
        }
    }
    let edges = nodes.windows(2).map(|w| (w[0], w[1])).collect();
    (runs, edges)
}
