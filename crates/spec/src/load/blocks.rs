//! The blocks of a litmus kernel: how its threads name them, and the
//! block-scoped objects (named streams, events) each block uses.
//!
//! A kernel of one block names its threads `tN`; a kernel of several names
//! every thread `bM.tN`, with at least one thread in each block from `b0`
//! to the highest. A named stream or an event belongs to the block whose
//! threads use it: the DSL creates it in that block (`cudaStreamCreateWithFlags`,
//! `cudaEventCreateWithFlags`, as CDP1's "stream should be treated as
//! private to the block in which it is created" asks, and as CDP2 allows),
//! so one name used by two blocks would be two objects; the loader refuses
//! it. Sharing one stream across the blocks of a CDP2 grid needs its handle
//! passed through memory, which the runtime test
//! `c2-stream-shared-across-blocks` does.
//!
//! Shared memory locations and mbarriers are the block's own as in CUDA
//! (`__shared__`): one name used by two blocks is one object in each.
//! An mbarrier tracks one bulk load (the DSL waits for its first phase
//! only), and `mbarwait` waits on one some thread of its block loads with.

use std::collections::{BTreeMap, BTreeSet};

use super::{Cx, ItemErr};
use crate::ast::{Kernel, Op, StreamRef, Thread};
use crate::thread_name;

impl Cx {
    /// Checks how a kernel's threads name its blocks.
    pub(super) fn blocks(&mut self, kernel: &str, threads: &[Thread], ie: &ItemErr) {
        let field = format!("kernels.{kernel}.threads");
        let named: Vec<(&str, Option<usize>)> = threads
            .iter()
            .filter_map(|t| thread_name::parse(&t.name).map(|n| (t.name.as_str(), n.block)))
            .collect();
        let with = named.iter().find(|(_, b)| b.is_some());
        let without = named.iter().find(|(_, b)| b.is_none());
        if let (Some((a, _)), Some((b, _))) = (with, without) {
            self.errors.push(ie.at(
                &field,
                Some(&format!("{b}:")),
                format!(
                    "kernel `{kernel}` names threads `{a}` and `{b}`: either every thread names \
                     its block (`bM.tN`, a kernel of several blocks) or none does (`tN`, one block)"
                ),
            ));
            return;
        }
        let blocks: BTreeSet<usize> = named.iter().filter_map(|(_, b)| *b).collect();
        if blocks.len() == 1 {
            let (name, _) = with.copied().unwrap_or_default();
            self.errors.push(ie.at(
                &field,
                Some(&format!("{name}:")),
                format!(
                    "kernel `{kernel}` has one block: name its threads `t0`, `t1`, ... (`bM.tN` \
                     is for kernels of several blocks)"
                ),
            ));
        }
        if let Some(&top) = blocks.last()
            && let Some(gap) = (0..top).find(|b| !blocks.contains(b))
        {
            self.errors.push(ie.at(
                &field,
                Some(&format!("b{top}.")),
                format!(
                    "kernel `{kernel}` has threads in block b{top} but none in b{gap}: every \
                     block of the grid has at least one representative thread"
                ),
            ));
        }
    }

    /// mbarriers: each tracks at most one `bulkload` of its block, and every
    /// `mbarwait` names one a thread of its block loads with.
    pub(super) fn mbarriers(&mut self, k: &Kernel, ie: &ItemErr) {
        for b in 0..k.blocks() {
            let mut loads: BTreeMap<&str, &str> = BTreeMap::new();
            for th in k.block_threads(b) {
                for op in &th.ops {
                    if let Op::BulkLoad { bar, .. } = op
                        && let Some(first) = loads.insert(bar, &th.name)
                    {
                        self.errors.push(ie.at(
                            &format!("kernels.{}.threads.{}", k.name, th.name),
                            Some(&op.to_string()),
                            format!(
                                "mbarrier `{bar}` tracks a bulk load of `{first}` already: an \
                                 mbarrier of the DSL tracks one bulk load (its first phase); \
                                 give each its own"
                            ),
                        ));
                    }
                }
            }
            for th in k.block_threads(b) {
                for op in &th.ops {
                    if let Op::MbarWait { bar } = op
                        && !loads.contains_key(bar.as_str())
                    {
                        let whom = if k.blocks() > 1 {
                            format!("of block b{b} of kernel `{}`", k.name)
                        } else {
                            format!("of kernel `{}`", k.name)
                        };
                        self.errors.push(ie.at(
                            &format!("kernels.{}.threads.{}", k.name, th.name),
                            Some(&op.to_string()),
                            format!(
                                "`{op}` waits on mbarrier `{bar}`, which no `bulkload` {whom} \
                                 names: it would wait forever"
                            ),
                        ));
                    }
                }
            }
        }
    }

    /// Named streams and events: each used by one block, and every
    /// `waitevent` names an event some thread of its block records.
    pub(super) fn block_objects(&mut self, k: &Kernel, ie: &ItemErr) {
        let mut users: BTreeMap<(&str, &str), (usize, &str)> = BTreeMap::new();
        for th in &k.threads {
            for op in &th.ops {
                let mut objects: Vec<(&str, &str)> = Vec::new();
                match op {
                    Op::Launch {
                        stream: StreamRef::Named(s),
                        ..
                    } => objects.push(("stream", s)),
                    Op::EventRecord { event, stream } | Op::StreamWaitEvent { stream, event } => {
                        objects.push(("event", event));
                        if let StreamRef::Named(s) = stream {
                            objects.push(("stream", s));
                        }
                    }
                    _ => {}
                }
                for (kind, name) in objects {
                    let first = *users.entry((kind, name)).or_insert((th.block(), &th.name));
                    if first.0 != th.block() {
                        self.errors.push(ie.at(
                            &format!("kernels.{}.threads.{}", k.name, th.name),
                            Some(&op.to_string()),
                            format!(
                                "{kind} `{name}` is used by `{}` and `{}`, threads of different \
                                 blocks: a {kind} of the DSL is created by the block that uses \
                                 it; give each block's {kind} its own name",
                                first.1, th.name
                            ),
                        ));
                    }
                }
            }
        }
        // Events are block-scoped objects: a wait names an event some
        // thread of the same block records.
        for th in &k.threads {
            let recorded: BTreeSet<&str> = k
                .block_threads(th.block())
                .flat_map(|t| &t.ops)
                .filter_map(|op| match op {
                    Op::EventRecord { event, .. } => Some(event.as_str()),
                    _ => None,
                })
                .collect();
            for op in &th.ops {
                if let Op::StreamWaitEvent { event, .. } = op
                    && !recorded.contains(event.as_str())
                {
                    let whom = if k.blocks() > 1 {
                        format!("of block b{} of kernel `{}`", th.block(), k.name)
                    } else {
                        format!("of kernel `{}`", k.name)
                    };
                    self.errors.push(ie.at(
                        &format!("kernels.{}.threads.{}", k.name, th.name),
                        Some(&op.to_string()),
                        format!("`{op}` waits on event `{event}`, which no thread {whom} records"),
                    ));
                }
            }
        }
    }
}
