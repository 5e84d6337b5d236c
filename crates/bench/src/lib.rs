//! gridcheck's GPU benchmarks (issue 7): launch cost (host versus device
//! launches into each device stream, serial and fan-out, a tail-launch
//! chain, the pending launch pool filling up), Programmatic Dependent Launch
//! (a chain of dependent kernels with and without the attribute, the
//! trigger early, late or absent, in a CUDA graph, against the ideal, and
//! with a secondary too large to be co-resident) and PMPP chapter 21's
//! Bezier tessellation and quadtree build, verified against CPU references.
//!
//! - [`stats`]: median, p10, p90, min, max.
//! - [`baseline`]: the results file, which is also the committed baseline
//!   (`conformance/bench/baselines/<gpu-slug>.json`); its schema lives in
//!   `gridcheck_store::baseline`, so that the site reads it without this
//!   crate (and cudarc).
//! - [`compare`]: a run against a baseline; what counts as a regression.
//! - [`reference`]: the CPU references and the inputs of the PMPP workloads.
//! - [`check`]: the machine-code check's speed on a directory of cubins
//!   (`gridcheck-bench check`; no GPU).
//! - [`gpu`]: the figures themselves (cudarc, CUDA events): the driver, and
//!   one module a benchmark group, named after its `kernels/bench/*.cu`.
//!
//! The kernels are `kernels/bench/*.cu`, built by `cargo xtask bench` into
//! cubins like the suite's (`-rdc=true`, then `-dlink -cubin -lcudadevrt`).

pub use gridcheck_report::baseline;
pub mod check;
pub mod compare;
pub mod gpu;
pub mod reference;
pub mod stats;

/// The kernel sources under `kernels/bench/` (one cubin each), with the
/// extra nvcc flags each is built with.
pub const KERNELS: &[(&str, &[&str])] = &[
    ("gate", &[]),
    ("launch", &[]),
    ("pdl", &[]),
    // the CPU reference computes the same floats only without contraction
    ("bezier", &["-fmad=false"]),
    ("quadtree", &[]),
];
