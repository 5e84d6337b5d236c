//! Runs programs of a batch, in a given order, in batch workers
//! (`worker.rs`, one process at a time, each under a silence timeout). A
//! worker that stops with a program in flight (a hang, an error, a kill)
//! has that program recorded as such; the rest of the order then runs in a
//! fresh worker ([`Restart::After`], the campaign) or is recorded not run,
//! each program with its reason ([`Restart::Never`], a rerun whose context
//! matters). Every program of the order gets exactly one record, with the
//! worker that ran it and its place in that worker's run. In the campaign
//! ([`Restart::After`]) a worker may also be given at most
//! [`Runner::worker_programs`] programs, a fresh one the rest: `1` runs each
//! program in a worker of its own.

use std::process::Command;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use gridcheck_report::Tuning;

use crate::batch::Batch;
use crate::findings::{Outcome, ProgramRecord};
use crate::job::{Job, MARKER, Report};
use crate::known::KnownFacts;
use gridcheck_child::Piped;

/// Where the records of a run go, and which programs are left out.
pub trait Sink {
    fn record(&mut self, r: ProgramRecord);
    /// Why program `i` of `b` is not to run, if it is not: asked as each
    /// worker starts, for every program left.
    fn skip(&mut self, _b: &Batch, _i: usize) -> Option<String> {
        None
    }
}

impl<F: FnMut(ProgramRecord)> Sink for F {
    fn record(&mut self, r: ProgramRecord) {
        self(r)
    }
}

/// What follows a worker that stopped before the end of its order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Restart {
    /// A fresh worker runs the rest.
    After,
    /// The rest is not run: it needed what ran before it in that worker.
    Never,
}

/// How programs are run: the same for the campaign and every rerun.
pub struct Runner {
    pub instances: u32,
    pub launches: u32,
    pub seed: u64,
    pub env: Tuning,
    /// Seconds a worker may go without reporting before it is killed.
    pub timeout: u64,
    /// Seconds without progress of a launch that make a hang.
    pub stall: f64,
    pub known: KnownFacts,
    /// The next worker's number (through the campaign and its reruns).
    pub next_worker: u64,
    /// The device the workers reported.
    pub device: Option<String>,
    /// Programs a worker runs before a fresh one takes the rest (0: no
    /// limit); only where a stopped worker is restarted ([`Restart::After`]).
    pub worker_programs: usize,
}

/// How one worker's pass ended.
struct Pass {
    /// Programs it reported, in order.
    reported: Vec<usize>,
    /// The program in flight when it stopped, with what became of it.
    in_flight: Option<Outcome>,
    /// The reported program whose outcome ended it (a hang, an error).
    ended_by: Option<usize>,
    /// Why none of its programs could run.
    unusable: Option<String>,
}

impl Runner {
    /// This program as a batch worker (`gridcheck campaign worker ...`,
    /// `gridcheck_child::own_command`).
    fn command(&self, job: &Job) -> std::io::Result<Command> {
        let mut cmd = gridcheck_child::own_command()?;
        cmd.arg("worker")
            .args(job.args())
            .env("CUDA_MODULE_LOADING", "EAGER");
        Ok(cmd)
    }

    /// Runs `order` of `b` (see the module docs) until `deadline`: a
    /// program not reached by then is recorded not run, as the budget. The
    /// last program of `order` runs `lead_launches` launches where given
    /// (a rerun's lead), the others the runner's.
    pub fn run(
        &mut self,
        b: &Batch,
        order: &[usize],
        restart: Restart,
        deadline: Instant,
        lead_launches: Option<u32>,
        sink: &mut dyn Sink,
    ) {
        let mut rest: Vec<usize> = order.to_vec();
        while !rest.is_empty() {
            if Instant::now() >= deadline {
                let why = "not reached: the GPU budget (--budget) was spent";
                self.not_run(b, &rest, why, sink);
                return;
            }
            let mut this = Vec::new();
            for &i in &rest {
                match sink.skip(b, i) {
                    Some(why) => self.not_run(b, &[i], &why, sink),
                    None => this.push(i),
                }
            }
            if this.is_empty() {
                return;
            }
            let share = match self.worker_programs {
                n if n > 0 && restart == Restart::After => n.min(this.len()),
                _ => this.len(),
            };
            let (share, later) = this.split_at(share);
            let worker = self.next_worker;
            self.next_worker += 1;
            let lead = lead_launches.filter(|_| later.is_empty());
            let pass = self.pass(b, share, worker, lead, sink);
            if let Some(why) = pass.unusable {
                self.not_run(b, &this[pass.reported.len()..], &why, sink);
                return;
            }
            let mut left = share[pass.reported.len()..].to_vec();
            let mut ender = pass.ended_by;
            if let (Some(outcome), Some(&p)) = (pass.in_flight, left.first()) {
                let seq = pass.reported.len() as u32;
                let r = ProgramRecord::of(b, p, outcome, &self.known, Some((worker, seq)));
                sink.record(r);
                left.remove(0);
                ender = Some(p);
            }
            // A worker that ran its whole share leaves the rest to a fresh one.
            let share_done = left.is_empty() && ender.is_none();
            left.extend_from_slice(later);
            match ender {
                _ if left.is_empty() || share_done => {}
                Some(p) if restart == Restart::Never => {
                    let why = format!(
                        "not run: {} ended its worker before it, and this run's order \
                         matters (not restarted)",
                        b.programs[p].name
                    );
                    self.not_run(b, &left, &why, sink);
                    return;
                }
                Some(_) => {}
                None => {
                    let why = "not run: its worker ended without reporting it or stopping";
                    self.not_run(b, &left, why, sink);
                    return;
                }
            }
            rest = left;
        }
    }

