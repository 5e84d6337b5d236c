//! Runtime tests ([`Gpu::run_runtime`]): the test's context limits set
//! before its module loads and restored after, one launch of its entry
//! kernel, its output words.

use std::ffi::c_void;
use std::fmt;
use std::path::Path;
use std::time::{Duration, Instant};

use cudarc::driver::{CudaSlice, DevicePtr, DriverError, sys};
use gridcheck_spec::{Limit, RuntimeTest};

use crate::context::Gpu;
use crate::error::{GpuError, driver_error, driver_error_long, drv};

/// The outcome of [`Gpu::run_runtime`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeRun {
    /// `out[0..outputs.len()]` after the entry kernel and all its work
    /// finished, in the order of the test's `outputs`.
    pub outputs: Vec<u32>,
    /// From the launch of the entry kernel to the end of the
    /// synchronisation that waited for it.
    pub elapsed: Duration,
}

/// Why [`Gpu::run_runtime`] produced no outputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeFailure {
    /// Loading the module (`cuModuleLoadData`), or its entry function
    /// (`cuModuleGetFunction`, where a lazily loading driver loads the
    /// function), failed with this `CUresult`. The driver's codes for load
    /// failures equal the runtime's `cudaError_t` values
    /// (`CUDA_ERROR_NOT_FOUND` = `cudaErrorSymbolNotFound` = 500).
    Load { code: u32, message: String },
    /// Anything else: setting a limit, the launch, the kernel itself (a
    /// trap or an illegal address, after which the context may be
    /// unusable), copying back.
    Other(GpuError),
}

