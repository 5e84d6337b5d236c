//! What goes wrong talking to the GPU: [`GpuError`], the driver's errors
//! named, and the name of a device runtime error code.

use std::fmt;

use cudarc::driver::DriverError;

/// Anything that went wrong talking to the GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuError {
    pub message: String,
}

impl GpuError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
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

pub(crate) fn driver_error(e: DriverError) -> String {
    match e.error_name() {
        Ok(name) => format!("{} ({})", name.to_string_lossy(), e.0 as i32),
        Err(_) => format!("{:?}", e.0),
    }
}

/// `CUDA_ERROR_NOT_FOUND (500): named symbol not found`.
pub(crate) fn driver_error_long(e: DriverError) -> String {
    match e.error_string() {
        Ok(text) => format!("{}: {}", driver_error(e), text.to_string_lossy()),
        Err(_) => driver_error(e),
    }
}

pub(crate) fn drv(what: &str) -> impl FnOnce(DriverError) -> GpuError + '_ {
    move |e| GpuError::new(format!("{what}: {}", driver_error(e)))
}

/// Name of a `cudaError_t` (CUDA 13.0's `enum cudaError`), or `cudaError`
/// for a value it does not know.
pub fn cuda_error_name(code: u32) -> &'static str {
    gridcheck_spec::cuda_error_name(code).unwrap_or("cudaError")
}