    fn not_run(&self, b: &Batch, which: &[usize], why: &str, sink: &mut dyn Sink) {
        for &i in which {
            let o = Outcome::NotRun { reason: why.into() };
            sink.record(ProgramRecord::of(b, i, o, &self.known, None));
        }
    }

    /// One worker on `order`: records every program it reports, until it
    /// ends, falls silent for `--timeout` seconds (killed) or reports a
    /// program that ends it.
    fn pass(
        &mut self,
        b: &Batch,
        order: &[usize],
        worker: u64,
        lead_launches: Option<u32>,
        sink: &mut dyn Sink,
    ) -> Pass {
        let job = Job {
            batch: b.dir.clone(),
            run: order.to_vec(),
            instances: self.instances,
            launches: self.launches,
            seed: self.seed,
            env: self.env.clone(),
            // Every launch watched: a stall ends the program as a hang,
            // and the run ends itself before the worker's timeout.
            watch: Some((self.stall, self.timeout.saturating_sub(2).max(1) as f64)),
            lead_launches,
        };
        let mut pass = Pass {
            reported: Vec::new(),
            in_flight: None,
            ended_by: None,
            unusable: None,
        };
        let mut w = match self.command(&job).and_then(|c| Piped::spawn(c, false)) {
            Ok(w) => w,
            Err(e) => {
                pass.unusable = Some(format!("cannot start the worker: {e}"));
                return pass;
            }
        };
        let mut heard = false;
        let killed = loop {
            // The first program's report waits for the context and the
            // module too.
            let limit = self.timeout + if heard { 0 } else { 30 };
            let line = match w.line(Duration::from_secs(limit)) {
                Ok(l) => l,
                Err(RecvTimeoutError::Timeout) => break true,
                Err(RecvTimeoutError::Disconnected) => break false,
            };
            let Some(r) = line
                .strip_prefix(MARKER)
                .and_then(|j| serde_json::from_str::<Report>(j).ok())
            else {
                continue;
            };
            match r {
                Report::Device { name } => self.device = Some(name),
                Report::Unusable { reason } => {
                    pass.unusable = Some(reason);
                    break false;
                }
                Report::Program { index, outcome } => {
                    if order.get(pass.reported.len()) != Some(&index) {
                        continue;
                    }
                    heard = true;
                    let seq = pass.reported.len() as u32;
                    pass.reported.push(index);
                    // A hang or an error ends the worker: it is killed at
                    // once rather than left to tear down a context beside
                    // a kernel that may never end.
                    let ends = outcome.ends_worker();
                    let r = ProgramRecord::of(b, index, outcome, &self.known, Some((worker, seq)));
                    sink.record(r);
                    if ends {
                        let _ = w.stop();
                        pass.ended_by = Some(index);
                        return pass;
                    }
                }
            }
        };
        let (status, stderr) = if killed { w.stop() } else { w.end() };
        if pass.reported.len() < order.len() && pass.unusable.is_none() {
            pass.in_flight = Some(in_flight(killed, self.timeout, &status, &stderr));
        }
        pass
    }
}

/// What became of the program in flight when a worker stopped without a
/// word about it: a hang when it was killed for silence, else an error
/// with the end of its standard error. A worker that ended by itself with
/// success left nothing in flight.
fn in_flight(
    killed: bool,
    timeout: u64,
    status: &Result<std::process::ExitStatus, String>,
    stderr: &str,
) -> Outcome {
    if killed {
        return Outcome::Hang {
            message: format!("no result in {timeout} s: the worker was killed"),
        };
    }
    let tail: Vec<&str> = stderr.lines().rev().take(6).collect();
    Outcome::Error {
        message: format!(
            "the worker ended ({}) with the program in flight: {}",
            match status {
                Ok(s) => s.to_string(),
                Err(e) => e.to_string(),
            },
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        ),
    }
}
