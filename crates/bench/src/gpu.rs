//! The figures, measured on the GPU through the driver API (cudarc with
//! dynamic loading).
//!
//! Timing: CUDA events recorded on the benchmark's stream around the timed
//! work (`cuEventElapsedTime`), except where a figure says otherwise (the
//! host round trip is timed with the host clock, the pending pool's
//! per-launch costs with the device's `%globaltimer`). Every figure runs
//! `warmup` untimed repeats, then `repeats` timed ones; variants that are
//! compared run interleaved, one of each per repeat, and a difference (a
//! saving, a launch's cost above an empty parent) is taken per repeat, so
//! its spread is the spread of the paired difference. Every workload checks
//! its result (counters of the children that ran, the chain's values, the
//! CPU references of the PMPP workloads); a figure whose check fails is not
//! reported, and the run fails.

use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream, DriverError, sys};

use crate::baseline::Figure;
use crate::reference;
use crate::stats::summarize;

type R<T> = Result<T, String>;

/// How much to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Untimed and timed repeats of the PMPP workloads.
    pub warmup: usize,
    pub repeats: usize,
    /// The same for the launch and PDL figures, which take microseconds.
    pub micro_warmup: usize,
    pub micro_repeats: usize,
    /// Fewer repeats and the smaller sizes only.
    pub quick: bool,
}

impl Plan {
    pub fn full() -> Plan {
        Plan {
            warmup: 3,
            repeats: 30,
            micro_warmup: 10,
            micro_repeats: 100,
            quick: false,
        }
    }
    pub fn quick() -> Plan {
        Plan {
            warmup: 2,
            repeats: 10,
            micro_warmup: 3,
            micro_repeats: 20,
            quick: true,
        }
    }
}

/// What a run produced: the figures that were measured and verified, and
/// why the others were not.
#[derive(Debug, Default)]
pub struct Outcome {
    pub figures: Vec<Figure>,
    pub failures: Vec<String>,
    pub notes: Vec<String>,
}

fn err_name(e: DriverError) -> String {
    match e.error_name() {
        Ok(n) => format!("{} ({})", n.to_string_lossy(), e.0 as i32),
        Err(_) => format!("{:?}", e.0),
    }
}

fn ck(what: &str, r: sys::CUresult) -> R<()> {
    r.result().map_err(|e| format!("{what}: {}", err_name(e)))
}

/// A device allocation, freed on drop.
struct DevBuf {
    ptr: sys::CUdeviceptr,
    bytes: usize,
}

