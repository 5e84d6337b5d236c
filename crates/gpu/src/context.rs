//! An open device ([`Gpu`]): its context and its one stream; the runs
//! (`litmus.rs`, `runtime.rs`, `jit.rs`) are methods of it.

use std::fmt;
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaStream};

use crate::device::{DeviceInfo, device_info, init_driver};
use crate::error::{GpuError, drv};

/// An open device: a context and one stream.
pub struct Gpu {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) info: DeviceInfo,
    /// The `libcudadevrt.a` a `.ptx` file is linked with at JIT time.
    pub(crate) devrt: Option<std::path::PathBuf>,
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

    /// Sets the device runtime of [`Gpu::with_devrt`] on a device already open.
    pub fn set_devrt(&mut self, devrt: Option<std::path::PathBuf>) {
        self.devrt = devrt;
    }

    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }
}
