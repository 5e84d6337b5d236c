//! The mutation operators: each takes a litmus test and returns, for every
//! site where it applies, the test with exactly one guarantee removed (a
//! barrier, an order, a stream, a wait, ...). Operators are syntactic; which
//! of their results really lose a guarantee the oracles decide (`judge.rs`).

use gridcheck_spec::{KernelLaunch, Litmus, Op, StreamRef};

/// One way to remove a guarantee.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Operator {
    /// Drop one `syncthreads` from every thread of its kernel.
    DropSyncthreads,
    /// Move a store to just after the next launch of its thread.
    StoreAfterLaunch,
    /// A tail launch goes into the fire-and-forget stream.
    TailToFireAndForget,
    /// A tail launch goes into a stream of its own.
    TailToStream,
    /// A launch into the block's NULL stream goes into a stream of its own.
    NullToStream,
    /// A launch into a named stream goes into another, new stream.
    StreamToOtherStream,
    /// A kernel launched by a device-launched kernel is launched by that
    /// kernel's launcher instead, right after it, into the same stream: a
    /// sibling instead of a successor.
    ReaderAsSibling,
    /// Drop a `waitevent`.
    DropWaitevent,
    /// Drop a `gridsync`.
    DropGridsync,
    /// Move the loads right after a `gridsync` to just before it.
    LoadsBeforeGridsync,
    /// Drop a `devicesync` (CDP1).
    DropDevicesync,
    /// Move the loads right after a `devicesync` to just before it.
    LoadsBeforeDevicesync,
    /// A host-launched kernel that follows another gets the PDL attribute.
    AddPdl,
    /// Move a `trigger` to the start of its thread, before its writes.
    TriggerFirst,
}

impl Operator {
    pub const ALL: [Operator; 14] = [
        Operator::DropSyncthreads,
        Operator::StoreAfterLaunch,
        Operator::TailToFireAndForget,
        Operator::TailToStream,
        Operator::NullToStream,
        Operator::StreamToOtherStream,
        Operator::ReaderAsSibling,
        Operator::DropWaitevent,
        Operator::DropGridsync,
        Operator::LoadsBeforeGridsync,
        Operator::DropDevicesync,
        Operator::LoadsBeforeDevicesync,
        Operator::AddPdl,
        Operator::TriggerFirst,
    ];

    /// The operator's name in a mutant's name (`<test>~<name>`).
    pub fn name(self) -> &'static str {
        match self {
            Operator::DropSyncthreads => "drop-syncthreads",
            Operator::StoreAfterLaunch => "store-after-launch",
            Operator::TailToFireAndForget => "tail-to-fire-and-forget",
            Operator::TailToStream => "tail-to-stream",
            Operator::NullToStream => "null-to-stream",
            Operator::StreamToOtherStream => "stream-to-other-stream",
            Operator::ReaderAsSibling => "reader-as-sibling",
            Operator::DropWaitevent => "drop-waitevent",
            Operator::DropGridsync => "drop-gridsync",
            Operator::LoadsBeforeGridsync => "loads-before-gridsync",
            Operator::DropDevicesync => "drop-devicesync",
            Operator::LoadsBeforeDevicesync => "loads-before-devicesync",
            Operator::AddPdl => "add-pdl",
            Operator::TriggerFirst => "trigger-first",
        }
    }

    pub fn parse(s: &str) -> Option<Operator> {
        Operator::ALL.into_iter().find(|o| o.name() == s)
    }

    /// The guarantee the operator removes, as a driver would break it.
    pub fn guarantee(self) -> &'static str {
        match self {
            Operator::DropSyncthreads => {
                "a block barrier orders the writes of every thread of the block before what follows it, a launch included"
            }
            Operator::StoreAfterLaunch => {
                "a parent's writes before a launch are visible to the child"
            }
            Operator::TailToFireAndForget | Operator::TailToStream => {
                "a tail launch runs after the launching grid and all its work"
            }
            Operator::NullToStream => "launches into a block's NULL stream run in order",
            Operator::StreamToOtherStream => "launches into one stream run in order",
            Operator::ReaderAsSibling => {
                "a grid sees the writes its parent made before launching it"
            }
            Operator::DropWaitevent => {
                "cudaStreamWaitEvent makes a stream wait for the recorded work"
            }
            Operator::DropGridsync | Operator::LoadsBeforeGridsync => {
                "cudaGridDependencySynchronize waits for the primary grid and its writes"
            }
            Operator::DropDevicesync | Operator::LoadsBeforeDevicesync => {
                "cudaDeviceSynchronize in device code waits for the block's child grids"
            }
            Operator::AddPdl => {
                "without the PDL attribute a kernel starts after the previous kernel of its stream completes"
            }
            Operator::TriggerFirst => {
                "a PDL secondary does not start before the primary's blocks trigger or exit"
            }
        }
    }

    /// Every single-site application of the operator to `l`: a description
    /// of the site and the mutated test.
    pub fn apply(self, l: &Litmus) -> Vec<(String, Litmus)> {
        match self {
            Operator::DropSyncthreads => drop_barrier(l),
            Operator::StoreAfterLaunch => store_after_launch(l),
            Operator::TailToFireAndForget => restream(l, |s| {
                matches!(s, StreamRef::Tail).then_some(StreamRef::FireAndForget)
            }),
            Operator::TailToStream => restream(l, |s| {
                matches!(s, StreamRef::Tail).then(|| StreamRef::Named(fresh_stream(l)))
            }),
            Operator::NullToStream => restream(l, |s| {
                matches!(s, StreamRef::Null).then(|| StreamRef::Named(fresh_stream(l)))
            }),
            Operator::StreamToOtherStream => restream(l, |s| {
                matches!(s, StreamRef::Named(_)).then(|| StreamRef::Named(fresh_stream(l)))
            }),
            Operator::ReaderAsSibling => reader_as_sibling(l),
            Operator::DropWaitevent => drop_op(l, |op| matches!(op, Op::StreamWaitEvent { .. })),
            Operator::DropGridsync => drop_op(l, |op| matches!(op, Op::GridDependencySync)),
            Operator::LoadsBeforeGridsync => {
                loads_before(l, |op| matches!(op, Op::GridDependencySync))
            }
            Operator::DropDevicesync => drop_op(l, |op| matches!(op, Op::DeviceSynchronize { .. })),
            Operator::LoadsBeforeDevicesync => {
                loads_before(l, |op| matches!(op, Op::DeviceSynchronize { .. }))
            }
            Operator::AddPdl => add_pdl(l),
            Operator::TriggerFirst => trigger_first(l),
        }
    }
}