impl DevBuf {
    fn new(bytes: usize) -> R<DevBuf> {
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

    fn with<T: Copy>(data: &[T]) -> R<DevBuf> {
        let b = DevBuf::new(std::mem::size_of_val(data))?;
        b.upload(data)?;
        Ok(b)
    }

    fn upload<T: Copy>(&self, data: &[T]) -> R<()> {
        let bytes = std::mem::size_of_val(data);
        assert!(bytes <= self.bytes);
        // SAFETY: `data` is plain data of `bytes` bytes; the allocation holds them.
        ck("cuMemcpyHtoD", unsafe {
            sys::cuMemcpyHtoD_v2(self.ptr, data.as_ptr() as *const c_void, bytes)
        })
    }

    fn download<T: Copy + Default>(&self, n: usize) -> R<Vec<T>> {
        let mut v = vec![T::default(); n];
        let bytes = std::mem::size_of_val(v.as_slice());
        assert!(bytes <= self.bytes);
        // SAFETY: `v` has room for `bytes` bytes of plain data.
        ck("cuMemcpyDtoH", unsafe {
            sys::cuMemcpyDtoH_v2(v.as_mut_ptr() as *mut c_void, self.ptr, bytes)
        })?;
        Ok(v)
    }

    fn zero_async(&self, s: sys::CUstream) -> R<()> {
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
struct Args(Vec<u64>);

impl Args {
    fn ptr(mut self, p: sys::CUdeviceptr) -> Self {
        self.0.push(p);
        self
    }
    fn p(mut self, b: &DevBuf) -> Self {
        self.0.push(b.ptr);
        self
    }
    fn i(mut self, v: i32) -> Self {
        self.0.push(u64::from(v as u32));
        self
    }
    fn l(mut self, v: i64) -> Self {
        self.0.push(v as u64);
        self
    }
}

struct Event(sys::CUevent);

impl Event {
    fn new() -> R<Event> {
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
struct Flag {
    host: *mut u32,
    dev: sys::CUdeviceptr,
}

impl Flag {
    fn new() -> R<Flag> {
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

    fn set(&self, i: usize, v: u32) {
        // SAFETY: two words, written with volatile stores the device polls.
        unsafe { std::ptr::write_volatile(self.host.add(i), v) };
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    }

    fn get(&self, i: usize) -> u32 {
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

/// The device and what the figures share.
pub struct Bench {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    start: Event,
    stop: Event,
    flag: Flag,
    /// The gate module, loaded when first needed and unloaded before a
    /// limit of the device runtime is changed.
    gate: std::cell::RefCell<Option<(Arc<CudaModule>, CudaFunction)>>,
    cubins: PathBuf,
    plan: Plan,
    pub gpu: String,
    pub sms: u32,
    pub l2_bytes: usize,
}

/// Why no benchmark can run here, or the opened device. Never panics for
/// lack of a driver.
pub fn open(cubins: &Path, plan: Plan) -> R<Bench> {
    // SAFETY: only tries to open the library.
    if !unsafe { sys::is_culib_present() } {
        return Err("no CUDA driver (libcuda not found)".into());
    }
    let ctx = std::panic::catch_unwind(|| CudaContext::new(0))
        .map_err(|_| "creating a CUDA context panicked".to_string())?
        .map_err(|e| format!("no usable CUDA device: {}", err_name(e)))?;
    // SAFETY: one stream does all the work; event tracking would put waits
    // between the launches of a PDL chain (GPU.md).
    unsafe { ctx.disable_event_tracking() };
    ctx.bind_to_thread()
        .map_err(|e| format!("cannot bind the context: {}", err_name(e)))?;
    let stream = ctx
        .new_stream()
        .map_err(|e| format!("cannot create a stream: {}", err_name(e)))?;
    let attr = |a| {
        ctx.attribute(a)
            .map_err(|e| format!("cannot read a device attribute: {}", err_name(e)))
    };
    use sys::CUdevice_attribute::{
        CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE as L2, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT as SMS,
    };
    let sms = attr(SMS)? as u32;
    let l2_bytes = attr(L2)? as usize;
    let gpu = ctx
        .name()
        .map_err(|e| format!("cannot read the device name: {}", err_name(e)))?;
    let b = Bench {
        start: Event::new()?,
        stop: Event::new()?,
        flag: Flag::new()?,
        gate: std::cell::RefCell::new(None),
        ctx,
        stream,
        cubins: cubins.to_path_buf(),
        plan,
        gpu,
        sms,
        l2_bytes,
    };
    b.warm_up()?;
    Ok(b)
}

/// The driver's version: `/proc/driver/nvidia/version`, else
/// `cuDriverGetVersion` (`13.0`).
pub fn driver_version() -> String {
    if let Some(v) = std::fs::read_to_string("/proc/driver/nvidia/version")
        .ok()
        .and_then(|t| crate::baseline::parse_proc_driver_version(&t))
    {
        return v;
    }
    let mut v: std::ffi::c_int = 0;
    // SAFETY: writes one int; only called after the driver was opened.
    match unsafe { sys::cuDriverGetVersion(&mut v) }.result() {
        Ok(()) => format!("{}.{} (CUDA)", v / 1000, (v % 1000) / 10),
        Err(e) => format!("unknown ({})", err_name(e)),
    }
}

const PENDING_LIMIT_LAUNCH: usize = 4096;
/// About a second at H100 clocks.
const GATE_MAX_CYCLES: i64 = 2_000_000_000;
const PENDING_LIMIT_PMPP: usize = 1 << 18;

impl Bench {
    fn s(&self) -> sys::CUstream {
        self.stream.cu_stream()
    }

    fn module(&self, name: &str) -> R<Arc<CudaModule>> {
        let path = self.cubins.join(format!("{name}.cubin"));
        let bytes =
            std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        self.ctx
            .load_module(cudarc::nvrtc::Ptx::from_binary(bytes))
            .map_err(|e| format!("cannot load {}: {}", path.display(), err_name(e)))
    }

    fn func(&self, m: &Arc<CudaModule>, name: &str) -> R<CudaFunction> {
        m.load_function(name)
            .map_err(|e| format!("kernel `{name}`: {}", err_name(e)))
    }

    /// Brings the clocks out of their idle state: every SM spins for
    /// about half a second.
    fn warm_up(&self) -> R<()> {
        let m = self.module("gate")?;
        let warm = self.func(&m, "warm")?;
        self.launch(
            &warm,
            4 * self.sms,
            128,
            0,
            false,
            Args::default().l(1_000_000_000),
        )?;
        self.sync("the clock warm-up")
    }

    fn gate_fn(&self) -> R<CudaFunction> {
        let mut g = self.gate.borrow_mut();
        if g.is_none() {
            let m = self.module("gate")?;
            let f = self.func(&m, "gate")?;
            *g = Some((m, f));
        }
        Ok(g.as_ref().map(|(_, f)| f.clone()).expect("set above"))
    }

    fn set_pending_limit(&self, n: usize) -> R<()> {
        self.gate.borrow_mut().take();
        self.ctx
            .set_limit(sys::CUlimit::CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, n)
            .map_err(|e| {
                format!(
                    "cannot set the pending launch count to {n}: {}",
                    err_name(e)
                )
            })
    }

    fn sync(&self, what: &str) -> R<()> {
        // SAFETY: our stream.
        ck(what, unsafe { sys::cuStreamSynchronize(self.s()) })
    }

    /// `f<<<grid, block, smem>>>(args)` on the stream through
    /// `cuLaunchKernelEx`, with the programmatic stream serialization
    /// attribute when `pdl`.
    fn launch(
        &self,
        f: &CudaFunction,
        grid: u32,
        block: u32,
        smem: u32,
        pdl: bool,
        args: Args,
    ) -> R<()> {
        let mut args = args;
        let mut ptrs: Vec<*mut c_void> = args
            .0
            .iter_mut()
            .map(|v| v as *mut u64 as *mut c_void)
            .collect();
        // SAFETY: an all-zero attribute is valid (plain data).
        let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
        attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attr.value.programmaticStreamSerializationAllowed = 1;
        let cfg = sys::CUlaunchConfig {
            gridDimX: grid,
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: block,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: smem,
            hStream: self.s(),
            attrs: if pdl { &mut attr } else { std::ptr::null_mut() },
            numAttrs: u32::from(pdl),
        };
        // SAFETY: the argument list matches the kernel's parameters (each
        // call site follows kernels/bench/*.cu); everything outlives the
        // call, which copies it.
        ck("cuLaunchKernelEx", unsafe {
            sys::cuLaunchKernelEx(
                &cfg,
                f.cu_function(),
                ptrs.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        })
    }

    /// Microseconds between events around `work` on the stream, the work
    /// held behind the gate until it is all enqueued (gate.cu).
    fn time(&self, work: impl FnOnce() -> R<()>) -> R<f64> {
        let gate = self.gate_fn()?;
        self.flag.set(1, 0);
        self.flag.set(0, 0);
        let queued = self
            .launch(
                &gate,
                1,
                1,
                0,
                false,
                Args::default().ptr(self.flag.dev).l(GATE_MAX_CYCLES),
            )
            .and_then(|()| {
                // SAFETY: our events and stream.
                ck("cuEventRecord", unsafe {
                    sys::cuEventRecord(self.start.0, self.s())
                })
            })
            .and_then(|()| work())
            .and_then(|()| {
                ck("cuEventRecord", unsafe {
                    sys::cuEventRecord(self.stop.0, self.s())
                })
            });
        // Open the gate whatever happened, so that nothing waits on it.
        self.flag.set(0, 1);
        queued?;
        ck("the timed work", unsafe {
            sys::cuEventSynchronize(self.stop.0)
        })?;
        if self.flag.get(1) != 0 {
            return Err("the gate timed out: enqueueing the timed work took over a second".into());
        }
        let mut ms = 0f32;
        ck("cuEventElapsedTime", unsafe {
            sys::cuEventElapsedTime_v2(&mut ms, self.start.0, self.stop.0)
        })?;
        Ok(f64::from(ms) * 1000.0)
    }

    /// Runs `sample` `warmup + repeats` times; returns the timed samples,
    /// each a vector (one value per variant measured in that repeat).
    fn repeat(&self, sample: impl FnMut(usize) -> R<Vec<f64>>) -> R<Vec<Vec<f64>>> {
        self.repeat_n(self.plan.warmup, self.plan.repeats, sample)
    }

    /// [`Bench::repeat`] with the micro-benchmarks' counts.
    fn repeat_micro(&self, sample: impl FnMut(usize) -> R<Vec<f64>>) -> R<Vec<Vec<f64>>> {
        self.repeat_n(self.plan.micro_warmup, self.plan.micro_repeats, sample)
    }

    fn repeat_n(
        &self,
        warmup: usize,
        repeats: usize,
        mut sample: impl FnMut(usize) -> R<Vec<f64>>,
    ) -> R<Vec<Vec<f64>>> {
        let mut out = Vec::new();
        for r in 0..warmup + repeats {
            let s = sample(r)?;
            if r >= warmup {
                out.push(s);
            }
        }
        Ok(out)
    }

    fn check_counters(&self, c: &DevBuf, want: u64, what: &str) -> R<()> {
        self.sync(what)?;
        let v: Vec<u32> = c.download(2)?;
        if v[1] != 0 {
            return Err(format!(
                "{what}: a device launch failed with cudaError {}",
                v[1]
            ));
        }
        if u64::from(v[0]) != want {
            return Err(format!("{what}: {} children ran, expected {want}", v[0]));
        }
        Ok(())
    }
}

/// A figure from per-repeat samples.
fn fig(
    id: &str,
    title: &str,
    unit: &str,
    lower: bool,
    samples: &[f64],
    params: &[(&str, String)],
) -> R<Figure> {
    let s = summarize(samples).ok_or_else(|| format!("{id}: no finite samples"))?;
    Ok(Figure::new(id, title, unit, lower, &s, params))
}

fn col(rows: &[Vec<f64>], i: usize) -> Vec<f64> {
    rows.iter().map(|r| r[i]).collect()
}

fn diff(rows: &[Vec<f64>], a: usize, b: usize, scale: f64) -> Vec<f64> {
    rows.iter().map(|r| (r[a] - r[b]) / scale).collect()
}

/// Runs every group; a group that fails records why and the others go on.
pub fn run_all(b: &Bench) -> Outcome {
    let mut out = Outcome::default();
    type Group = fn(&Bench, &mut Outcome) -> R<()>;
    let groups: [(&str, Group); 5] = [
        ("launch", launch_group),
        ("pending", pending_group),
        ("pdl", pdl_group),
        ("bezier", bezier_group),
        ("quadtree", quadtree_group),
    ];
    for (name, g) in groups {
        let t = Instant::now();
        eprintln!("bench: {name} ...");
        if let Err(e) = g(b, &mut out) {
            eprintln!("bench: {name} FAILED: {e}");
            out.failures.push(format!("{name}: {e}"));
        }
        eprintln!("bench: {name} done in {:.1} s", t.elapsed().as_secs_f64());
    }
    out
}

const KINDS: [(i32, &str, &str); 4] = [
    (0, "null-stream", "the NULL stream"),
    (1, "named-stream", "a named stream"),
    (2, "fire-and-forget", "the fire-and-forget stream"),
    (3, "tail-launch", "the tail launch stream"),
];

fn launch_group(b: &Bench, out: &mut Outcome) -> R<()> {
    b.set_pending_limit(PENDING_LIMIT_LAUNCH)?;
    let m = b.module("launch")?;
    let child = b.func(&m, "child")?;
    let fan = b.func(&m, "fan")?;
    let tail = b.func(&m, "tail_link")?;
    let c = DevBuf::new(8)?;
    let total = (b.plan.micro_warmup + b.plan.micro_repeats) as u64;
    let n: i32 = if b.plan.quick { 64 } else { 256 };
    let n_str = n.to_string();

    // Host launches, back to back into one stream: the GPU's time per
    // launch with all of them queued, and the host's time per launch call.
    c.zero_async(b.s())?;
    let rows = b.repeat_micro(|_| {
        let mut submit = 0.0;
        let t = b.time(|| {
            let t0 = Instant::now();
            for _ in 0..n {
                b.launch(&child, 1, 1, 0, false, Args::default().p(&c))?;
            }
            submit = t0.elapsed().as_secs_f64() * 1e6;
            Ok(())
        })?;
        Ok(vec![t / f64::from(n), submit / f64::from(n)])
    })?;
    b.check_counters(&c, total * n as u64, "host launches")?;
    out.figures.push(fig(
        "launch.host.latency",
        "host launch, one stream, serial: GPU time per launch, all queued",
        "us",
        true,
        &col(&rows, 0),
        &[("launches", n_str.clone())],
    )?);
    out.figures.push(fig(
        "launch.host.submit",
        "host launch call (cuLaunchKernelEx), host clock, per launch",
        "us",
        true,
        &col(&rows, 1),
        &[("launches", n_str.clone())],
    )?);

    // Host launch and synchronize: the round trip the device avoids.
    let rt = 32;
    c.zero_async(b.s())?;
    let rows = b.repeat_micro(|_| {
        let t = Instant::now();
        for _ in 0..rt {
            b.launch(&child, 1, 1, 0, false, Args::default().p(&c))?;
            b.sync("host round trip")?;
        }
        Ok(vec![t.elapsed().as_secs_f64() * 1e6 / f64::from(rt)])
    })?;
    b.check_counters(&c, total * rt as u64, "host round trips")?;
    out.figures.push(fig(
        "launch.host.round-trip",
        "host launch + stream synchronize (host clock, per launch)",
        "us",
        true,
        &col(&rows, 0),
        &[("launches", rt.to_string())],
    )?);

    // Device launches: serial from one thread, and fan-out from many blocks;
    // the cost of a launch is the parent's time above an empty parent's.
    let blocks: u32 = if b.plan.quick { 64 } else { 128 };
    let per_block: i32 = 16;
    for (kind, slug, name) in KINDS {
        c.zero_async(b.s())?;
        let rows = b.repeat_micro(|_| {
            let full =
                b.time(|| b.launch(&fan, 1, 1, 0, false, Args::default().i(kind).i(n).p(&c)))?;
            let empty =
                b.time(|| b.launch(&fan, 1, 1, 0, false, Args::default().i(kind).i(0).p(&c)))?;
            let wide = b.time(|| {
                b.launch(
                    &fan,
                    blocks,
                    1,
                    0,
                    false,
                    Args::default().i(kind).i(per_block).p(&c),
                )
            })?;
            let wide0 = b.time(|| {
                b.launch(
                    &fan,
                    blocks,
                    1,
                    0,
                    false,
                    Args::default().i(kind).i(0).p(&c),
                )
            })?;
            Ok(vec![full, empty, wide, wide0])
        })?;
        let want = total * (n as u64 + u64::from(blocks) * per_block as u64);
        b.check_counters(&c, want, &format!("device launches into {name}"))?;
        out.figures.push(fig(
            &format!("launch.device.{slug}.latency"),
            &format!("device launch into {name}, one thread, serial (per launch)"),
            "us",
            true,
            &diff(&rows, 0, 1, f64::from(n)),
            &[("blocks", "1".into()), ("launches", n_str.clone())],
        )?);
        out.figures.push(fig(
            &format!("launch.device.{slug}.throughput"),
            &format!("device launch into {name}, fan-out from {blocks} blocks (per launch)"),
            "us",
            true,
            &diff(&rows, 2, 3, f64::from(blocks) * f64::from(per_block)),
            &[
                ("blocks", blocks.to_string()),
                ("launches_per_block", per_block.to_string()),
            ],
        )?);
    }

    // A tail-launch chain: each link tail-launches the next.
    c.zero_async(b.s())?;
    let rows = b.repeat_micro(|_| {
        let full = b.time(|| b.launch(&tail, 1, 1, 0, false, Args::default().i(n).p(&c)))?;
        let empty = b.time(|| b.launch(&tail, 1, 1, 0, false, Args::default().i(0).p(&c)))?;
        Ok(vec![full, empty])
    })?;
    b.check_counters(&c, total * (n as u64 + 2), "the tail-launch chain")?;
    out.figures.push(fig(
        "launch.device.tail-chain.per-link",
        "tail-launch chain (per link)",
        "us",
        true,
        &diff(&rows, 0, 1, f64::from(n)),
        &[("links", n_str)],
    )?);
    Ok(())
}

/// The pending launch pool filling up, timed by the launching thread with
/// `%globaltimer`: one thread holds its NULL stream with a child, then
/// launches children behind it until a launch fails.
fn pending_group(b: &Bench, out: &mut Outcome) -> R<()> {
    let limit = PENDING_LIMIT_LAUNCH;
    b.set_pending_limit(limit)?;
    let m = b.module("launch")?;
    let fill = b.func(&m, "pending_fill")?;
    let attempts = 2 * limit;
    let c = DevBuf::new(8)?;
    let flag = DevBuf::new(4)?;
    let stamps = DevBuf::new(8 * (attempts + 2))?;
    let res = DevBuf::new(8)?;
    let mut launched_total = 0u64;
    let mut launched_seen = Vec::new();
    let mut errors = Vec::new();
    let rows = b.repeat_micro(|_| {
        res.zero_async(b.s())?;
        b.launch(
            &fill,
            1,
            1,
            0,
            false,
            Args::default()
                .i(attempts as i32)
                .p(&flag)
                .p(&c)
                .p(&stamps)
                .p(&res),
        )?;
        b.sync("pending_fill")?;
        let r: Vec<u32> = res.download(2)?;
        let l = r[0] as usize;
        let st: Vec<u64> = stamps.download(attempts + 2)?;
        launched_total += l as u64 + 1;
        launched_seen.push(l);
        errors.push(r[1]);
        if l < 4 {
            return Err(format!("only {l} launches succeeded (error {})", r[1]));
        }
        let mut row = Vec::new();
        for q in 0..4 {
            let (lo, hi) = (q * l / 4, (q + 1) * l / 4);
            let ns = st[hi].saturating_sub(st[lo]) as f64;
            row.push(ns / 1000.0 / (hi - lo) as f64);
        }
        row.push(if r[1] != 0 {
            st[l + 1].saturating_sub(st[l]) as f64 / 1000.0
        } else {
            f64::NAN
        });
        Ok(row)
    })?;
    b.check_counters(&c, launched_total, "the pending pool")?;
    launched_seen.sort_unstable();
    errors.sort_unstable();
    errors.dedup();
    let launched = launched_seen[launched_seen.len() / 2];
    let errs = errors
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join(",");
    for q in 0..4 {
        out.figures.push(fig(
            &format!("launch.device.pending.fill-q{}", q + 1),
            &format!(
                "device launch into a held NULL stream, pool {}-{}% full (device clock, per launch)",
                25 * q,
                25 * (q + 1)
            ),
            "us",
            true,
            &col(&rows, q),
            &[
                ("limit", limit.to_string()),
                ("launched", launched.to_string()),
            ],
        )?);
    }
    let failed = col(&rows, 4);
    if errors == [69] {
        out.figures.push(fig(
            "launch.device.pending.full",
            "device launch into a full pool: the failing launch (device clock)",
            "us",
            true,
            &failed,
            &[
                ("limit", limit.to_string()),
                ("error", "cudaErrorLaunchPendingCountExceeded (69)".into()),
            ],
        )?);
    } else {
        out.notes.push(format!(
            "pending pool: the launches after a full pool ended with cudaError {errs}, not always 69; no figure for the failing launch"
        ));
    }
    out.notes.push(format!(
        "pending pool: limit {limit}, median {launched} launches succeeded behind the held child (errors seen: {errs})"
    ));
    Ok(())
}

const TRIGGERS: [(i32, &str); 3] = [(0, "early"), (1, "late"), (2, "none")];

/// One PDL chain configuration and its buffers (a, b ping-pong; after every
/// chain of even length, a holds the number of steps run so far).
struct Chain {
    pdl: bool,
    trigger: i32,
    prologue: i64,
    big: bool,
    a: DevBuf,
    b: DevBuf,
    steps: u64,
}

fn pdl_group(b: &Bench, out: &mut Outcome) -> R<()> {
    let m = b.module("pdl")?;
    let step = b.func(&m, "pdl_step")?;
    let fused = b.func(&m, "pdl_fused")?;
    let k: u32 = if b.plan.quick { 16 } else { 32 };
    let work: i64 = 2000;
    let threads = 128u32;
    let grid = b.sms;
    let n = (grid * threads) as usize;
    let big_grid = 4 * b.sms;
    let big_n = (big_grid * threads) as usize;
    let big_smem: u32 = 160 * 1024;
    // SAFETY: a valid function and attribute.
    ck("cuFuncSetAttribute(max dynamic shared memory)", unsafe {
        sys::cuFuncSetAttribute(
            step.cu_function(),
            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            big_smem as i32,
        )
    })?;
    let prologues: &[i64] = &[0, 4000, 16000];
    let mk = |pdl, trigger, prologue, big| -> R<Chain> {
        let len = if big { big_n } else { n } * 4;
        Ok(Chain {
            pdl,
            trigger,
            prologue,
            big,
            a: DevBuf::new(len)?,
            b: DevBuf::new(len)?,
            steps: 0,
        })
    };
    // chains[p][0] without the attribute, [1..4] with it, per trigger
    let mut chains: Vec<Vec<Chain>> = Vec::new();
    for &p in prologues {
        let mut v = vec![mk(false, 2, p, false)?];
        for (t, _) in TRIGGERS {
            v.push(mk(true, t, p, false)?);
        }
        chains.push(v);
    }
    let graph_prologue = 4000;
    let mut graphs = [
        mk(true, 0, graph_prologue, false)?,
        mk(false, 2, graph_prologue, false)?,
    ];
    let mut bigs = [
        mk(true, 0, graph_prologue, true)?,
        mk(false, 2, graph_prologue, true)?,
    ];
    let fa = DevBuf::new(n * 4)?;
    let fb = DevBuf::new(n * 4)?;
    let bar = DevBuf::new(8)?;
    let mut fused_steps = 0u64;

    let run_chain = |ch: &Chain| -> R<()> {
        let (g, len, smem) = if ch.big {
            (big_grid, big_n, big_smem)
        } else {
            (grid, n, 0)
        };
        for i in 0..k {
            let (src, dst) = if i % 2 == 0 {
                (&ch.a, &ch.b)
            } else {
                (&ch.b, &ch.a)
            };
            b.launch(
                &step,
                g,
                threads,
                smem,
                ch.pdl,
                Args::default()
                    .p(src)
                    .p(dst)
                    .i(len as i32)
                    .l(ch.prologue)
                    .l(work)
                    .i(ch.trigger),
            )?;
        }
        Ok(())
    };

    // Capture the graph chains.
    let mut execs = Vec::new();
    for g in &graphs {
        let mut graph = std::ptr::null_mut();
        // SAFETY: our stream; the graph handle is written by EndCapture.
        ck("cuStreamBeginCapture", unsafe {
            sys::cuStreamBeginCapture_v2(
                b.s(),
                sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            )
        })?;
        let launched = run_chain(g);
        let end = ck("cuStreamEndCapture", unsafe {
            sys::cuStreamEndCapture(b.s(), &mut graph)
        });
        launched?;
        end?;
        let mut exec = std::ptr::null_mut();
        // SAFETY: a captured graph.
        let inst = ck("cuGraphInstantiate", unsafe {
            sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0)
        });
        // SAFETY: the executable graph does not need the graph.
        unsafe { sys::cuGraphDestroy(graph) };
        inst?;
        execs.push(exec);
    }

    let rows = b.repeat_micro(|_| {
        let mut row = Vec::new();
        for per_p in &mut chains {
            for ch in per_p.iter_mut() {
                row.push(b.time(|| run_chain(ch))? / f64::from(k));
                ch.steps += u64::from(k);
            }
        }
        // the main work only, in one grid: without a barrier (the ideal),
        // then with a grid barrier between steps
        for barrier in [0i32, 1] {
            let mut p_a = fa.ptr;
            let mut p_b = fb.ptr;
            let mut n_i = n as i32;
            let mut w = work;
            let mut steps = k as i32;
            let mut p_bar = bar.ptr;
            let mut with_barrier = barrier;
            let mut params = [
                &mut p_a as *mut _ as *mut c_void,
                &mut p_b as *mut _ as *mut c_void,
                &mut n_i as *mut _ as *mut c_void,
                &mut w as *mut _ as *mut c_void,
                &mut steps as *mut _ as *mut c_void,
                &mut p_bar as *mut _ as *mut c_void,
                &mut with_barrier as *mut _ as *mut c_void,
            ];
            row.push(
                b.time(|| {
                    // SAFETY: the parameters match pdl_fused's and outlive the call.
                    ck("cuLaunchCooperativeKernel", unsafe {
                        sys::cuLaunchCooperativeKernel(
                            fused.cu_function(),
                            grid,
                            1,
                            1,
                            threads,
                            1,
                            1,
                            0,
                            b.s(),
                            params.as_mut_ptr(),
                        )
                    })
                })? / f64::from(k),
            );
            fused_steps += u64::from(k);
        }
        for (g, exec) in graphs.iter_mut().zip(&execs) {
            // SAFETY: an instantiated graph, our stream.
            row.push(
                b.time(|| ck("cuGraphLaunch", unsafe { sys::cuGraphLaunch(*exec, b.s()) }))?
                    / f64::from(k),
            );
            g.steps += u64::from(k);
        }
        for ch in bigs.iter_mut() {
            row.push(b.time(|| run_chain(ch))? / f64::from(k));
            ch.steps += u64::from(k);
        }
        Ok(row)
    })?;
    for exec in execs {
        // SAFETY: instantiated above, destroyed once.
        unsafe { sys::cuGraphExecDestroy(exec) };
    }
    b.sync("the PDL chains")?;

    // Verify: after an even number of steps a = steps, b = steps - 1.
    let check = |a: &DevBuf, bb: &DevBuf, len: usize, steps: u64, what: &str| -> R<()> {
        let va: Vec<u32> = a.download(len)?;
        let vb: Vec<u32> = bb.download(len)?;
        if let Some(i) =
            (0..len).find(|&i| u64::from(va[i]) != steps || u64::from(vb[i]) + 1 != steps)
        {
            return Err(format!(
                "{what}: element {i} is ({}, {}), expected ({steps}, {})",
                va[i],
                vb[i],
                steps - 1
            ));
        }
        Ok(())
    };
    for per_p in &chains {
        for ch in per_p {
            check(
                &ch.a,
                &ch.b,
                n,
                ch.steps,
                &format!(
                    "PDL chain (pdl {}, trigger {}, prologue {})",
                    ch.pdl, ch.trigger, ch.prologue
                ),
            )?;
        }
    }
    for (g, what) in graphs.iter().zip(["graph with PDL", "graph without PDL"]) {
        check(&g.a, &g.b, n, g.steps, what)?;
    }
    for (g, what) in bigs
        .iter()
        .zip(["large chain with PDL", "large chain without PDL"])
    {
        check(&g.a, &g.b, big_n, g.steps, what)?;
    }
    check(&fa, &fb, n, fused_steps, "the fused ideal")?;

    let base = |p: i64| {
        vec![
            ("kernels", k.to_string()),
            ("blocks", grid.to_string()),
            ("threads", threads.to_string()),
            ("prologue_cycles", p.to_string()),
            ("work_cycles", work.to_string()),
        ]
    };
    let width = 4 * prologues.len();
    let ideal_col = width;
    for (pi, &p) in prologues.iter().enumerate() {
        let c0 = 4 * pi;
        let params = base(p);
        out.figures.push(fig(
            &format!("pdl.chain.no-attr.p{p}"),
            &format!("chain without the PDL attribute, prologue {p} cycles (per kernel)"),
            "us",
            true,
            &col(&rows, c0),
            &params,
        )?);
        for (ti, (_, t)) in TRIGGERS.iter().enumerate() {
            out.figures.push(fig(
                &format!("pdl.chain.attr-{t}.p{p}"),
                &format!("chain with PDL, trigger {t}, prologue {p} cycles (per kernel)"),
                "us",
                true,
                &col(&rows, c0 + 1 + ti),
                &params,
            )?);
            out.figures.push(fig(
                &format!("pdl.saving.attr-{t}.p{p}"),
                &format!("PDL saving per kernel boundary, trigger {t}, prologue {p} cycles"),
                "us",
                false,
                &diff(&rows, c0, c0 + 1 + ti, 1.0),
                &params,
            )?);
            // the saving as a fraction of the ideal saving
            let hidden: Vec<f64> = rows
                .iter()
                .map(|r| (r[c0] - r[c0 + 1 + ti]) / (r[c0] - r[ideal_col]))
                .collect();
            out.figures.push(fig(
                &format!("pdl.hidden.attr-{t}.p{p}"),
                &format!(
                    "PDL saving / ideal saving per kernel boundary, trigger {t}, prologue {p} cycles"
                ),
                "fraction",
                false,
                &hidden,
                &params,
            )?);
        }
        out.figures.push(fig(
            &format!("pdl.saving.ideal.p{p}"),
            &format!("ideal saving per kernel boundary (launch and prologue fully hidden), prologue {p} cycles"),
            "us",
            false,
            &diff(&rows, c0, ideal_col, 1.0),
            &params,
        )?);
    }
    out.figures.push(fig(
        "pdl.ideal",
        "ideal: the main work only, all steps in one grid (per step)",
        "us",
        true,
        &col(&rows, ideal_col),
        &base(0),
    )?);
    let mut barrier_params = base(0);
    barrier_params.push(("launch", "cooperative, grid barrier between steps".into()));
    out.figures.push(fig(
        "pdl.grid-barrier",
        "the main work in one cooperative grid, a software grid barrier per step (per step)",
        "us",
        true,
        &col(&rows, ideal_col + 1),
        &barrier_params,
    )?);
    let gp = base(graph_prologue);
    out.figures.push(fig(
        &format!("pdl.graph.attr-early.p{graph_prologue}"),
        "chain with PDL (trigger early) captured in a CUDA graph (per kernel)",
        "us",
        true,
        &col(&rows, width + 2),
        &gp,
    )?);
    out.figures.push(fig(
        &format!("pdl.graph.no-attr.p{graph_prologue}"),
        "chain without PDL captured in a CUDA graph (per kernel)",
        "us",
        true,
        &col(&rows, width + 3),
        &gp,
    )?);
    out.figures.push(fig(
        &format!("pdl.saving.graph.p{graph_prologue}"),
        "PDL saving per kernel boundary inside a CUDA graph, trigger early",
        "us",
        false,
        &diff(&rows, width + 3, width + 2, 1.0),
        &gp,
    )?);
    let mut bp = base(graph_prologue);
    bp[1] = ("blocks", big_grid.to_string());
    bp.push(("dynamic_smem_bytes", big_smem.to_string()));
    out.figures.push(fig(
        &format!("pdl.large.attr-early.p{graph_prologue}"),
        "secondary too large to be co-resident: chain with PDL, trigger early (per kernel)",
        "us",
        true,
        &col(&rows, width + 4),
        &bp,
    )?);
    out.figures.push(fig(
        &format!("pdl.large.no-attr.p{graph_prologue}"),
        "secondary too large to be co-resident: chain without PDL (per kernel)",
        "us",
        true,
        &col(&rows, width + 5),
        &bp,
    )?);
    out.figures.push(fig(
        &format!("pdl.saving.large.p{graph_prologue}"),
        "PDL saving per kernel boundary, secondary too large to be co-resident",
        "us",
        false,
        &diff(&rows, width + 5, width + 4, 1.0),
        &bp,
    )?);
    Ok(())
}

/// How many input sets to rotate through so that their footprint is at
/// least twice the L2 cache, between 1 and `cap`.
pub fn rotation(bytes_per_set: usize, l2_bytes: usize, cap: usize) -> usize {
    (2 * l2_bytes)
        .div_ceil(bytes_per_set.max(1))
        .clamp(1, cap.max(1))
}

fn bezier_group(b: &Bench, out: &mut Outcome) -> R<()> {
    b.set_pending_limit(PENDING_LIMIT_PMPP)?;
    let m = b.module("bezier")?;
    let dp = b.func(&m, "bezier_dp")?;
    let flat = b.func(&m, "bezier_flat")?;
    let sizes: &[usize] = if b.plan.quick {
        &[1024, 16384]
    } else {
        &[1024, 16384, 131072]
    };
    let err = DevBuf::new(4)?;
    for &lines in sizes {
        let vert_floats = lines * reference::MAX_TESS_POINTS * 2;
        let set_bytes = lines * 24 + vert_floats * 4 + lines * 4;
        let sets = rotation(set_bytes, b.l2_bytes, 8);
        let mut inputs = Vec::new();
        for s in 0..sets {
            let host = reference::bezier_lines(lines, 12345 + s as u32);
            inputs.push((
                DevBuf::with(&host[..])?,
                DevBuf::new(vert_floats * 4)?,
                DevBuf::new(lines * 4)?,
                host,
            ));
        }
        let mut vertices = 0;
        // 0: a child grid per line into the NULL stream (the chapter's),
        // 1: the same into the fire-and-forget stream, 2: flat
        let names = [
            "dynamic parallelism",
            "dynamic parallelism, fire-and-forget",
            "flat",
        ];
        let rows = b.repeat(|r| {
            let (lines_d, verts, counts, host) = &inputs[r % sets];
            let mut row = Vec::new();
            for variant in 0..3 {
                verts.zero_async(b.s())?;
                counts.zero_async(b.s())?;
                err.zero_async(b.s())?;
                let t = b.time(|| {
                    if variant < 2 {
                        b.launch(
                            &dp,
                            lines.div_ceil(128) as u32,
                            128,
                            0,
                            false,
                            Args::default()
                                .p(lines_d)
                                .i(lines as i32)
                                .p(verts)
                                .p(counts)
                                .p(&err)
                                .i(variant),
                        )
                    } else {
                        b.launch(
                            &flat,
                            lines as u32,
                            32,
                            0,
                            false,
                            Args::default()
                                .p(lines_d)
                                .i(lines as i32)
                                .p(verts)
                                .p(counts),
                        )
                    }
                })?;
                let e: Vec<u32> = err.download(1)?;
                if e[0] != 0 {
                    return Err(format!(
                        "Bezier, {lines} lines: a child launch failed with cudaError {}",
                        e[0]
                    ));
                }
                let c: Vec<i32> = counts.download(lines)?;
                let v: Vec<f32> = verts.download(vert_floats)?;
                vertices = reference::check_bezier(host, &c, &v).map_err(|e| {
                    format!(
                        "Bezier ({}), {lines} lines, input set {}: {e}",
                        names[variant as usize],
                        r % sets
                    )
                })?;
                row.push(t);
            }
            Ok(row)
        })?;
        let params = [
            ("lines", lines.to_string()),
            ("input_sets", sets.to_string()),
            ("vertices_last_set", vertices.to_string()),
        ];
        out.figures.push(fig(
            &format!("pmpp.bezier.dp.lines-{lines}"),
            &format!(
                "Bezier tessellation, a child grid per line into the NULL stream (the chapter's), {lines} lines"
            ),
            "us",
            true,
            &col(&rows, 0),
            &params,
        )?);
        out.figures.push(fig(
            &format!("pmpp.bezier.dp-fire-and-forget.lines-{lines}"),
            &format!(
                "Bezier tessellation, a child grid per line into the fire-and-forget stream, {lines} lines"
            ),
            "us",
            true,
            &col(&rows, 1),
            &params,
        )?);
        out.figures.push(fig(
            &format!("pmpp.bezier.flat.lines-{lines}"),
            &format!("Bezier tessellation, flat (a block per line), {lines} lines"),
            "us",
            true,
            &col(&rows, 2),
            &params,
        )?);
        for (v, slug) in [(0, "dp"), (1, "dp-fire-and-forget")] {
            let ratio: Vec<f64> = rows.iter().map(|r| r[v] / r[2]).collect();
            out.figures.push(fig(
                &format!("pmpp.bezier.{slug}-over-flat.lines-{lines}"),
                &format!(
                    "Bezier tessellation, time with {} / flat, {lines} lines",
                    names[v]
                ),
                "x",
                true,
                &ratio,
                &params,
            )?);
        }
    }
    Ok(())
}

fn quadtree_group(b: &Bench, out: &mut Outcome) -> R<()> {
    b.set_pending_limit(PENDING_LIMIT_PMPP)?;
    let m = b.module("quadtree")?;
    let root = b.func(&m, "quadtree_root")?;
    let sizes: &[usize] = if b.plan.quick {
        &[4096, 65536]
    } else {
        &[4096, 65536, 524288]
    };
    let (max_depth, min_points) = (8u32, 16u32);
    let slots = reference::node_slots(max_depth);
    let nodes = DevBuf::new(slots * reference::NODE_WORDS * 4)?;
    let points = DevBuf::new(32)?;
    let res = DevBuf::new(16)?;
    for &n in sizes {
        let sets = rotation(n * 8, b.l2_bytes, 16);
        let mut inputs = Vec::new();
        for s in 0..sets {
            let (x, y) = reference::quadtree_points(n, 2024 + s as u32);
            inputs.push((DevBuf::with(&x[..])?, DevBuf::with(&y[..])?, x, y));
        }
        let x0 = DevBuf::new(n * 4)?;
        let y0 = DevBuf::new(n * 4)?;
        let x1 = DevBuf::new(n * 4)?;
        let y1 = DevBuf::new(n * 4)?;
        let mut shape = None;
        let rows = b.repeat(|r| {
            let (xd, yd, xh, yh) = &inputs[r % sets];
            // SAFETY: same sizes, our stream.
            ck("cuMemcpyDtoDAsync", unsafe {
                sys::cuMemcpyDtoDAsync_v2(x0.ptr, xd.ptr, n * 4, b.s())
            })?;
            ck("cuMemcpyDtoDAsync", unsafe {
                sys::cuMemcpyDtoDAsync_v2(y0.ptr, yd.ptr, n * 4, b.s())
            })?;
            for buf in [&x1, &y1, &nodes, &res] {
                buf.zero_async(b.s())?;
            }
            let t = b.time(|| {
                b.launch(
                    &root,
                    1,
                    1,
                    0,
                    false,
                    Args::default()
                        .p(&nodes)
                        .p(&points)
                        .p(&x0)
                        .p(&y0)
                        .p(&x1)
                        .p(&y1)
                        .i(n as i32)
                        .i(max_depth as i32)
                        .i(min_points as i32)
                        .p(&res),
                )
            })?;
            let o: Vec<u32> = res.download(3)?;
            let gx: Vec<f32> = x0.download(n)?;
            let gy: Vec<f32> = y0.download(n)?;
            let nd: Vec<u32> = nodes.download(slots * reference::NODE_WORDS)?;
            let what = format!("quadtree, {n} points, input set {}", r % sets);
            if o[2] != 0 {
                return Err(format!("{what}: a launch failed with cudaError {}", o[2]));
            }
            let s = reference::check_quadtree((xh, yh), (&gx, &gy), &nd, max_depth, min_points)
                .map_err(|e| format!("{what}: {e}"))?;
            if (o[0], o[1]) != (s.internal, s.max_depth) {
                return Err(format!(
                    "{what}: {} launches and depth {}, the CPU says {} and {}",
                    o[0], o[1], s.internal, s.max_depth
                ));
            }
            shape = Some(s);
            Ok(vec![t])
        })?;
        let s = shape.ok_or("no repeat ran")?;
        out.figures.push(fig(
            &format!("pmpp.quadtree.dp.points-{n}"),
            &format!("quadtree build, recursive launches, {n} points"),
            "us",
            true,
            &col(&rows, 0),
            &[
                ("points", n.to_string()),
                ("max_depth", max_depth.to_string()),
                ("min_points_per_node", min_points.to_string()),
                ("input_sets", sets.to_string()),
                ("launches_last_set", s.internal.to_string()),
                ("leaves_last_set", s.leaves.to_string()),
                ("depth_reached_last_set", s.max_depth.to_string()),
            ],
        )?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_exceeds_l2() {
        let l2 = 50 << 20;
        assert_eq!(rotation(4 << 20, l2, 16), 16);
        assert_eq!(rotation(40 << 20, l2, 16), 3);
        assert_eq!(rotation(200 << 20, l2, 16), 1);
        assert_eq!(rotation(0, l2, 8), 8);
    }

    #[test]
    fn paired_differences() {
        let rows = vec![vec![10.0, 4.0], vec![12.0, 4.0]];
        assert_eq!(diff(&rows, 0, 1, 2.0), vec![3.0, 4.0]);
        assert_eq!(col(&rows, 1), vec![4.0, 4.0]);
    }

    #[test]
    fn no_driver_is_an_error_not_a_panic() {
        if let Err(e) = open(Path::new("/nonexistent"), Plan::quick()) {
            assert!(!e.is_empty());
        }
    }
}
