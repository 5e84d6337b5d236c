//! Litmus runs ([`Gpu::run_litmus`]): many instances a launch, each launch
//! with fresh memory, status words and registers and its own seed; the
//! outcome histogram gathered on the GPU (`histogram.rs`), the instances it
//! could not bin decoded here.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, sys};
use gridcheck_kernelgen::Layout;
use gridcheck_spec::{KernelLaunch, Limit, Litmus, State};

use crate::context::Gpu;
use crate::environment::{Budget, Params, launch_seed, permutation};
use crate::error::{GpuError, drv};
use crate::run_buffers::{Collected, RunBuffers, alloc};
use crate::stale::StaleTally;
use crate::watch::{WatchCtx, Watcher, watch_launch};
use crate::watchdog::Watchdog;
use gridcheck_report::{StaleWords, Tuning};

/// The most launches (of one instance each) a litmus test that sets device
/// runtime limits runs.
pub const MAX_LIMITED_LAUNCHES: u32 = 4096;

/// The outcome of [`Gpu::run_litmus`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LitmusRun {
    /// Final states, keyed like [`Litmus::observables`], with their counts.
    pub histogram: BTreeMap<State, u64>,
    /// Instances whose outcome was recorded.
    pub instances: u64,
    /// Instances whose device launch reported an error, or whose kernels did
    /// not all run (not in the histogram).
    pub launch_failures: u64,
    pub first_launch_error: Option<String>,
    /// Per segment of a tile register, how many words were stale, over
    /// the clean instances of launches waited for one by one (none when
    /// GRIDCHECK_QUEUE_LAUNCHES queues them).
    pub stale: Vec<StaleWords>,
    /// The whole run: loading the module, allocating, launching, reading back.
    pub elapsed: Duration,
    /// From the first launch to the end of the last: the steady-state cost
    /// of the instances, without the module load and allocations.
    pub launch_elapsed: Duration,
    pub seed: u64,
}

impl Gpu {
    /// Runs a litmus test in the built-in [`Tuning`] (its incantations;
    /// `budget` says how much work).
    pub fn run_litmus(
        &self,
        cubin: &Path,
        test_name: &str,
        litmus: &Litmus,
        budget: &Budget,
    ) -> Result<LitmusRun, GpuError> {
        self.run_litmus_with(cubin, test_name, litmus, budget, &Tuning::default())
    }

    /// Runs `budget.launches` host launches of `budget.instances_per_launch`
    /// instances of a litmus test from its generated cubin.
    ///
    /// A test that sets device runtime limits (the launch pool, the sync
    /// depth) gets them set before its module is loaded and restored
    /// afterwards; since the limits are device-wide, such a test runs one
    /// instance per launch (at most [`MAX_LIMITED_LAUNCHES`] launches), so
    /// that instances do not share the launch pool.
    pub fn run_litmus_with(
        &self,
        cubin: &Path,
        test_name: &str,
        litmus: &Litmus,
        budget: &Budget,
        inc: &Tuning,
    ) -> Result<LitmusRun, GpuError> {
        if litmus.limits.is_empty() {
            return self.run_litmus_core(cubin, test_name, litmus, budget, inc);
        }
        self.ctx
            .bind_to_thread()
            .map_err(drv("cannot bind the context"))?;
        let one = Budget {
            instances_per_launch: 1,
            launches: budget
                .launches
                .saturating_mul(budget.instances_per_launch)
                .clamp(1, MAX_LIMITED_LAUNCHES),
            seed: budget.seed,
        };
        self.with_limits(&litmus.limits, || {
            self.run_litmus_core(cubin, test_name, litmus, &one, inc)
        })
    }

    /// Loads a cubin (or PTX) once, for [`Gpu::run_litmus_in`]: a batch of
    /// programs compiled into one module runs from one load.
    pub fn load_module(&self, cubin: &Path) -> Result<LoadedModule, GpuError> {
        self.ctx
            .bind_to_thread()
            .map_err(drv("cannot bind the context"))?;
        let bytes = self.module_image(cubin).map_err(GpuError::from)?;
        let module = self
            .ctx
            .load_module(cudarc::nvrtc::Ptx::from_binary(bytes))
            .map_err(drv(&format!("cannot load {}", cubin.display())))?;
        Ok(LoadedModule {
            module,
            file: cubin.to_path_buf(),
        })
    }

    /// Runs a litmus test (one without device runtime limits) whose kernels
    /// are in a module already loaded: `test_name` picks its kernels.
    pub fn run_litmus_in(
        &self,
        module: &LoadedModule,
        test_name: &str,
        litmus: &Litmus,
        budget: &Budget,
        inc: &Tuning,
    ) -> Result<LitmusRun, GpuError> {
        if !litmus.limits.is_empty() {
            return Err(GpuError::new(format!(
                "{test_name} sets device runtime limits: run it with run_litmus_with"
            )));
        }
        let start = Instant::now();
        let mut run = self.run_loaded(module, test_name, litmus, budget, inc)?;
        run.elapsed = start.elapsed();
        Ok(run)
    }