impl fmt::Display for RuntimeFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuntimeFailure::Load { code, message } => {
                write!(f, "the module did not load (CUresult {code}): {message}")
            }
            RuntimeFailure::Other(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for RuntimeFailure {}

impl From<GpuError> for RuntimeFailure {
    fn from(e: GpuError) -> Self {
        RuntimeFailure::Other(e)
    }
}

/// The driver's limit for a spec [`Limit`].
pub fn cu_limit(limit: Limit) -> sys::CUlimit {
    match limit {
        Limit::DevRuntimePendingLaunchCount => {
            sys::CUlimit::CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT
        }
        Limit::DevRuntimeSyncDepth => sys::CUlimit::CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH,
        Limit::StackSize => sys::CUlimit::CU_LIMIT_STACK_SIZE,
        Limit::MallocHeapSize => sys::CUlimit::CU_LIMIT_MALLOC_HEAP_SIZE,
    }
}

impl Gpu {
    /// Runs a runtime test from its cubin: sets the test's context limits
    /// (before loading, as the device runtime sizes its reservations from
    /// them), loads the module and its entry function, launches
    /// `entry<<<grid, block>>>(out)` with `out` zeroed (one word per output,
    /// at least one), waits for it and copies `out` back. The previous limit
    /// values are restored afterwards, whatever happened, so that later
    /// tests run with the limits they expect.
    pub fn run_runtime(
        &self,
        cubin: &Path,
        test: &RuntimeTest,
    ) -> Result<RuntimeRun, RuntimeFailure> {
        self.ctx
            .bind_to_thread()
            .map_err(drv("cannot bind the context"))?;
        // A PTX file is linked after the limits are set, as a cubin is
        // loaded after them: the device runtime sizes its reservations then.
        self.with_limits(&test.limits, || {
            let bytes = self.module_image(cubin).map_err(|e| match e {
                crate::ImageError::Link { code, message } => RuntimeFailure::Load { code, message },
                crate::ImageError::Other(e) => RuntimeFailure::Other(e),
            })?;
            self.load_and_run(cubin, bytes, test)
        })
    }

    /// Raises the device runtime's pending launch limit to at least `n`
    /// (never lowers it): a campaign sets it once, for every program of a
    /// batch, before it loads the batch's module and launches anything.
    pub fn reserve_pending_launches(&self, n: usize) -> Result<(), GpuError> {
        self.ctx
            .bind_to_thread()
            .map_err(drv("cannot bind the context"))?;
        let l = cu_limit(Limit::DevRuntimePendingLaunchCount);
        let have = self
            .ctx
            .get_limit(l)
            .map_err(drv("cannot read the pending launch limit"))?;
        if have < n {
            self.ctx.set_limit(l, n).map_err(drv(&format!(
                "cannot raise the pending launch limit to {n}"
            )))?;
        }
        Ok(())
    }

    /// Sets the context `limits`, runs `f`, and restores the previous values
    /// whatever happened (in reverse order, so that a limit set twice gets
    /// its first value back). A limit that cannot be set is the error; one
    /// that cannot be restored is the error of an otherwise good run.
    pub(crate) fn with_limits<T, E: From<GpuError>>(
        &self,
        limits: &[(Limit, u64)],
        f: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, E> {
        let mut saved: Vec<(Limit, usize)> = Vec::new();
        let mut result = Ok(());
        for &(limit, value) in limits {
            let l = cu_limit(limit);
            let set = self
                .ctx
                .get_limit(l)
                .map_err(drv(&format!("cannot read the limit {}", limit.as_str())))
                .and_then(|old| {
                    saved.push((limit, old));
                    let v = usize::try_from(value).map_err(|_| {
                        GpuError::new(format!("{} = {value} does not fit", limit.as_str()))
                    })?;
                    self.ctx.set_limit(l, v).map_err(drv(&format!(
                        "cannot set the limit {} to {value}",
                        limit.as_str()
                    )))
                });
            if let Err(e) = set {
                result = Err(E::from(e));
                break;
            }
        }
        let run = result.and_then(|()| f());
        let mut restore_error = None;
        for (limit, old) in saved.into_iter().rev() {
            if let Err(e) = self.ctx.set_limit(cu_limit(limit), old) {
                restore_error.get_or_insert_with(|| {
                    GpuError::new(format!(
                        "cannot restore the limit {} to {old}: {}",
                        limit.as_str(),
                        driver_error(e)
                    ))
                });
            }
        }
        match (run, restore_error) {
            (Ok(_), Some(e)) => Err(E::from(e)),
            (run, _) => run,
        }
    }

    fn load_and_run(
        &self,
        cubin: &Path,
        bytes: Vec<u8>,
        test: &RuntimeTest,
    ) -> Result<RuntimeRun, RuntimeFailure> {
        let load = |e: DriverError| RuntimeFailure::Load {
            code: e.0 as u32,
            message: driver_error_long(e),
        };
        let module = self
            .ctx
            .load_module(cudarc::nvrtc::Ptx::from_binary(bytes))
            .map_err(load)?;
        let f = module.load_function(&test.entry).map_err(load)?;
        let stream = &self.stream;
        let words = test.outputs.len().max(1);
        let out: CudaSlice<u32> = stream
            .alloc_zeros(words)
            .map_err(drv("cannot allocate the output words"))?;
        stream
            .synchronize()
            .map_err(drv("cannot zero the output words"))?;
        let what = format!(
            "{}<<<{}, {}>>>(out) of {}",
            test.entry,
            test.grid,
            test.block,
            cubin.display()
        );
        let start = Instant::now();
        {
            let (out_p, _guard) = out.device_ptr(stream);
            let mut arg = out_p;
            let mut args = [&mut arg as *mut sys::CUdeviceptr as *mut c_void];
            // SAFETY: the entry kernel takes exactly one pointer
            // (`unsigned int *out`, validated against the source by the spec
            // loader); `args` outlives the call, which copies it.
            unsafe {
                sys::cuLaunchKernel(
                    f.cu_function(),
                    test.grid,
                    1,
                    1,
                    test.block,
                    1,
                    1,
                    0,
                    stream.cu_stream(),
                    args.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            }
            .result()
            .map_err(drv(&format!("cannot launch {what}")))?;
        }
        stream
            .synchronize()
            .map_err(drv(&format!("{what} failed")))?;
        let elapsed = start.elapsed();
        let mut outputs = stream
            .clone_dtoh(&out)
            .map_err(drv("cannot copy the output words back"))?;
        outputs.truncate(test.outputs.len());
        Ok(RuntimeRun { outputs, elapsed })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda_error_name;

    #[test]
    fn runtime_failures_and_limits() {
        let f = RuntimeFailure::Load {
            code: 500,
            message: "CUDA_ERROR_NOT_FOUND (500): named symbol not found".into(),
        };
        assert_eq!(
            f.to_string(),
            "the module did not load (CUresult 500): CUDA_ERROR_NOT_FOUND (500): named symbol not found"
        );
        assert_eq!(
            RuntimeFailure::from(GpuError::new("boom")).to_string(),
            "boom"
        );
        assert_eq!(
            cu_limit(Limit::DevRuntimePendingLaunchCount),
            sys::CUlimit::CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT
        );
        assert_eq!(
            cu_limit(Limit::MallocHeapSize),
            sys::CUlimit::CU_LIMIT_MALLOC_HEAP_SIZE
        );
        assert_eq!(cuda_error_name(69), "cudaErrorLaunchPendingCountExceeded");
        assert_eq!(cuda_error_name(123_456), "cudaError");
    }
}
