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
//!
//! This file is the driver (the device, the gate, warm-up and repeats, the
//! shared helpers); each benchmark group is its own module, named after its
//! kernel file under `kernels/bench/`.

use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream, sys};

use crate::baseline::Figure;
use crate::stats::summarize;

mod bezier;
mod buffers;
mod launch;
mod pdl;
mod quadtree;

use buffers::{Args, DevBuf, Event, Flag, ck, err_name};

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
    // SAFETY: one stream does all the work; cudarc's event tracking would
    // put event waits between the launches of a PDL chain, and its
    // secondaries could no longer start early.
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
                // SAFETY: our events and stream.
                ck("cuEventRecord", unsafe {
                    sys::cuEventRecord(self.stop.0, self.s())
                })
            });
        // Open the gate whatever happened, so that nothing waits on it.
        self.flag.set(0, 1);
        queued?;
        // SAFETY: our event, recorded above.
        ck("the timed work", unsafe {
            sys::cuEventSynchronize(self.stop.0)
        })?;
        if self.flag.get(1) != 0 {
            return Err("the gate timed out: enqueueing the timed work took over a second".into());
        }
        let mut ms = 0f32;
        // SAFETY: our two events, both recorded and complete; writes one float.
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
        ("launch", launch::launch_group),
        ("pending", launch::pending_group),
        ("pdl", pdl::pdl_group),
        ("bezier", bezier::bezier_group),
        ("quadtree", quadtree::quadtree_group),
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

/// How many input sets to rotate through so that their footprint is at
/// least twice the L2 cache, between 1 and `cap`.
pub fn rotation(bytes_per_set: usize, l2_bytes: usize, cap: usize) -> usize {
    (2 * l2_bytes)
        .div_ceil(bytes_per_set.max(1))
        .clamp(1, cap.max(1))
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