    fn run_litmus_core(
        &self,
        cubin: &Path,
        test_name: &str,
        litmus: &Litmus,
        budget: &Budget,
        inc: &Tuning,
    ) -> Result<LitmusRun, GpuError> {
        let start = Instant::now();
        let module = self.load_module(cubin)?;
        match self.run_loaded(&module, test_name, litmus, budget, inc) {
            Ok(mut run) => {
                run.elapsed = start.elapsed();
                Ok(run)
            }
            Err(e) => {
                if self.watch_each.is_some() {
                    // A watched launch may have stalled: unloading the
                    // module would wait for it forever (see run_loaded).
                    std::mem::forget(module);
                }
                Err(e)
            }
        }
    }

    /// The run of [`Gpu::run_litmus_with`] in a module already loaded
    /// (its `elapsed` is the caller's to set).
    fn run_loaded(
        &self,
        loaded: &LoadedModule,
        test_name: &str,
        litmus: &Litmus,
        budget: &Budget,
        inc: &Tuning,
    ) -> Result<LitmusRun, GpuError> {
        let (module, cubin) = (&loaded.module, loaded.file.as_path());
        let n = budget.instances_per_launch;
        if n == 0 {
            return Err(GpuError::new(
                "a budget needs at least one instance per launch",
            ));
        }
        self.ctx
            .bind_to_thread()
            .map_err(drv("cannot bind the context"))?;
        let lay = gridcheck_kernelgen::layout(litmus);
        let host = host_kernels(module, cubin, test_name, &lay)?;
        self.raise_pending_limit(litmus, &lay, n)?;
        let mut run = LitmusRun {
            histogram: BTreeMap::new(),
            instances: 0,
            launch_failures: 0,
            first_launch_error: None,
            stale: Vec::new(),
            elapsed: Duration::ZERO,
            launch_elapsed: Duration::ZERO,
            seed: budget.seed,
        };
        let bufs = RunBuffers::new(&self.stream, litmus, &lay, budget, inc)?;
        let hist_fn = module
            .load_function("gridcheck_histogram")
            .map_err(drv(&format!(
                "kernel `gridcheck_histogram` is not in {} (rebuild it: `cargo xtask build`)",
                cubin.display()
            )))?;
        self.stream
            .synchronize()
            .map_err(drv("cannot prepare the run"))?;
        let sync_each = std::env::var_os("GRIDCHECK_QUEUE_LAUNCHES").is_none();
        let mut watch = self.open_watch(n as usize, &lay)?;
        // The watchdog (`watchdog.rs`) looks at launches that are waited
        // for one by one, unless each launch is watched (`watch_each`).
        let dog = self
            .watchdog
            .as_ref()
            .filter(|_| sync_each && watch.is_none());
        if let Some(d) = dog {
            d.reserve(&self.ctx, n as usize * lay.status_stride as usize)?;
        }
        let dog = dog.map(|d| (d, Arc::new(lay.clone())));
        let launches = Launches {
            stream: &self.stream,
            lay: &lay,
            host: &host,
            hist_fn: &hist_fn,
            bufs: &bufs,
            test_name,
            budget,
            inc,
            sync_each,
            dog: dog.as_ref().map(|(d, l)| (*d, l)),
        };
        // Only launches waited for one by one are read back.
        let mut stale = if sync_each || watch.is_some() {
            StaleTally::new(&lay)
        } else {
            StaleTally::default()
        };
        let launches_start = Instant::now();
        for li in 0..budget.launches {
            if let Err(e) = launches.launch(li, launches_start, watch.as_mut(), &mut stale) {
                if watch.is_some() {
                    // A watched launch that stalled may never end: freeing
                    // what it uses (page-locked memory, device memory, the
                    // module) would wait for it forever, so all of it is
                    // left to the process, a rerun under watch whose worker
                    // ends right after reporting the error.
                    std::mem::forget((watch, bufs, hist_fn, host));
                }
                return Err(e);
            }
        }
        self.stream
            .synchronize()
            .map_err(drv(&format!("a launch of {test_name} failed")))?;
        run.launch_elapsed = launches_start.elapsed();
        let mut got = Collected::default();
        bufs.collect(&self.stream, &lay, &mut got)?;
        run.histogram = got.histogram;
        run.instances = got.instances;
        run.launch_failures = got.launch_failures;
        run.first_launch_error = got.first_launch_error;
        run.stale = stale.segments;
        Ok(run)
    }

