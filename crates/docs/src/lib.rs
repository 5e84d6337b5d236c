//! gridcheck's spec documentation and reports.
//!
//! Inputs: the spec (`crates/spec`), the recorded results
//! (`records/<gpu-slug>/<date>/results.jsonl.gz`), the known
//! known facts (`conformance/facts/*.toml`) and the benchmark
//! baselines (`conformance/bench/baselines/*.json`). Outputs:
//!
//! - [`site::build`]: an mdBook source tree (SUMMARY.md and one page a rule,
//!   plus index, discrepancies, coverage, runs, toolchains, real-world
//!   shapes, the CCCL library tier, benchmarks and "how to read a verdict") rendered to HTML with the `mdbook` library;
//! - [`markdown_report::markdown`]: a Markdown report of any results file;
//! - [`matrix::Matrix`]: result files merged into a conformance matrix
//!   (trial × run: GPU, driver, nvcc, the kernels' toolchain, date, run id;
//!   or a trial across toolchains), as Markdown or JSON;
//! - [`diff_report`]: what changed between two runs, as Markdown or JSON;
//! - [`svg`]: hand-written SVG bar charts (outcome histograms, benchmark
//!   figures with whiskers).
//!
//! Nothing here runs the model or a GPU: the pages show what the records say.
//! Bad input (a missing directory, a malformed JSON line) is an error that
//! names the file and the line, never a panic.

pub mod bench;
mod context;
pub mod coverage;
pub mod diff_report;
mod discrepancies;
pub mod fact_cover;
mod fragments;
pub mod library_page;
pub mod markdown_report;
pub mod matrix;
mod mutation;
mod pages;
pub mod results;
mod rule_page;
pub mod sections;
mod shapes_page;
pub mod showing;
pub mod site;
pub mod summary;
pub mod svg;
pub mod text;
mod toolchain_page;

pub type Result<T> = std::result::Result<T, String>;
