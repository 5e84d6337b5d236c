//! The device: whether a driver and a GPU exist ([`probe`], never a
//! panic), what the device is ([`DeviceInfo`]), and the driver's release.

use cudarc::driver::{result, sys};

use crate::driver_error;

/// The device found by [`probe`] or opened by [`Gpu::open`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    pub name: String,
    pub compute_capability: (u32, u32),
    /// The driver's CUDA version, e.g. `13.0`, from `cuDriverGetVersion`.
    pub driver_version: String,
    /// The kernel driver's release, e.g. `580.159.04`, from
    /// `/proc/driver/nvidia/version` or `nvidia-smi`, when either answers.
    pub driver_release: Option<String>,
    /// `sm_90`, ...
    pub sm: String,
}

/// Whether a CUDA driver and a device exist, and what the first device is.
/// Never panics.
pub fn probe() -> Result<DeviceInfo, String> {
    std::panic::catch_unwind(|| {
        init_driver()?;
        device_info(0)
    })
    .unwrap_or_else(|_| Err("probing the CUDA driver panicked".to_string()))
}

pub(crate) fn init_driver() -> Result<(), String> {
    // SAFETY: only tries to open the library.
    if !unsafe { sys::is_culib_present() } {
        return Err("no CUDA driver (libcuda not found)".to_string());
    }
    match result::init() {
        Ok(()) => {}
        Err(e) if e.0 == sys::CUresult::CUDA_ERROR_NO_DEVICE => {
            return Err("no CUDA device".to_string());
        }
        Err(e) => {
            return Err(format!(
                "the CUDA driver did not initialise: {}",
                driver_error(e)
            ));
        }
    }
    match result::device::get_count() {
        Ok(0) => Err("no CUDA device".to_string()),
        Ok(_) => Ok(()),
        Err(e) => Err(format!("cannot count CUDA devices: {}", driver_error(e))),
    }
}

pub(crate) fn device_info(ordinal: usize) -> Result<DeviceInfo, String> {
    let count = result::device::get_count().map_err(driver_error)?;
    if ordinal >= count as usize {
        return Err(format!("no CUDA device {ordinal} ({count} present)"));
    }
    let dev = result::device::get(ordinal as i32).map_err(driver_error)?;
    let name = result::device::get_name(dev).map_err(driver_error)?;
    let attr = |a| {
        // SAFETY: `dev` came from cuDeviceGet.
        unsafe { result::device::get_attribute(dev, a) }.map_err(driver_error)
    };
    use sys::CUdevice_attribute::{
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR as MAJOR,
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR as MINOR,
    };
    let (major, minor) = (attr(MAJOR)? as u32, attr(MINOR)? as u32);
    let mut v: std::ffi::c_int = 0;
    // SAFETY: writes one int.
    unsafe { sys::cuDriverGetVersion(&mut v) }
        .result()
        .map_err(driver_error)?;
    Ok(DeviceInfo {
        name,
        compute_capability: (major, minor),
        driver_version: format!("{}.{}", v / 1000, (v % 1000) / 10),
        driver_release: read_driver_release(),
        sm: format!("sm_{major}{minor}"),
    })
}

/// The kernel driver's release: from `/proc/driver/nvidia/version`, else
/// from `nvidia-smi` (containers may hide the former).
fn read_driver_release() -> Option<String> {
    std::fs::read_to_string("/proc/driver/nvidia/version")
        .ok()
        .and_then(|t| driver_release(&t))
        .or_else(|| {
            let out = std::process::Command::new("nvidia-smi")
                .args(["--query-gpu=driver_version", "--format=csv,noheader"])
                .output()
                .ok()?;
            let v = String::from_utf8_lossy(&out.stdout)
                .lines()
                .next()?
                .trim()
                .to_string();
            (out.status.success() && !v.is_empty()).then_some(v)
        })
}

/// The release in `/proc/driver/nvidia/version`'s first line: `NVRM
/// version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  <date>`.
pub fn driver_release(text: &str) -> Option<String> {
    let line = text.lines().next()?;
    let rest = &line[line.find("Kernel Module")? + "Kernel Module".len()..];
    let v = rest.split_whitespace().next()?;
    v.chars()
        .all(|c| c.is_ascii_digit() || c == '.')
        .then(|| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Gpu;

    #[test]
    fn the_driver_release_is_read_from_the_nvrm_line() {
        let text = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Tue Oct 28 2025\nGCC version: gcc 13\n";
        assert_eq!(driver_release(text).as_deref(), Some("580.159.04"));
        assert_eq!(driver_release("nothing here"), None);
        assert_eq!(driver_release(""), None);
    }

    #[test]
    fn probe_never_panics_and_explains() {
        match probe() {
            Ok(info) => assert!(info.sm.starts_with("sm_"), "{info:?}"),
            Err(why) => {
                eprintln!("probe: {why}");
                assert!(!why.is_empty());
            }
        }
        if let Err(e) = Gpu::open(0) {
            assert!(!e.message.is_empty());
        }
    }
}
