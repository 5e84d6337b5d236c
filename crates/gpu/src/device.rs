//! The device: whether a driver and a GPU exist ([`probe`], never a
//! panic), what the device is ([`DeviceInfo`]: its name, compute
//! capability, UUID and PCI bus id), every device of the host
//! ([`probe_all`]), and the driver's release.

use cudarc::driver::{result, sys};

use crate::error::driver_error;

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
    /// The driver's ordinal for it in this process (`CUDA_VISIBLE_DEVICES`
    /// decides what a process sees).
    pub ordinal: usize,
    /// `GPU-8932f937-d72c-4106-c12f-20bd9faed9f6`, from `cuDeviceGetUuid`:
    /// the spelling `nvidia-smi` and `CUDA_VISIBLE_DEVICES` use.
    pub uuid: Option<String>,
    /// `0000:3B:00.0` (domain, bus, device), from the device's PCI
    /// attributes.
    pub pci_bus_id: Option<String>,
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

/// Every device this process sees, in the driver's order. Never panics.
pub fn probe_all() -> Result<Vec<DeviceInfo>, String> {
    std::panic::catch_unwind(|| {
        init_driver()?;
        let count = result::device::get_count().map_err(driver_error)?;
        (0..count.max(0) as usize).map(device_info).collect()
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
        CU_DEVICE_ATTRIBUTE_PCI_BUS_ID as BUS, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID as DEVICE,
        CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID as DOMAIN,
    };
    let (major, minor) = (attr(MAJOR)? as u32, attr(MINOR)? as u32);
    // The identity is informative: a driver that cannot say leaves it out.
    let pci = (|| {
        Some(pci_bus_id(
            attr(DOMAIN).ok()?,
            attr(BUS).ok()?,
            attr(DEVICE).ok()?,
        ))
    })();
    let uuid = result::device::get_uuid(dev)
        .ok()
        .map(|u| uuid_string(&u.bytes.map(|b| b as u8)));
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
        ordinal,
        uuid,
        pci_bus_id: pci,
    })
}

/// A `CUuuid` as `nvidia-smi` writes it: `GPU-` and 8-4-4-4-12 hex digits.
pub fn uuid_string(bytes: &[u8; 16]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// A PCI location as `cuDeviceGetPCIBusId` writes it: `0000:3B:00.0`.
pub fn pci_bus_id(domain: i32, bus: i32, device: i32) -> String {
    format!("{domain:04X}:{bus:02X}:{device:02X}.0")
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
    fn the_identity_is_spelt_as_nvidia_smi_spells_it() {
        let b = [
            0x89, 0x32, 0xf9, 0x37, 0xd7, 0x2c, 0x41, 0x06, 0xc1, 0x2f, 0x20, 0xbd, 0x9f, 0xae,
            0xd9, 0xf6,
        ];
        assert_eq!(uuid_string(&b), "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6");
        assert_eq!(pci_bus_id(0, 0x3b, 0), "0000:3B:00.0");
        assert_eq!(pci_bus_id(1, 255, 31), "0001:FF:1F.0");
    }

    #[test]
    fn probe_never_panics_and_explains() {
        match probe_all() {
            Ok(all) => {
                for (i, d) in all.iter().enumerate() {
                    assert_eq!(d.ordinal, i, "{d:?}");
                }
            }
            Err(why) => assert!(!why.is_empty()),
        }
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
