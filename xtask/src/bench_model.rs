//! `cargo xtask bench model`: the model tier's cost per litmus test.
//!
//! Runs both oracles on every litmus test of the spec
//! (`gridcheck_oracle::cross_check`, exactly what the conformance harness's
//! model tier runs: loom with its default options, the axiomatic model under
//! the guide's axioms, under loom's write order and with load buffering),
//! one after the other in this process, and prints per test the threads,
//! the verdict, who decided it, the executions loom explored, the
//! preemption bound if one was needed (and the executions of the abandoned
//! exhaustive attempt), the axiomatic model's candidates, and the time of
//! each; then the totals and the load average, since the time depends on
//! what else the machine runs. A verdict that differs from the spec's
//! expectation, or an oracle conflict, is marked and makes the command
//! fail.
//!
//! Built without optimisations (`cargo xtask` is a debug build), the command
//! runs itself again from a release build, so that the times are those of
//! the release harness; `--here` skips that.

use std::time::{Duration, Instant};

use gridcheck_model::{ModelOutcome, Options};
use gridcheck_spec::{Litmus, Test, TestBody};

use crate::{Result, load_spec, root};

const USAGE: &str = "usage: cargo xtask bench model [--filter <substring>] [--here]";

pub fn run(args: &[String]) -> Result<()> {
    let mut filter = None;
    let mut here = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--filter" => filter = Some(it.next().ok_or(USAGE)?.clone()),
            "--here" => here = true,
            _ => return Err(format!("unknown argument `{a}`\n{USAGE}")),
        }
    }
    if cfg!(debug_assertions) && !here {
        let mut rest: Vec<String> = vec!["bench".into(), "model".into()];
        rest.extend(args.iter().cloned());
        return crate::rerun_release(&rest);
    }
    let spec = load_spec(&root())?;
    print_header(&Options::default());
    let start = Instant::now();
    let mut tally = Tally::default();
    for t in &spec.tests {
        let TestBody::Litmus(l) = &t.body else {
            continue;
        };
        if filter
            .as_ref()
            .is_some_and(|f| !t.name.contains(f.as_str()))
        {
            continue;
        }
        bench_test(t, l, &mut tally)?;
    }
    let wall = start.elapsed();
    print_totals(&mut tally, wall);
    println!("load average after: {}", load_average());
    if tally.mismatches.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "model verdicts differ from the spec:\n  {}",
            tally.mismatches.join("\n  ")
        ))
    }
}

/// What the tests so far add up to: the axiomatic model's time, loom's
/// outcomes, the tests the axiomatic model decided alone, the verdicts that
/// differ from the spec.
#[derive(Default)]
struct Tally {
    axiom_time: Duration,
    rows: Vec<(String, ModelOutcome)>,
    single: Vec<String>,
    mismatches: Vec<String>,
}

/// The options, the load average, the table's header.
fn print_header(options: &Options) {
    println!(
        "model bench: default options (exhaustive up to {} executions, then preemption bounds {:?}), one test at a time",
        options.budget.unwrap_or(0),
        options.fallback_bounds
    );
    println!("load average before: {}", load_average());
    println!(
        "{:<50} {:>7} {:>9} {:>9} {:>10} {:>7} {:>10} {:>9} {:>10} {:>9} {:>9}",
        "test",
        "threads",
        "verdict",
        "decided",
        "executions",
        "bound",
        "abandoned",
        "loom",
        "candidates",
        "axiomatic",
        "both"
    );
}

