//! Random well-formed litmus programs over the whole DSL, in the manner of
//! herdtools' `diy`, as proptest strategies (so a failing program shrinks to
//! a minimal one), and the differential test of the two oracles.
//!
//! [`strategy`] draws a [`GenProgram`]: up to four kernels (host, host-pdl,
//! or launched from device code into the NULL, a named, the tail or the
//! fire-and-forget stream, at any point of a thread), one to three threads
//! each, in one block or spread over two or three (`bM.tN`), and for each
//! thread a few operations among stores, loads,
//! `syncthreads` (placed so that every thread of a block executes the same
//! number), `trigger`, `gridsync`, `devicesync` (CDP1 only), error queries,
//! event records and waits, and the asynchronous proxy (not in CDP1
//! programs: `cp.async.bulk` needs sm_90): a shared location `s`, bulk loads
//! and stores between it and the global ones, `mbarwait`, `bulkcommit`,
//! `bulkwait [read] n` and `fence.proxy.async`, with at most as many bulk
//! copies as keep the program within loom's four agents; sometimes a
//! pending launch pool smaller than the
//! launches, or a synchronization depth of 1. [`GenProgram::litmus`] builds
//! the spec's `Litmus` and checks it by loading its YAML through the spec
//! loader, so every program the oracles see is one the loader accepts.
//!
//! [`differential`] runs both oracles on many programs and classifies each
//! ([`gridcheck_oracle::Agreement`]); a conflict is shrunk and printed as a
//! ready-to-paste YAML test.

pub mod differential;
pub mod enumerate;
mod normalize;
mod program;

use proptest::prelude::*;

use normalize::normalize;
pub use program::{GenConfig, GenKernel, GenLaunch, GenOp, GenProgram, GenStream};

fn stream() -> impl Strategy<Value = GenStream> {
    prop_oneof![
        3 => Just(GenStream::Null),
        2 => (1u8..=2).prop_map(GenStream::Named),
        2 => Just(GenStream::Tail),
        1 => Just(GenStream::FireAndForget),
    ]
}

fn event_stream() -> impl Strategy<Value = GenStream> {
    prop_oneof![Just(GenStream::Null), (1u8..=2).prop_map(GenStream::Named)]
}

fn op(cdp1: bool, events: u32, bulk: u32) -> BoxedStrategy<GenOp> {
    let devicesync = if cdp1 { 2 } else { 0 };
    let base = prop_oneof![
        6 => (0u8..3, 1u32..=3).prop_map(|(l, v)| GenOp::Store(l, v)),
        6 => (0u8..3).prop_map(GenOp::Load),
        2 => Just(GenOp::Trigger),
        2 => Just(GenOp::GridSync),
        devicesync => any::<bool>().prop_map(GenOp::DeviceSync),
        1 => Just(GenOp::GetError),
        1 => Just(GenOp::PeekError),
        events => (1u8..=2, event_stream()).prop_map(|(e, s)| GenOp::Record(e, s)),
        events => (event_stream(), 1u8..=2).prop_map(|(s, e)| GenOp::Wait(s, e)),
    ];
    if cdp1 || bulk == 0 {
        return base.boxed();
    }
    // Each operation of the asynchronous proxy weighs `bulk` among the
    // others (a union of its own: proptest refuses a weight of 0 there).
    let proxy = prop_oneof![
        (1u32..=3).prop_map(GenOp::SharedStore),
        Just(GenOp::SharedLoad),
        (0u8..3, any::<bool>()).prop_map(|(l, w)| GenOp::BulkLoad(l, 0, w)),
        (0u8..2).prop_map(GenOp::MbarWait),
        (0u8..3).prop_map(GenOp::BulkStore),
        Just(GenOp::BulkCommit),
        (any::<bool>(), 0u8..2).prop_map(|(r, n)| GenOp::BulkWait(r, n)),
        Just(GenOp::ProxyFence),
    ];
    let base_weight = 18 + devicesync + 2 * events;
    prop_oneof![base_weight => base, 8 * bulk => proxy].boxed()
}

fn kernel(cfg: GenConfig, cdp1: bool, index: usize) -> impl Strategy<Value = GenKernel> {
    let launch = if index == 0 {
        Just(GenLaunch::Host { pdl: false }).boxed()
    } else {
        prop_oneof![
            1 => any::<bool>().prop_map(|pdl| GenLaunch::Host { pdl }),
            3 => (0..index, 0usize..3, 0usize..8, stream()).prop_map(|(parent, thread, pos, stream)| {
                GenLaunch::Device { parent, thread, pos, stream }
            }),
        ]
        .boxed()
    };
    let threads = prop::collection::vec(
        prop::collection::vec(
            op(cdp1, cfg.event_weight, cfg.async_weight),
            0..=cfg.max_ops,
        ),
        1..=3,
    );
    // One block most of the time; otherwise a block per thread drawn.
    let blocks = prop_oneof![
        3 => Just(vec![0; 3]),
        2 => prop::collection::vec(0usize..3, 3),
    ];
    let barrier = prop::option::weighted(0.25, prop::collection::vec(0usize..8, 3));
    (launch, threads, blocks, barrier).prop_map(|(launch, threads, blocks, barrier)| GenKernel {
        launch,
        threads,
        blocks,
        barrier,
    })
}

/// Random programs within `cfg`.
pub fn strategy(cfg: GenConfig) -> impl Strategy<Value = GenProgram> {
    let cdp1 = if cfg.cdp1 {
        prop::bool::weighted(0.25).boxed()
    } else {
        Just(false).boxed()
    };
    (cdp1, 1usize..=4).prop_flat_map(move |(cdp1, n)| {
        let kernels: Vec<_> = (0..n).map(|i| kernel(cfg, cdp1, i)).collect();
        (
            Just(cdp1),
            1usize..=3,
            kernels,
            prop::option::weighted(0.15, 1u64..=2),
            prop::option::weighted(0.1, Just(1u64)),
        )
            .prop_map(move |(cdp1, locations, kernels, pool, sync_depth)| {
                normalize(
                    GenProgram {
                        cdp1,
                        locations,
                        kernels,
                        pool: pool.filter(|_| cfg.limits),
                        sync_depth: sync_depth.filter(|_| cfg.limits),
                    },
                    cfg,
                )
            })
    })
}