/// Every (kernel, thread, op) position of `l`.
fn positions(l: &Litmus) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
    l.kernels.iter().enumerate().flat_map(|(k, kernel)| {
        kernel
            .threads
            .iter()
            .enumerate()
            .flat_map(move |(t, th)| (0..th.ops.len()).map(move |i| (k, t, i)))
    })
}

fn site(l: &Litmus, k: usize, t: usize, i: usize) -> String {
    let kernel = &l.kernels[k];
    let th = &kernel.threads[t];
    format!("{}.{} op {} `{}`", kernel.name, th.name, i + 1, th.ops[i])
}

/// A stream name no operation of `l` uses.
fn fresh_stream(l: &Litmus) -> String {
    let used = |name: &str| {
        positions(l).any(|(k, t, i)| match &l.kernels[k].threads[t].ops[i] {
            Op::Launch {
                stream: StreamRef::Named(s),
                ..
            }
            | Op::EventRecord {
                stream: StreamRef::Named(s),
                ..
            }
            | Op::StreamWaitEvent {
                stream: StreamRef::Named(s),
                ..
            } => s == name,
            _ => false,
        })
    };
    (0..)
        .map(|n| {
            if n == 0 {
                "sm".to_string()
            } else {
                format!("sm{n}")
            }
        })
        .find(|s| !used(s))
        .unwrap_or_else(|| "sm".to_string())
}

fn drop_barrier(l: &Litmus) -> Vec<(String, Litmus)> {
    let mut out = Vec::new();
    for (k, kernel) in l.kernels.iter().enumerate() {
        let most = kernel
            .threads
            .iter()
            .map(|t| t.ops.iter().filter(|o| **o == Op::SyncThreads).count())
            .max()
            .unwrap_or(0);
        for b in 0..most {
            let mut m = l.clone();
            for th in &mut m.kernels[k].threads {
                if let Some(i) = th
                    .ops
                    .iter()
                    .enumerate()
                    .filter(|(_, o)| **o == Op::SyncThreads)
                    .nth(b)
                    .map(|(i, _)| i)
                {
                    th.ops.remove(i);
                }
            }
            out.push((format!("{} barrier {}", kernel.name, b + 1), m));
        }
    }
    out
}

