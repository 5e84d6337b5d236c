//! The launch figures (`kernels/bench/launch.cu`): host versus device
//! launches into each device stream, serial and fan-out, a tail-launch
//! chain, and the pending launch pool filling up.

use std::time::Instant;

use cudarc::driver::CudaFunction;

use super::buffers::{Args, DevBuf};
use super::{Bench, Outcome, PENDING_LIMIT_LAUNCH, R, col, diff, fig};

const KINDS: [(i32, &str, &str); 4] = [
    (0, "null-stream", "the NULL stream"),
    (1, "named-stream", "a named stream"),
    (2, "fire-and-forget", "the fire-and-forget stream"),
    (3, "tail-launch", "the tail launch stream"),
];

pub(super) fn launch_group(b: &Bench, out: &mut Outcome) -> R<()> {
    b.set_pending_limit(PENDING_LIMIT_LAUNCH)?;
    let m = b.module("launch")?;
    let child = b.func(&m, "child")?;
    let fan = b.func(&m, "fan")?;
    let tail = b.func(&m, "tail_link")?;
    let c = DevBuf::new(8)?;
    let total = (b.plan.micro_warmup + b.plan.micro_repeats) as u64;
    let n: i32 = if b.plan.quick { 64 } else { 256 };
    host_launches(b, out, &child, &c, total, n)?;
    host_round_trips(b, out, &child, &c, total)?;
    device_launches(b, out, &fan, &c, total, n)?;
    tail_chain(b, out, &tail, &c, total, n)
}

/// Host launches, back to back into one stream: the GPU's time per launch
/// with all of them queued, and the host's time per launch call.
fn host_launches(
    b: &Bench,
    out: &mut Outcome,
    f: &CudaFunction,
    c: &DevBuf,
    total: u64,
    n: i32,
) -> R<()> {
    c.zero_async(b.s())?;
    let rows = b.repeat_micro(|_| {
        let mut submit = 0.0;
        let t = b.time(|| {
            let t0 = Instant::now();
            for _ in 0..n {
                b.launch(f, 1, 1, 0, false, Args::default().p(c))?;
            }
            submit = t0.elapsed().as_secs_f64() * 1e6;
            Ok(())
        })?;
        Ok(vec![t / f64::from(n), submit / f64::from(n)])
    })?;
    b.check_counters(c, total * n as u64, "host launches")?;
    out.figures.push(fig(
        "launch.host.latency",
        "host launch, one stream, serial: GPU time per launch, all queued",
        "us",
        true,
        &col(&rows, 0),
        &[("launches", n.to_string())],
    )?);
    out.figures.push(fig(
        "launch.host.submit",
        "host launch call (cuLaunchKernelEx), host clock, per launch",
        "us",
        true,
        &col(&rows, 1),
        &[("launches", n.to_string())],
    )?);
    Ok(())
}

/// Host launch and synchronize: the round trip the device avoids.
fn host_round_trips(
    b: &Bench,
    out: &mut Outcome,
    f: &CudaFunction,
    c: &DevBuf,
    total: u64,
) -> R<()> {
    let rt = 32;
    c.zero_async(b.s())?;
    let rows = b.repeat_micro(|_| {
        let t = Instant::now();
        for _ in 0..rt {
            b.launch(f, 1, 1, 0, false, Args::default().p(c))?;
            b.sync("host round trip")?;
        }
        Ok(vec![t.elapsed().as_secs_f64() * 1e6 / f64::from(rt)])
    })?;
    b.check_counters(c, total * rt as u64, "host round trips")?;
    out.figures.push(fig(
        "launch.host.round-trip",
        "host launch + stream synchronize (host clock, per launch)",
        "us",
        true,
        &col(&rows, 0),
        &[("launches", rt.to_string())],
    )?);
    Ok(())
}

/// Device launches into each stream: serial from one thread, and fan-out
/// from many blocks; the cost of a launch is the parent's time above an
/// empty parent's.
fn device_launches(
    b: &Bench,
    out: &mut Outcome,
    f: &CudaFunction,
    c: &DevBuf,
    total: u64,
    n: i32,
) -> R<()> {
    let blocks: u32 = if b.plan.quick { 64 } else { 128 };
    let per_block: i32 = 16;
    for (kind, slug, name) in KINDS {
        c.zero_async(b.s())?;
        let rows = b.repeat_micro(|_| {
            let full = b.time(|| b.launch(f, 1, 1, 0, false, Args::default().i(kind).i(n).p(c)))?;
            let empty =
                b.time(|| b.launch(f, 1, 1, 0, false, Args::default().i(kind).i(0).p(c)))?;
            let wide = b.time(|| {
                b.launch(
                    f,
                    blocks,
                    1,
                    0,
                    false,
                    Args::default().i(kind).i(per_block).p(c),
                )
            })?;
            let wide0 =
                b.time(|| b.launch(f, blocks, 1, 0, false, Args::default().i(kind).i(0).p(c)))?;
            Ok(vec![full, empty, wide, wide0])
        })?;
        let want = total * (n as u64 + u64::from(blocks) * per_block as u64);
        b.check_counters(c, want, &format!("device launches into {name}"))?;
        out.figures.push(fig(
            &format!("launch.device.{slug}.latency"),
            &format!("device launch into {name}, one thread, serial (per launch)"),
            "us",
            true,
            &diff(&rows, 0, 1, f64::from(n)),
            &[("blocks", "1".into()), ("launches", n.to_string())],
        )?);
        out.figures.push(fig(
            &format!("launch.device.{slug}.throughput"),
            &format!("device launch into {name}, fan-out from {blocks} blocks (per launch)"),
            "us",
            true,
            &diff(&rows, 2, 3, f64::from(blocks) * f64::from(per_block)),
            &[
                ("blocks", blocks.to_string()),
                ("launches_per_block", per_block.to_string()),
            ],
        )?);
    }
    Ok(())
}

