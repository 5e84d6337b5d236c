//! Runs a generated litmus cubin (see `gridcheck-kernelgen` and
//! `kernels/include/gridcheck.cuh`) on a CUDA GPU and histograms the final
//! states of its instances.
//!
//! **Architecture invariant:** nothing here panics for lack of a GPU: without
//! a driver or a device, [`probe`] and [`Gpu::open`] return an error with the
//! reason, and the callers skip GPU trials with that reason.
//!
//! One host launch runs `instances` independent copies of the test, one per
//! block (the parallel testing environment of MC Mutants, ASPLOS 2023, §4);
//! every launch gets fresh memory and a seed derived from the budget's seed,
//! which drives the generated code's random delays, memory stress and the
//! co-prime permutation of instances to memory slots.
//!
//! Runtime tests ([`Gpu::run_runtime`]) are hand-written programs with one
//! entry kernel `extern "C" __global__ void <entry>(unsigned int *out)`: the
//! runner sets the test's context limits, loads the cubin, launches
//! `entry<<<grid, block>>>(out)` once with `out` zeroed, and returns the
//! output words.
//!
//! Modules: `context` (an open device: [`Gpu`]), `error` ([`GpuError`]),
//! `device` (probe and device information), `environment` (the
//! budget, the incantations, the kernel parameters, launch seeds and slot
//! permutations), `litmus` (litmus runs), `histogram` (the GPU histogram's plan and decoding), `runtime`
//! (runtime tests), `jit` (a module's image: a cubin, or PTX linked with
//! the device runtime by the driver's JIT linker), `watch` (a run that may
//! not end, watched: a stall and where, or a long run and its rate),
//! `watchdog` (every litmus launch watched from a thread of its own, at no
//! cost a launch would notice: a stall reported within seconds).

mod context;
mod device;
mod environment;
mod error;
pub mod histogram;
mod jit;
mod litmus;
mod run_buffers;
mod runtime;
mod stale;
pub mod watch;
pub mod watchdog;

pub use context::Gpu;
pub use device::{DeviceInfo, driver_release, pci_bus_id, probe, probe_all, uuid_string};
pub use environment::{Budget, launch_seed, permutation};
pub use error::{GpuError, cuda_error_name};
pub use jit::{ImageError, is_ptx};
pub use litmus::{LitmusRun, LoadedModule, MAX_LIMITED_LAUNCHES};
pub use runtime::{RuntimeFailure, RuntimeRun, cu_limit};
