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
//! Modules: `device` (probe and device information), `environment` (the
//! budget, the incantations, the kernel parameters, launch seeds and slot
//! permutations), `litmus` (litmus runs), `histogram` (the GPU histogram's plan and decoding), `runtime`
//! (runtime tests), `jit` (a module's image: a cubin, or PTX linked with
//! the device runtime by the driver's JIT linker), `watch` (a run that may
//! not end, watched: a stall and where, or a long run and its rate).

use std::fmt;
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaStream, DriverError};

mod device;
mod environment;
pub mod histogram;
mod jit;
mod litmus;
mod runtime;
pub mod watch;

pub use device::{DeviceInfo, driver_release, pci_bus_id, probe, probe_all, uuid_string};
use device::{device_info, init_driver};
pub use environment::{Budget, Incantations, launch_seed, permutation};
pub use jit::{ImageError, is_ptx};
pub use litmus::{LitmusRun, LoadedModule, MAX_LIMITED_LAUNCHES};
pub use runtime::{RuntimeFailure, RuntimeRun, cu_limit};

/// Anything that went wrong talking to the GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuError {
    pub message: String,
}

impl GpuError {
    fn new(message: impl Into<String>) -> Self {
        GpuError {
            message: message.into(),
        }
    }
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for GpuError {}

fn driver_error(e: DriverError) -> String {
    match e.error_name() {
        Ok(name) => format!("{} ({})", name.to_string_lossy(), e.0 as i32),
        Err(_) => format!("{:?}", e.0),
    }
}

/// `CUDA_ERROR_NOT_FOUND (500): named symbol not found`.
fn driver_error_long(e: DriverError) -> String {
    match e.error_string() {
        Ok(text) => format!("{}: {}", driver_error(e), text.to_string_lossy()),
        Err(_) => driver_error(e),
    }
}

fn drv(what: &str) -> impl FnOnce(DriverError) -> GpuError + '_ {
    move |e| GpuError::new(format!("{what}: {}", driver_error(e)))
}

/// Name of a `cudaError_t` (CUDA 13.0's `enum cudaError`), or `cudaError`
/// for a value it does not know.
pub fn cuda_error_name(code: u32) -> &'static str {
    gridcheck_spec::cuda_error_name(code).unwrap_or("cudaError")
}

/// An open device: a context and one stream.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    info: DeviceInfo,
    /// The `libcudadevrt.a` a `.ptx` file is linked with at JIT time.
    devrt: Option<std::path::PathBuf>,
}

impl fmt::Debug for Gpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gpu").field("info", &self.info).finish()
    }
}

impl Gpu {
    /// Opens device `ordinal`. Never panics.
    pub fn open(ordinal: usize) -> Result<Gpu, GpuError> {
        init_driver().map_err(GpuError::new)?;
        let info = device_info(ordinal).map_err(GpuError::new)?;
        let ctx = CudaContext::new(ordinal).map_err(drv("cannot create a CUDA context"))?;
        // SAFETY: one stream does all the work; as GPU.md says, event
        // tracking would put waits between the launches of a PDL pair.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().map_err(drv("cannot create a stream"))?;
        Ok(Gpu {
            ctx,
            stream,
            info,
            devrt: None,
        })
    }

    /// The device runtime (`libcudadevrt.a`, of the toolkit that built the
    /// PTX) that a `.ptx` file given to a run is linked with.
    pub fn with_devrt(mut self, devrt: Option<std::path::PathBuf>) -> Gpu {
        self.devrt = devrt;
        self
    }

    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }
}
