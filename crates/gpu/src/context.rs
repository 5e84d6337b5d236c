//! An open device ([`Gpu`]): its context and its one stream; the runs
//! (`litmus.rs`, `runtime.rs`, `jit.rs`) are methods of it.

use std::fmt;
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaStream};

use crate::device::{DeviceInfo, device_info, init_driver};
use crate::error::{GpuError, drv};
use crate::watchdog::Watchdog;

/// An open device: a context and one stream.
pub struct Gpu {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) info: DeviceInfo,
    /// The `libcudadevrt.a` a `.ptx` file is linked with at JIT time.
    pub(crate) devrt: Option<std::path::PathBuf>,
    /// The stall watch of the litmus launches ([`Gpu::watch_stalls`]).
    pub(crate) watchdog: Option<Watchdog>,
    /// Each launch watched by the waiting thread itself
    /// ([`Gpu::watch_each_launch`]): stall seconds, budget seconds.
    pub(crate) watch_each: Option<(f64, f64)>,
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
        // SAFETY: one stream does all the work; cudarc's event tracking
        // would put event waits between the launches of a PDL pair, and the
        // secondary could no longer start early.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().map_err(drv("cannot create a stream"))?;
        Ok(Gpu {
            ctx,
            stream,
            info,
            devrt: None,
            watchdog: None,
            watch_each: None,
        })
    }

    /// The device runtime (`libcudadevrt.a`, of the toolkit that built the
    /// PTX) that a `.ptx` file given to a run is linked with.
    pub fn with_devrt(mut self, devrt: Option<std::path::PathBuf>) -> Gpu {
        self.devrt = devrt;
        self
    }

    /// Sets the device runtime of [`Gpu::with_devrt`] on a device already open.
    pub fn set_devrt(&mut self, devrt: Option<std::path::PathBuf>) {
        self.devrt = devrt;
    }

    /// Watches every litmus launch from now on (`watchdog.rs`): a launch
    /// whose status words do not move for the stall time
    /// ([`Gpu::set_stall_after`], 2 s until set) is left running and
    /// `on_stall` is called, once, from the watchdog's thread, with where it
    /// stalled (words starting with [`crate::watch::STALL`]). Costs nothing
    /// a launch of the suite would notice; [`Gpu::watch_each_launch`], where
    /// set, watches instead.
    pub fn watch_stalls(
        &mut self,
        on_stall: impl Fn(String) + Send + 'static,
    ) -> Result<(), GpuError> {
        self.watchdog = Some(Watchdog::start(&self.ctx, Box::new(on_stall))?);
        Ok(())
    }

    /// Each litmus launch from now on waited for by watching it
    /// (`watch.rs`): `Some((stall, budget))` ends a run whose status words
    /// stand still for `stall` seconds, or that still moves after `budget`
    /// seconds, with where it stood as the error; `None` waits as usual.
    /// A timed-out trial's rerun (`conformance/src/timeouts.rs`) and the
    /// campaign's workers set it from their jobs. `Err` names a setting
    /// that is not two positive finite numbers.
    pub fn watch_each_launch(&mut self, watch: Option<(f64, f64)>) -> Result<(), GpuError> {
        if let Some((stall, budget)) = watch {
            crate::watch::check_watch(stall, budget).map_err(GpuError::new)?;
        }
        self.watch_each = watch;
        Ok(())
    }

    /// The stall time, in seconds, of the watched launches to come.
    pub fn set_stall_after(&self, seconds: f64) {
        if let Some(w) = &self.watchdog {
            w.set_stall_after(seconds);
        }
    }

    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }
}