    /// Raises the pending launch limit to what `n` instances launch at
    /// once, unless the test sets that limit itself.
    fn raise_pending_limit(&self, litmus: &Litmus, lay: &Layout, n: u32) -> Result<(), GpuError> {
        let pending = u64::from(n) * u64::from(lay.pending_launches_per_instance());
        if pending > 0 && litmus.limit(Limit::DevRuntimePendingLaunchCount).is_none() {
            let limit = sys::CUlimit::CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT;
            let need = (pending + 1024) as usize;
            let have = self
                .ctx
                .get_limit(limit)
                .map_err(drv("cannot read the pending launch limit"))?;
            if have < need {
                self.ctx.set_limit(limit, need).map_err(drv(&format!(
                    "cannot raise the pending launch limit to {need}"
                )))?;
            }
        }
        Ok(())
    }

    /// [`Gpu::watch_each_launch`]: each launch watched instead of waited
    /// for (`watch.rs`); a stall or a run out of time ends the run with its
    /// classification as the error.
    fn open_watch(&self, nz: usize, lay: &Layout) -> Result<Option<Watch>, GpuError> {
        let Some((stall, budget_s)) = self.watch_each else {
            return Ok(None);
        };
        let side = self
            .ctx
            .new_stream()
            .map_err(drv("cannot create the watch stream"))?;
        // SAFETY: written by the copies before it is read (page-locked,
        // so that a copy beside a hung kernel cannot block the host).
        let mut host = unsafe {
            self.ctx
                .alloc_pinned_with_flags::<u32>((nz * lay.status_stride as usize).max(1), 0)
        }
        .map_err(alloc("the watch buffer"))?;
        let ptr = host.as_mut_ptr().map_err(drv("the watch buffer"))?;
        Ok(Some(Watch {
            watcher: Watcher::new(stall),
            budget_s,
            side,
            _host: host,
            ptr,
        }))
    }
}

/// Per host kernel of the test: the function, its blocks per instance,
/// threads per block, and whether it is a PDL secondary.
type HostKernel = (CudaFunction, u32, u32, bool);

/// The test's host kernels, from its module.
fn host_kernels(
    module: &Arc<CudaModule>,
    cubin: &Path,
    test_name: &str,
    lay: &Layout,
) -> Result<Vec<HostKernel>, GpuError> {
    let mut host = Vec::new();
    for k in lay.host_kernels() {
        let sym = gridcheck_kernelgen::kernel_symbol(test_name, &k.name);
        let f = module.load_function(&sym).map_err(drv(&format!(
            "kernel `{sym}` is not in {}",
            cubin.display()
        )))?;
        let pdl = k.launch == (KernelLaunch::Host { pdl: true });
        host.push((f, k.blocks, k.block_dim, pdl));
    }
    Ok(host)
}

/// A watched run's state: the watcher, the time budget, the side stream
/// and the page-locked buffer its copies land in.
struct Watch {
    watcher: Watcher,
    budget_s: f64,
    side: Arc<CudaStream>,
    _host: cudarc::driver::PinnedHostSlice<u32>,
    ptr: *mut u32,
}

/// What every launch of a run shares.
struct Launches<'a> {
    stream: &'a Arc<CudaStream>,
    lay: &'a Layout,
    host: &'a [HostKernel],
    hist_fn: &'a CudaFunction,
    bufs: &'a RunBuffers,
    test_name: &'a str,
    budget: &'a Budget,
    inc: &'a Tuning,
    /// Each launch waited for (not with GRIDCHECK_QUEUE_LAUNCHES).
    sync_each: bool,
    /// The watchdog, and the layout it reads the status words with.
    dog: Option<(&'a Watchdog, &'a Arc<Layout>)>,
}

