//! What the GPU campaign's generator configuration (no CDP1, no device
//! runtime limits; `cargo xtask fuzz gpu`) reaches: every operation in every
//! kind of kernel, and the shapes of the known device-runtime hangs, which
//! the campaign must meet and classify as hangs.

use std::collections::BTreeMap;

use gridcheck_litgen::{GenConfig, differential, strategy};
use gridcheck_spec::{KernelLaunch, Litmus, Op, StreamRef};
use proptest::strategy::{Strategy, ValueTree};

fn kind(l: KernelLaunch) -> &'static str {
    match l {
        KernelLaunch::Host { pdl: false } => "host",
        KernelLaunch::Host { pdl: true } => "host-pdl",
        KernelLaunch::Device => "device",
    }
}

/// The features of one program.
fn features(l: &Litmus) -> Vec<String> {
    let mut f = Vec::new();
    for k in &l.kernels {
        for t in &k.threads {
            let count = |p: fn(&Op) -> bool| t.ops.iter().filter(|o| p(o)).count();
            let tail = |o: &Op| {
                matches!(
                    o,
                    Op::Launch {
                        stream: StreamRef::Tail,
                        ..
                    }
                )
            };
            let trig = t.ops.iter().position(|o| matches!(o, Op::Trigger));
            for o in &t.ops {
                let op = o.to_string();
                f.push(format!(
                    "{}@{}",
                    op.split_whitespace().next().unwrap_or(""),
                    kind(k.launch)
                ));
            }
            if count(|o| matches!(o, Op::EventRecord { .. })) >= 2 {
                f.push("two records in a thread".into());
            }
            if count(|o| matches!(o, Op::StreamWaitEvent { .. })) >= 2 {
                f.push("two waits in a thread".into());
            }
            if let Some(i) = trig {
                if t.ops[i..].iter().any(tail) {
                    f.push(format!("trigger then tail launch@{}", kind(k.launch)));
                }
                if t.ops[..i].iter().any(tail) {
                    f.push("tail launch then trigger".into());
                }
            }
        }
    }
    f.sort();
    f.dedup();
    f
}

#[test]
fn the_gpu_generator_reaches_every_operation_in_every_kind_of_kernel_and_the_known_hangs() {
    // As `cargo xtask fuzz gpu` draws them (without `--async-proxy`).
    let cfg = GenConfig {
        max_threads: 4,
        max_total_ops: 9,
        cdp1: false,
        limits: false,
        event_weight: 3,
        async_weight: 0,
        ..GenConfig::default()
    };
    let strat = strategy(cfg);
    let mut rng = differential::runner(1);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for _ in 0..3000 {
        let p = strat.new_tree(&mut rng).unwrap().current();
        let l = p.litmus().unwrap_or_else(|e| panic!("{e}"));
        for f in features(&l) {
            *seen.entry(f).or_default() += 1;
        }
    }
    eprintln!("{seen:?}");
    let mut missing = Vec::new();
    for op in [
        "store",
        "load",
        "trigger",
        "gridsync",
        "geterror",
        "peekerror",
        "record",
        "waitevent",
        "syncthreads",
        "launch",
    ] {
        for k in ["host", "host-pdl", "device"] {
            missing.push(format!("{op}@{k}"));
        }
    }
    missing.extend(
        [
            "two records in a thread",
            "two waits in a thread",
            "trigger then tail launch@host",
            "tail launch then trigger",
        ]
        .map(String::from),
    );
    missing.retain(|f| !seen.contains_key(f));
    assert!(
        missing.is_empty(),
        "not reached in 3000 programs: {missing:?}"
    );
    // A feature the generator cannot make is reported (the check can fail).
    assert!(!seen.contains_key("devicesync@host"));
}

#[test]
fn with_the_asynchronous_proxy_the_gpu_generator_reaches_its_operations_in_every_kind_of_kernel() {
    // As `cargo xtask fuzz gpu --async-proxy` draws them.
    let cfg = GenConfig {
        max_threads: 4,
        max_total_ops: 9,
        cdp1: false,
        limits: false,
        event_weight: 3,
        async_weight: 1,
        max_agents: 8,
        ..GenConfig::default()
    };
    let strat = strategy(cfg);
    let mut rng = differential::runner(1);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for _ in 0..3000 {
        let p = strat.new_tree(&mut rng).unwrap().current();
        let l = p.litmus().unwrap_or_else(|e| panic!("{e}"));
        assert!(gridcheck_model::loom_agents(&l) <= 8);
        for f in features(&l) {
            *seen.entry(f).or_default() += 1;
        }
    }
    let mut missing = Vec::new();
    for op in [
        "bulkload",
        "bulkstore",
        "mbarwait",
        "bulkcommit",
        "bulkwait",
        "fence.proxy.async",
    ] {
        for k in ["host", "host-pdl", "device"] {
            missing.push(format!("{op}@{k}"));
        }
    }
    missing.retain(|f| !seen.contains_key(f));
    assert!(
        missing.is_empty(),
        "not reached in 3000 programs: {missing:?}"
    );
}