/// Runs both oracles on one test and prints its row.
fn bench_test(t: &Test, l: &Litmus, tally: &mut Tally) -> Result<()> {
    let t0 = Instant::now();
    let c = gridcheck_oracle::cross_check(l)
        .map_err(|e| format!("{}: both oracles failed: {e}", t.name))?;
    let total = t0.elapsed();
    // loom does not run a test over its thread limit, or gives up on a
    // pinned limit (the axiomatic model decides alone, `single`); any
    // other loom failure is an error.
    let loom = match c.loom.clone() {
        Some(Ok(o)) => Some(o),
        None => None,
        Some(Err(_)) if matches!(c.agreement, gridcheck_oracle::Agreement::Single { .. }) => None,
        Some(Err(e)) => {
            return Err(format!(
                "{}: loom gave no answer ({e}; {})",
                t.name, c.agreement
            ));
        }
    };
    let axiom = c
        .axiomatic
        .as_ref()
        .map_err(|e| format!("{}: {e}", t.name))?;
    let bound = loom
        .as_ref()
        .and_then(|o| o.preemption_bound)
        .map_or("-".to_string(), |b| b.to_string());
    let dash = |f: &dyn Fn(&gridcheck_model::ModelOutcome) -> String| {
        loom.as_ref().map_or("-".to_string(), f)
    };
    let mark = if c.is_conflict() {
        tally
            .mismatches
            .push(format!("{} ({}): {}", t.name, t.origin, c.agreement));
        "  CONFLICT"
    } else if c.verdict == l.expect {
        ""
    } else {
        tally.mismatches.push(format!(
            "{} ({}): model says {}, the spec expects {}",
            t.name, t.origin, c.verdict, l.expect
        ));
        "  MISMATCH"
    };
    println!(
        "{:<50} {:>7} {:>9} {:>9} {:>10} {:>7} {:>10} {:>9} {:>10} {:>8.4}s {:>8.3}s{mark}",
        t.name,
        l.thread_count(),
        c.verdict.as_str(),
        c.decided_by.as_str(),
        dash(&|o| o.executions.to_string()),
        bound,
        dash(&|o| o.abandoned_executions.to_string()),
        dash(&|o| format!("{:.3}s", o.elapsed.as_secs_f64())),
        axiom.candidates,
        axiom.elapsed.as_secs_f64(),
        total.as_secs_f64()
    );
    tally.axiom_time += axiom.elapsed;
    match loom {
        Some(o) => tally.rows.push((t.name.clone(), o)),
        None => tally.single.push(format!(
            "{} ({} threads, {} candidates, {:.4} s)",
            t.name,
            l.thread_count(),
            axiom.candidates,
            axiom.elapsed.as_secs_f64()
        )),
    }
    Ok(())
}

/// The totals, the bounds used, the slowest tests.
fn print_totals(tally: &mut Tally, wall: Duration) {
    let executions: u64 = tally
        .rows
        .iter()
        .map(|(_, o)| o.executions + o.abandoned_executions)
        .sum();
    let bounded: Vec<String> = tally
        .rows
        .iter()
        .filter_map(|(n, o)| o.preemption_bound.map(|b| format!("{n} (bound {b})")))
        .collect();
    println!();
    println!(
        "total: {} tests, {executions} loom executions, {:.2} s for both oracles (the axiomatic \
         model's part {:.3} s; one test at a time, the harness runs two workers at once)",
        tally.rows.len() + tally.single.len(),
        wall.as_secs_f64(),
        tally.axiom_time.as_secs_f64()
    );
    if !tally.single.is_empty() {
        println!(
            "decided by the axiomatic model alone (over loom's {} threads, or a pinned limit): {}",
            gridcheck_model::MAX_GPU_THREADS,
            tally.single.join(", ")
        );
    }
    if bounded.is_empty() {
        println!("bounds: none, every test was explored exhaustively");
    } else {
        println!("bounds used: {}", bounded.join(", "));
    }
    tally.rows.sort_by_key(|r| std::cmp::Reverse(r.1.elapsed));
    println!("slowest:");
    for (n, o) in tally.rows.iter().take(10) {
        println!(
            "  {:<50} {:>10} executions {:>8.3}s",
            n,
            o.executions + o.abandoned_executions,
            o.elapsed.as_secs_f64()
        );
    }
}

/// `/proc/loadavg`'s three averages, or why not.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown (no /proc/loadavg)".into())
}