impl Launches<'_> {
    /// Launch `li`: fresh buffers, the test's host kernels, the histogram
    /// kernel; then the launch waited for, or watched, and its stale words
    /// counted.
    fn launch(
        &self,
        li: u32,
        launches_start: Instant,
        watch: Option<&mut Watch>,
        stale: &mut StaleTally,
    ) -> Result<(), GpuError> {
        let (stream, lay, bufs, inc) = (self.stream, self.lay, self.bufs, self.inc);
        let n = bufs.n;
        let nz = n as usize;
        let plain = |p: &CudaSlice<u32>| p.device_ptr(stream).0;
        let seed = launch_seed(self.budget.seed, li);
        let (perm_mul, perm_add) = permutation(seed, n, inc.permute);
        let mem = stream
            .clone_htod(&bufs.mem_init)
            .map_err(alloc("test memory"))?;
        let status = stream
            .clone_htod(&bufs.status_init)
            .map_err(alloc("status words"))?;
        let regs: CudaSlice<u32> = stream
            .alloc_zeros((nz * lay.reg_stride as usize).max(1))
            .map_err(alloc("registers"))?;
        let hp = bufs.hist_params(stream, lay, plain(&mem), plain(&regs), plain(&status));
        let params = Params {
            mem: hp.mem,
            regs: hp.regs,
            status: hp.status,
            stress: plain(&bufs.stress),
            seed,
            instances: n,
            perm_mul,
            perm_add,
            max_delay: inc.max_delay_cycles,
            stress_words: bufs.stress_words,
            stress_iters: inc.stress_iters,
            stress_lines: u32::from(inc.stress_lines),
            slot_stride: lay.slot_stride,
            // The word locations' lines (a tile's hold its words).
            lines: lay.word_lines(),
            line_burst: inc.line_burst,
        };
        // An instance of a kernel of several blocks is that many
        // consecutive blocks (see `gridcheck_kernelgen::KernelPlan`).
        for (f, blocks, block, pdl) in self.host {
            let grid = n.checked_mul(*blocks).ok_or_else(|| {
                GpuError::new(format!("{n} instances of {blocks} blocks overflow a grid"))
            })?;
            launch(stream, f, grid, *block, *pdl, params)?;
        }
        launch(stream, self.hist_fn, n.div_ceil(256), 256, false, hp)?;
        // Each launch is waited for before the next is queued: in an
        // earlier version with reused buffers, queuing the 32 launches of
        // c2-tail-sees-named-stream-child back to back hung the H100 in 8
        // of 45 runs, waiting after each launch in none of 32.
        // GRIDCHECK_QUEUE_LAUNCHES queues them.
        if let Some(w) = watch {
            let total = u64::from(n) * u64::from(self.budget.launches);
            let ctx = WatchCtx {
                stream,
                side: &w.side,
                lay,
                status: plain(&status),
                host: w.ptr,
                words: nz * lay.status_stride as usize,
                start: launches_start,
                budget_s: w.budget_s,
                total,
            };
            if let Err(e) = watch_launch(&ctx, &mut w.watcher, li) {
                // The launch may never end: its buffers stay (see run_litmus_core).
                std::mem::forget((mem, status, regs));
                return Err(GpuError::new(e));
            }
            w.watcher.launch_done(u64::from(n));
            let t = launches_start.elapsed().as_secs_f64();
            if t >= w.budget_s && li + 1 < self.budget.launches {
                return Err(GpuError::new(w.watcher.long_run(t, total)));
            }
        } else if self.sync_each {
            let words = nz * lay.status_stride as usize;
            let done = u64::from(li) * u64::from(n);
            // Noted in flight while waited for, cleared before its buffers go.
            let flight = self
                .dog
                .map(|(d, l)| d.launch(li, plain(&status), words, l, done));
            let waited = stream
                .synchronize()
                .map_err(drv(&format!("launch {li} of {} failed", self.test_name)));
            drop(flight);
            waited?;
        }
        stale.read(stream, lay, &regs, &status)
    }
}

/// A module loaded once ([`Gpu::load_module`]) and the file it came from.
pub struct LoadedModule {
    module: Arc<CudaModule>,
    file: PathBuf,
}

/// One host launch of `n` blocks through `cuLaunchKernelEx`, with the
/// programmatic stream serialization attribute for a PDL secondary.
/// Launches `f<<<n, block>>>(params)` (`P` is the kernel's one parameter
/// struct, `repr(C)` like its C mirror), as a PDL secondary when `pdl`.
fn launch<P: Copy>(
    stream: &CudaStream,
    f: &CudaFunction,
    n: u32,
    block: u32,
    pdl: bool,
    params: P,
) -> Result<(), GpuError> {
    // SAFETY: an all-zero attribute is valid (the union is plain data).
    let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    let cfg = sys::CUlaunchConfig {
        gridDimX: n,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: block,
        blockDimY: 1,
        blockDimZ: 1,
        sharedMemBytes: 0,
        hStream: stream.cu_stream(),
        attrs: if pdl { &mut attr } else { std::ptr::null_mut() },
        numAttrs: u32::from(pdl),
    };
    let mut p = params;
    let mut args = [&mut p as *mut P as *mut c_void];
    // SAFETY: the kernel takes exactly one parameter struct with the same
    // layout as `P` (`gc_params` / `Params`, `gc_hist_params` /
    // `HistParams`, sizes checked at compile time on both sides); the config
    // and arguments outlive the call, which copies them.
    unsafe {
        sys::cuLaunchKernelEx(
            &cfg,
            f.cu_function(),
            args.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    }
    .result()
    .map_err(drv("cuLaunchKernelEx failed"))
}
