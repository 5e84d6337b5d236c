//! Random and enumerated litmus programs at scale on one GPU, and every
//! finding taken to an end. `cargo xtask fuzz gpu` writes batches of
//! programs (`batch.rs`); `gridcheck-campaign DIR` on the GPU machine
//!
//! 1. runs them (`campaign.rs`): each batch compiled once (`compile.rs`),
//!    run in batch workers (`worker.rs`, driven by `runner.rs`), one record
//!    a program with the worker that ran it (`findings.rs`: violation,
//!    unmodeled, hang, launch-error), resumable part by part;
//! 2. ends every finding (`leads.rs`), each rerun a fresh worker giving
//!    the finding the instances that bound the rate it was seen at: a
//!    known fact of its class (`known.rs`, the facts by their shapes,
//!    `shape.rs`), shown again alone and shrunk (`shrink.rs`), shown only
//!    with the programs its worker ran before it, halved while a half
//!    brings it back (`context.rs`) and shrunk, or closed with the bound
//!    on its rate (`ending.rs`); each shrunk test also written as a plain
//!    runtime-API program (`plain.rs`);
//! 3. writes the results (`report.rs`), which `merge` puts side by side
//!    for several GPUs (`merge.rs`);
//! 4. runs each finding's plain program on the GPU (`sweep.rs`: instances
//!    swept, each call left out).
//!
//! Each phase runs in parts of bounded time, resumed by the next: `status`
//! (`status.rs`) says from the results' files what is left; what a phase
//! is not told it takes from the GPU (`defaults.rs`: the results folder,
//! `--tuning auto`).
//!
//! A stand-in GPU (`fake.rs`) lets the whole path run in tests.

mod args;
mod batch;
mod campaign;
mod cli;
mod compile;
mod context;
mod defaults;
mod ending;
mod fake;
mod findings;
mod job;
mod known;
mod leads;
mod merge;
mod plain;
mod report;
mod runner;
mod shape;
mod shrink;
mod status;
mod sweep;
mod worker;

pub use batch::{BATCHES, CampaignProgram, batch_dir, write_batch};
pub use campaign::read_lines;
pub use cli::{check_args, main};
pub use fake::FAKE_GPU;
pub use findings::{Outcome, ProgramRecord};
pub use known::{KnownFact, KnownFacts};
pub use shape::Shape;
pub use status::{Status, WORK_LEFT};
pub use sweep::{binary as plain_binary, build as build_plain, findings as plain_findings};
