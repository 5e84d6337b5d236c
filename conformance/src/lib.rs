//! The conformance harness: every (rule, test) pair of the spec becomes
//! libtest-mimic trials on four tiers, and CCCL's PDL algorithms a fifth.
//!
//! - `model/<rule>/<test>`: the verdict equals the spec's. Both oracles run;
//!   the axiomatic model's states are the verdict, loom cross-checks them,
//!   and a disagreement is `oracle-conflict` (ARCHITECTURE.md, "Two
//!   oracles: who decides what").
//! - `static/<rule>/<test>`: a compile test, run with nvcc.
//! - `gpu/<sm>/<rule>/<test>`: the litmus test on the GPU, its histogram
//!   diffed against the model (ARCHITECTURE.md, "The verdict diff").
//! - `sass/<toolchain>/<sm>/<rule>/<test>` and
//!   `sass/<toolchain>/<sm>/user/<program>`: the machine code keeps the
//!   program order around PDL and launch primitives (`sass.rs`).
//! - `lib/<release>/<target>/<algorithm>/<case>`: a CCCL algorithm that
//!   launches with PDL, run by its program on the GPU (`library.rs`).
//!
//! A trial that cannot run here (no nvcc, no CUDA driver, kernels not built)
//! is reported ignored with the reason, never passed. Every finished trial is
//! appended at once to the JSON-lines results file (one write a record; a
//! write that fails fails the run), and a summary with each test's model
//! verdict and hardware histogram is printed after the run. `--resume`
//! reads the file back, naming every line it skips and why. Every record
//! carries the run's id and start time (`RunStamp::for_invocation`).
//!
//! How it is built: `run.rs` reads the command line (`flags.rs` into
//! `options.rs`) and runs the trials with a `Ctx` (`ctx.rs`): the plan
//! (`plan.rs`: which trials, with what), the runner (`runner.rs`: devices,
//! workers, results computed once a test) and the sink (`sink.rs`: results,
//! resume, progress). A GPU run or a model exploration is a typed job
//! (`job.rs`) sent to a worker process (`process.rs` on the harness's
//! side, `worker.rs` on the worker's).

mod binary;
mod cache;
mod ctx;
pub mod devices;
mod escalate;
mod facts;
pub mod flags;
mod gpu_tier;
mod host;
pub mod job;
mod library;
mod listing;
mod mutants;
pub mod options;
mod plan;
mod process;
mod progress;
mod rejudge;
mod report;
mod results_file;
mod run;
mod runner;
pub mod sass;
mod sink;
mod staying;
pub mod summary;
mod tiers;
mod timeline;
pub mod timeouts;
mod tuning;
mod worker;

pub use options::{Options, Tier};
pub use process::WORKER_FLAG;
pub use run::main_with;