fn store_after_launch(l: &Litmus) -> Vec<(String, Litmus)> {
    let mut out = Vec::new();
    for (k, t, i) in positions(l) {
        let ops = &l.kernels[k].threads[t].ops;
        if !matches!(ops[i], Op::Store { .. }) {
            continue;
        }
        let Some(launch) = (i + 1..ops.len()).find(|&j| matches!(ops[j], Op::Launch { .. })) else {
            continue;
        };
        let mut m = l.clone();
        let ops = &mut m.kernels[k].threads[t].ops;
        let store = ops.remove(i);
        ops.insert(launch, store);
        out.push((site(l, k, t, i), m));
    }
    out
}

fn restream(l: &Litmus, to: impl Fn(&StreamRef) -> Option<StreamRef>) -> Vec<(String, Litmus)> {
    let mut out = Vec::new();
    for (k, t, i) in positions(l) {
        let Op::Launch { stream, .. } = &l.kernels[k].threads[t].ops[i] else {
            continue;
        };
        let Some(new) = to(stream) else { continue };
        let mut m = l.clone();
        if let Op::Launch { stream, .. } = &mut m.kernels[k].threads[t].ops[i] {
            *stream = new;
        }
        out.push((site(l, k, t, i), m));
    }
    out
}

fn drop_op(l: &Litmus, which: impl Fn(&Op) -> bool) -> Vec<(String, Litmus)> {
    positions(l)
        .filter(|&(k, t, i)| which(&l.kernels[k].threads[t].ops[i]))
        .map(|(k, t, i)| {
            let mut m = l.clone();
            m.kernels[k].threads[t].ops.remove(i);
            (site(l, k, t, i), m)
        })
        .collect()
}

/// The loads right after a synchronizing operation move before it: the
/// operation moves to just after them (its place among the thread's other
/// operations is kept).
fn loads_before(l: &Litmus, which: impl Fn(&Op) -> bool) -> Vec<(String, Litmus)> {
    let mut out = Vec::new();
    for (k, t, i) in positions(l) {
        let ops = &l.kernels[k].threads[t].ops;
        if !which(&ops[i]) {
            continue;
        }
        let loads = ops[i + 1..]
            .iter()
            .take_while(|o| matches!(o, Op::Load { .. }))
            .count();
        if loads == 0 {
            continue;
        }
        let mut m = l.clone();
        m.kernels[k].threads[t].ops[i..=i + loads].rotate_left(1);
        out.push((site(l, k, t, i), m));
    }
    out
}

fn reader_as_sibling(l: &Litmus) -> Vec<(String, Litmus)> {
    let mut out = Vec::new();
    for (k, t, i) in positions(l) {
        let Op::Launch { kernel: reader, .. } = &l.kernels[k].threads[t].ops[i] else {
            continue;
        };
        // The launching kernel must itself be device-launched: its launcher
        // becomes the reader's.
        let parent = &l.kernels[k];
        if parent.launch != KernelLaunch::Device {
            continue;
        }
        let Some((gk, gt, gi)) = positions(l).find(|&(a, b, c)| {
            matches!(&l.kernels[a].threads[b].ops[c], Op::Launch { kernel, .. } if *kernel == parent.name)
        }) else {
            continue;
        };
        let Op::Launch { stream, .. } = l.kernels[gk].threads[gt].ops[gi].clone() else {
            continue;
        };
        let mut m = l.clone();
        m.kernels[k].threads[t].ops.remove(i);
        m.kernels[gk].threads[gt].ops.insert(
            gi + 1,
            Op::Launch {
                kernel: reader.clone(),
                stream,
            },
        );
        out.push((site(l, k, t, i), m));
    }
    out
}

fn add_pdl(l: &Litmus) -> Vec<(String, Litmus)> {
    let mut out = Vec::new();
    let mut seen_host = false;
    for (k, kernel) in l.kernels.iter().enumerate() {
        if let KernelLaunch::Host { pdl } = kernel.launch {
            if seen_host && !pdl {
                let mut m = l.clone();
                m.kernels[k].launch = KernelLaunch::Host { pdl: true };
                out.push((
                    format!("{} launched with the PDL attribute", kernel.name),
                    m,
                ));
            }
            seen_host = true;
        }
    }
    out
}

fn trigger_first(l: &Litmus) -> Vec<(String, Litmus)> {
    positions(l)
        .filter(|&(k, t, i)| i > 0 && l.kernels[k].threads[t].ops[i] == Op::Trigger)
        .map(|(k, t, i)| {
            let mut m = l.clone();
            let ops = &mut m.kernels[k].threads[t].ops;
            let trig = ops.remove(i);
            ops.insert(0, trig);
            (site(l, k, t, i), m)
        })
        .collect()
}
