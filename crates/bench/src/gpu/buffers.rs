//! Driver-API helpers the figures share: device buffers, kernel argument
//! lists, events and the host-mapped flag, each freed on drop.

use std::ffi::c_void;

use cudarc::driver::{DriverError, sys};

use super::R;

pub(super) fn err_name(e: DriverError) -> String {
    match e.error_name() {
        Ok(n) => format!("{} ({})", n.to_string_lossy(), e.0 as i32),
        Err(_) => format!("{:?}", e.0),
    }
}

pub(super) fn ck(what: &str, r: sys::CUresult) -> R<()> {
    r.result().map_err(|e| format!("{what}: {}", err_name(e)))
}

/// A device allocation, freed on drop.
pub(super) struct DevBuf {
    pub(super) ptr: sys::CUdeviceptr,
    bytes: usize,
}

impl DevBuf {
    pub(super) fn new(bytes: usize) -> R<DevBuf> {
        let mut ptr = 0;
        // SAFETY: writes one device pointer.
        ck(&format!("cuMemAlloc({bytes})"), unsafe {
            sys::cuMemAlloc_v2(&mut ptr, bytes.max(4))
        })?;
        let b = DevBuf { ptr, bytes };
        // SAFETY: the allocation is at least `bytes` long.
        ck("cuMemsetD8", unsafe {
            sys::cuMemsetD8_v2(ptr, 0, bytes.max(4))
        })?;
        Ok(b)
    }

    pub(super) fn with<T: Copy>(data: &[T]) -> R<DevBuf> {
        let b = DevBuf::new(std::mem::size_of_val(data))?;
        b.upload(data)?;
        Ok(b)
    }

    pub(super) fn upload<T: Copy>(&self, data: &[T]) -> R<()> {
        let bytes = std::mem::size_of_val(data);
        assert!(bytes <= self.bytes);
        // SAFETY: `data` is plain data of `bytes` bytes; the allocation holds them.
        ck("cuMemcpyHtoD", unsafe {
            sys::cuMemcpyHtoD_v2(self.ptr, data.as_ptr() as *const c_void, bytes)
        })
    }

    pub(super) fn download<T: Copy + Default>(&self, n: usize) -> R<Vec<T>> {
        let mut v = vec![T::default(); n];
        let bytes = std::mem::size_of_val(v.as_slice());
        assert!(bytes <= self.bytes);
        // SAFETY: `v` has room for `bytes` bytes of plain data.
        ck("cuMemcpyDtoH", unsafe {
            sys::cuMemcpyDtoH_v2(v.as_mut_ptr() as *mut c_void, self.ptr, bytes)
        })?;
        Ok(v)
    }

    pub(super) fn zero_async(&self, s: sys::CUstream) -> R<()> {
        // SAFETY: within the allocation.
        ck("cuMemsetD8Async", unsafe {
            sys::cuMemsetD8Async(self.ptr, 0, self.bytes.max(4), s)
        })
    }
}

impl Drop for DevBuf {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemAlloc, freed once.
        let _ = unsafe { sys::cuMemFree_v2(self.ptr) };
    }
}

/// Kernel arguments, each widened to 8 bytes: the driver reads a 4-byte
/// parameter from the low half (little-endian).
#[derive(Default)]
pub(super) struct Args(pub(super) Vec<u64>);

impl Args {
    pub(super) fn ptr(mut self, p: sys::CUdeviceptr) -> Self {
        self.0.push(p);
        self
    }
    pub(super) fn p(mut self, b: &DevBuf) -> Self {
        self.0.push(b.ptr);
        self
    }
    pub(super) fn i(mut self, v: i32) -> Self {
        self.0.push(u64::from(v as u32));
        self
    }
    pub(super) fn l(mut self, v: i64) -> Self {
        self.0.push(v as u64);
        self
    }
}

pub(super) struct Event(pub(super) sys::CUevent);

impl Event {
    pub(super) fn new() -> R<Event> {
        let mut e = std::ptr::null_mut();
        // SAFETY: writes one event handle.
        ck("cuEventCreate", unsafe { sys::cuEventCreate(&mut e, 0) })?;
        Ok(Event(e))
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: created by cuEventCreate, destroyed once.
        let _ = unsafe { sys::cuEventDestroy_v2(self.0) };
    }
}

/// The gate's flag words, in pinned host memory mapped into the device.
pub(super) struct Flag {
    host: *mut u32,
    pub(super) dev: sys::CUdeviceptr,
}

impl Flag {
    pub(super) fn new() -> R<Flag> {
        let mut p = std::ptr::null_mut();
        // SAFETY: allocates 8 bytes of pinned, mapped host memory.
        ck("cuMemHostAlloc", unsafe {
            sys::cuMemHostAlloc(&mut p, 8, sys::CU_MEMHOSTALLOC_DEVICEMAP)
        })?;
        // Freed on drop, also if the next call fails.
        let mut f = Flag {
            host: p as *mut u32,
            dev: 0,
        };
        // SAFETY: `p` is mapped host memory.
        ck("cuMemHostGetDevicePointer", unsafe {
            sys::cuMemHostGetDevicePointer_v2(&mut f.dev, p, 0)
        })?;
        f.set(0, 0);
        f.set(1, 0);
        Ok(f)
    }

    pub(super) fn set(&self, i: usize, v: u32) {
        // SAFETY: two words, written with volatile stores the device polls.
        unsafe { std::ptr::write_volatile(self.host.add(i), v) };
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    }

    pub(super) fn get(&self, i: usize) -> u32 {
        // SAFETY: two words.
        unsafe { std::ptr::read_volatile(self.host.add(i)) }
    }
}

impl Drop for Flag {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemHostAlloc, freed once.
        let _ = unsafe { sys::cuMemFreeHost(self.host as *mut c_void) };
    }
}
