//! The image a test's module is loaded from: a cubin as built, or its PTX
//! linked by the driver's JIT linker with the device runtime.
//!
//! Relocatable PTX (`nvcc -rdc=true -ptx`) calls the device runtime
//! (`cudaGetParameterBufferV2`, `cudaLaunchDeviceV2`, ...), so a plain
//! `cuModuleLoadData` of it does not resolve: it is linked the way
//! `nvcc -dlink` links a cubin, through the driver (`cuLinkCreate`,
//! `cuLinkAddData` of the PTX, `cuLinkAddFile` of `libcudadevrt.a` as a
//! library, `cuLinkComplete`), and the linked cubin is loaded as any other.
//! The `libcudadevrt.a` is the one of the toolkit that built the PTX (the
//! kernels root carries it).

use std::ffi::{CString, c_void};
use std::path::Path;

use cudarc::driver::sys;

use crate::context::Gpu;
use crate::error::{GpuError, driver_error_long};

/// Why no image could be made: a `CUresult` of the linker (its code and
/// message, with the linker's error log), or anything else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageError {
    Link { code: u32, message: String },
    Other(GpuError),
}

impl From<ImageError> for GpuError {
    fn from(e: ImageError) -> GpuError {
        match e {
            ImageError::Link { code, message } => {
                GpuError::new(format!("the JIT link failed ({code}): {message}"))
            }
            ImageError::Other(e) => e,
        }
    }
}

/// Whether a built file is PTX (by its `.ptx` extension).
pub fn is_ptx(file: &Path) -> bool {
    file.extension().is_some_and(|e| e == "ptx")
}

impl Gpu {
    /// The bytes to load for a built file: a cubin's own, or the cubin the
    /// driver's JIT linker makes of a `.ptx` file and the device runtime
    /// ([`Gpu::with_devrt`]). The context must be current.
    pub(crate) fn module_image(&self, file: &Path) -> Result<Vec<u8>, ImageError> {
        let bytes = std::fs::read(file).map_err(|e| {
            ImageError::Other(GpuError::new(format!(
                "cannot read {}: {e}",
                file.display()
            )))
        })?;
        if !is_ptx(file) {
            return Ok(bytes);
        }
        let devrt = self.devrt.as_deref().ok_or_else(|| {
            ImageError::Other(GpuError::new(format!(
                "{} is PTX, and no libcudadevrt.a was given to link it with (--devrt, or one in the kernels root)",
                file.display()
            )))
        })?;
        link_ptx(bytes, file, devrt)
    }
}

/// Links relocatable PTX with `libcudadevrt.a` through the driver's JIT
/// linker into a cubin image (the context must be current).
fn link_ptx(mut ptx: Vec<u8>, file: &Path, devrt: &Path) -> Result<Vec<u8>, ImageError> {
    ptx.push(0);
    let other = |m: String| ImageError::Other(GpuError::new(m));
    let name = CString::new(file.display().to_string()).map_err(|e| other(e.to_string()))?;
    let lib = CString::new(devrt.as_os_str().as_encoded_bytes())
        .map_err(|e| other(format!("{}: {e}", devrt.display())))?;
    const LOG: usize = 16 * 1024;
    let mut log = vec![0u8; LOG];
    let mut options = [
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut values = [log.as_mut_ptr() as *mut c_void, LOG as *mut c_void];
    let mut state: sys::CUlinkState = std::ptr::null_mut();
    let log_text = |log: &[u8]| {
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        String::from_utf8_lossy(&log[..end]).trim().to_string()
    };
    let fail = |what: &str, r: sys::CUresult, log: &[u8]| {
        let e = cudarc::driver::DriverError(r);
        let text = log_text(log);
        ImageError::Link {
            code: r as u32,
            message: format!(
                "{what} of {}: {}{}",
                file.display(),
                driver_error_long(e),
                if text.is_empty() {
                    String::new()
                } else {
                    format!("; linker log: {text}")
                }
            ),
        }
    };
    // SAFETY: the option arrays and the log buffer outlive the link state,
    // which is destroyed before they are dropped; the PTX is NUL-terminated
    // and the names are C strings.
    unsafe {
        let r = sys::cuLinkCreate_v2(
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
            &mut state,
        );
        if r != sys::CUresult::CUDA_SUCCESS {
            return Err(fail("cuLinkCreate", r, &log));
        }
        let result = (|| {
            let r = sys::cuLinkAddData_v2(
                state,
                sys::CUjitInputType::CU_JIT_INPUT_PTX,
                ptx.as_mut_ptr() as *mut c_void,
                ptx.len(),
                name.as_ptr(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
            if r != sys::CUresult::CUDA_SUCCESS {
                return Err(fail("cuLinkAddData (the PTX)", r, &log));
            }
            let r = sys::cuLinkAddFile_v2(
                state,
                sys::CUjitInputType::CU_JIT_INPUT_LIBRARY,
                lib.as_ptr(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
            if r != sys::CUresult::CUDA_SUCCESS {
                return Err(fail(
                    &format!("cuLinkAddFile ({})", devrt.display()),
                    r,
                    &log,
                ));
            }
            let mut cubin: *mut c_void = std::ptr::null_mut();
            let mut size = 0usize;
            let r = sys::cuLinkComplete(state, &mut cubin, &mut size);
            if r != sys::CUresult::CUDA_SUCCESS {
                return Err(fail("cuLinkComplete", r, &log));
            }
            // The image belongs to the link state: copied before it goes.
            Ok(std::slice::from_raw_parts(cubin as *const u8, size).to_vec())
        })();
        sys::cuLinkDestroy(state);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_is_told_by_its_extension() {
        assert!(is_ptx(Path::new("target/kernels/sm_75/t.ptx")));
        assert!(!is_ptx(Path::new("target/kernels/sm_90/t.cubin")));
        assert!(!is_ptx(Path::new("ptx")));
    }
}