/// A tail-launch chain: each link tail-launches the next.
fn tail_chain(
    b: &Bench,
    out: &mut Outcome,
    f: &CudaFunction,
    c: &DevBuf,
    total: u64,
    n: i32,
) -> R<()> {
    c.zero_async(b.s())?;
    let rows = b.repeat_micro(|_| {
        let full = b.time(|| b.launch(f, 1, 1, 0, false, Args::default().i(n).p(c)))?;
        let empty = b.time(|| b.launch(f, 1, 1, 0, false, Args::default().i(0).p(c)))?;
        Ok(vec![full, empty])
    })?;
    b.check_counters(c, total * (n as u64 + 2), "the tail-launch chain")?;
    out.figures.push(fig(
        "launch.device.tail-chain.per-link",
        "tail-launch chain (per link)",
        "us",
        true,
        &diff(&rows, 0, 1, f64::from(n)),
        &[("links", n.to_string())],
    )?);
    Ok(())
}

/// The pending launch pool filling up, timed by the launching thread with
/// `%globaltimer`: one thread holds its NULL stream with a child, then
/// launches children behind it until a launch fails.
pub(super) fn pending_group(b: &Bench, out: &mut Outcome) -> R<()> {
    let limit = PENDING_LIMIT_LAUNCH;
    b.set_pending_limit(limit)?;
    let m = b.module("launch")?;
    let fill = b.func(&m, "pending_fill")?;
    let attempts = 2 * limit;
    let c = DevBuf::new(8)?;
    let flag = DevBuf::new(4)?;
    let stamps = DevBuf::new(8 * (attempts + 2))?;
    let res = DevBuf::new(8)?;
    let mut launched_total = 0u64;
    let mut launched_seen = Vec::new();
    let mut errors = Vec::new();
    let rows = b.repeat_micro(|_| {
        res.zero_async(b.s())?;
        b.launch(
            &fill,
            1,
            1,
            0,
            false,
            Args::default()
                .i(attempts as i32)
                .p(&flag)
                .p(&c)
                .p(&stamps)
                .p(&res),
        )?;
        b.sync("pending_fill")?;
        let r: Vec<u32> = res.download(2)?;
        let l = r[0] as usize;
        let st: Vec<u64> = stamps.download(attempts + 2)?;
        launched_total += l as u64 + 1;
        launched_seen.push(l);
        errors.push(r[1]);
        if l < 4 {
            return Err(format!("only {l} launches succeeded (error {})", r[1]));
        }
        let mut row = Vec::new();
        for q in 0..4 {
            let (lo, hi) = (q * l / 4, (q + 1) * l / 4);
            let ns = st[hi].saturating_sub(st[lo]) as f64;
            row.push(ns / 1000.0 / (hi - lo) as f64);
        }
        row.push(if r[1] != 0 {
            st[l + 1].saturating_sub(st[l]) as f64 / 1000.0
        } else {
            f64::NAN
        });
        Ok(row)
    })?;
    b.check_counters(&c, launched_total, "the pending pool")?;
    launched_seen.sort_unstable();
    errors.sort_unstable();
    errors.dedup();
    let launched = launched_seen[launched_seen.len() / 2];
    let errs = errors
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join(",");
    for q in 0..4 {
        out.figures.push(fig(
            &format!("launch.device.pending.fill-q{}", q + 1),
            &format!(
                "device launch into a held NULL stream, pool {}-{}% full (device clock, per launch)",
                25 * q,
                25 * (q + 1)
            ),
            "us",
            true,
            &col(&rows, q),
            &[
                ("limit", limit.to_string()),
                ("launched", launched.to_string()),
            ],
        )?);
    }
    let failed = col(&rows, 4);
    if errors == [69] {
        out.figures.push(fig(
            "launch.device.pending.full",
            "device launch into a full pool: the failing launch (device clock)",
            "us",
            true,
            &failed,
            &[
                ("limit", limit.to_string()),
                ("error", "cudaErrorLaunchPendingCountExceeded (69)".into()),
            ],
        )?);
    } else {
        out.notes.push(format!(
            "pending pool: the launches after a full pool ended with cudaError {errs}, not always 69; no figure for the failing launch"
        ));
    }
    out.notes.push(format!(
        "pending pool: limit {limit}, median {launched} launches succeeded behind the held child (errors seen: {errs})"
    ));
    Ok(())
}
