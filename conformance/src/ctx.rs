//! What every trial shares, in three parts along the seam between deciding,
//! running and recording: the plan (which trials, with what: `plan.rs`),
//! the runner (devices, workers and the results computed once a test:
//! `runner.rs`) and the sink (results, resume, progress: `sink.rs`).

use crate::options::Options;
use crate::plan::{self, Plan};
use crate::runner::Runner;
use crate::sink::Sink;

/// The plan, the runner and the sink of a run.
pub struct Ctx {
    pub plan: Plan,
    pub runner: Runner,
    pub sink: Sink,
}

impl Ctx {
    /// Loads the spec, finds the devices and the tools, opens the results.
    /// Errors (a spec error, located; a wrong device selection; a facts or
    /// results file that cannot be read) are returned.
    pub fn new(opts: Options) -> Result<Ctx, String> {
        let spec = plan::load_spec(&opts)?;
        let runner = Runner::new(&opts)?;
        let plan = Plan::new(opts, spec, runner.device.as_ref().ok())?;
        let sink = Sink::open(&plan.opts, &plan.spec)?;
        Ok(Ctx { plan, runner, sink })
    }
}
