//! Litmus runs ([`Gpu::run_litmus`]): many instances a launch, each launch
//! with fresh memory, status words and registers and its own seed; the
//! outcome histogram gathered on the GPU (`histogram.rs`), the instances it
//! could not bin decoded here.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::{
    CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DriverError, sys,
};
use gridcheck_kernelgen::{Layout, STATUS_NOT_REACHED};
use gridcheck_spec::{KernelLaunch, Limit, Litmus, State};

use crate::environment::{Budget, Incantations, Params, launch_seed, permutation};
use crate::watch::{self, WatchCtx, Watcher, watch_launch};
use crate::{Gpu, GpuError, cuda_error_name, driver_error, drv, histogram};

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
    /// The whole run: loading the module, allocating, launching, reading back.
    pub elapsed: Duration,
    /// From the first launch to the end of the last: the steady-state cost
    /// of the instances, without the module load and allocations.
    pub launch_elapsed: Duration,
    pub seed: u64,
}

/// Why an instance's outcome cannot be recorded, if it cannot: a device
/// runtime call (a launch, creating a stream or event, `record`,
/// `waitevent`) was not reached or failed, or a kernel did not run.
fn instance_failure(lay: &Layout, status: &[u32]) -> Option<String> {
    for e in lay.error_words() {
        let code = status[e.word as usize];
        if code == STATUS_NOT_REACHED {
            return Some(format!("{} was not reached", e.what));
        }
        if code != 0 {
            return Some(format!(
                "{} failed: {} ({code})",
                e.what,
                cuda_error_name(code)
            ));
        }
    }
    lay.kernels
        .iter()
        .filter(|k| k.must_run)
        .find(|k| status[k.status_word as usize] != k.ran_value())
        .map(|k| match k.blocks {
            1 => format!("kernel `{}` did not run", k.name),
            n => format!(
                "kernel `{}` did not run: {} of its {n} blocks ran",
                k.name, status[k.status_word as usize]
            ),
        })
}

/// The final state of one instance: its registers and memory slot.
fn instance_state(lay: &Layout, regs: &[u32], mem: &[u32]) -> State {
    let mut s = State::new();
    for (i, r) in lay.registers.iter().enumerate() {
        s.insert(r.name.clone(), regs[i]);
    }
    for l in &lay.locations {
        s.insert(l.name.clone(), mem[l.offset as usize]);
    }
    s
}

impl Gpu {
    /// Runs a litmus test with the default [`Incantations`].
    pub fn run_litmus(
        &self,
        cubin: &Path,
        test_name: &str,
        litmus: &Litmus,
        budget: &Budget,
    ) -> Result<LitmusRun, GpuError> {
        self.run_litmus_with(cubin, test_name, litmus, budget, &Incantations::default())
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
        inc: &Incantations,
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
        inc: &Incantations,
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
        inc: &Incantations,
    ) -> Result<LitmusRun, GpuError> {
        let start = Instant::now();
        let module = self.load_module(cubin)?;
        let mut run = self.run_loaded(&module, test_name, litmus, budget, inc)?;
        run.elapsed = start.elapsed();
        Ok(run)
    }

    fn run_loaded(
        &self,
        loaded: &LoadedModule,
        test_name: &str,
        litmus: &Litmus,
        budget: &Budget,
        inc: &Incantations,
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
        // Per host kernel: the function, its blocks per instance, threads
        // per block, and whether it is a PDL secondary.
        let mut host: Vec<(CudaFunction, u32, u32, bool)> = Vec::new();
        for k in lay.host_kernels() {
            let sym = gridcheck_kernelgen::kernel_symbol(test_name, &k.name);
            let f = module.load_function(&sym).map_err(drv(&format!(
                "kernel `{sym}` is not in {}",
                cubin.display()
            )))?;
            let pdl = k.launch == (KernelLaunch::Host { pdl: true });
            host.push((f, k.blocks, k.block_dim, pdl));
        }
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
        let nz = n as usize;
        let mut run = LitmusRun {
            histogram: BTreeMap::new(),
            instances: 0,
            launch_failures: 0,
            first_launch_error: None,
            elapsed: Duration::ZERO,
            launch_elapsed: Duration::ZERO,
            seed: budget.seed,
        };
        let stress_words = if inc.stress_words == 0 {
            0
        } else {
            inc.stress_words.next_power_of_two()
        };
        let stream = &self.stream;
        let alloc = |what: &'static str| {
            move |e: DriverError| {
                GpuError::new(format!("cannot allocate {what}: {}", driver_error(e)))
            }
        };
        // Each launch gets fresh memory, status words and registers. Reusing
        // one set, reset on the device between launches, went with hangs on
        // the H100: pmpp-kernel-b-more-stuff-in-tail-launch timed out in 4
        // of 34 runs that way, in none of 30 with fresh buffers (cause not
        // determined; see ARCHITECTURE.md).
        let mem_init: Vec<u32> = lay.initial_slot().repeat(nz);
        let status_init: Vec<u32> = lay.initial_status().repeat(nz);
        let stress: CudaSlice<u32> = stream
            .alloc_zeros(stress_words.max(1) as usize)
            .map_err(alloc("the stress buffer"))?;
        let plan = histogram::Plan::new(litmus, &lay);
        let plan_d = stream
            .clone_htod(&plan.words())
            .map_err(alloc("the histogram plan"))?;
        let hist: CudaSlice<u64> = stream
            .alloc_zeros(plan.hist_len())
            .map_err(alloc("the histogram"))?;
        // Room for every instance of the run: nothing is ever dropped.
        let capacity = u64::from(n) * u64::from(budget.launches);
        let rec_words = histogram::record_words(&lay);
        let records: CudaSlice<u32> = stream
            .alloc_zeros(1 + capacity as usize * rec_words)
            .map_err(alloc("the record buffer"))?;
        let hist_fn = module
            .load_function("gridcheck_histogram")
            .map_err(drv(&format!(
                "kernel `gridcheck_histogram` is not in {} (rebuild it: `cargo xtask build`)",
                cubin.display()
            )))?;
        let plain = |p: &CudaSlice<u32>| p.device_ptr(stream).0;
        // The histogram's parameters; each launch fills in its buffers.
        let hp_for = |mem: u64, regs: u64, status: u64| histogram::HistParams {
            mem,
            regs,
            status,
            plan: plain(&plan_d),
            hist: hist.device_ptr(stream).0,
            records: plain(&records),
            instances: n,
            nobs: plan.offsets.len() as u32,
            ndom: plan.domain.len() as u32,
            status_stride: lay.status_stride,
            reg_stride: lay.reg_stride,
            slot_stride: lay.slot_stride,
            record_capacity: u32::try_from(capacity).unwrap_or(u32::MAX),
            bins: plan.bins as u32,
        };
        stream
            .synchronize()
            .map_err(drv("cannot prepare the run"))?;
        let sync_each = std::env::var_os("GRIDCHECK_QUEUE_LAUNCHES").is_none();
        // GRIDCHECK_WATCH: each launch watched instead of waited for
        // (`watch.rs`); a stall or a run out of time ends the run with its
        // classification as the error.
        let mut watch = match std::env::var("GRIDCHECK_WATCH") {
            Ok(v) => {
                let (stall, budget_s) = watch::parse_watch(&v).map_err(GpuError::new)?;
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
                Some((Watcher::new(stall), budget_s, side, host, ptr))
            }
            Err(_) => None,
        };
        let launches_start = Instant::now();
        for li in 0..budget.launches {
            let seed = launch_seed(budget.seed, li);
            let (perm_mul, perm_add) = permutation(seed, n, inc.permute);
            let mem = stream.clone_htod(&mem_init).map_err(alloc("test memory"))?;
            let status = stream
                .clone_htod(&status_init)
                .map_err(alloc("status words"))?;
            let regs: CudaSlice<u32> = stream
                .alloc_zeros((nz * lay.reg_stride as usize).max(1))
                .map_err(alloc("registers"))?;
            let hp = hp_for(plain(&mem), plain(&regs), plain(&status));
            let params = Params {
                mem: hp.mem,
                regs: hp.regs,
                status: hp.status,
                stress: plain(&stress),
                seed,
                instances: n,
                perm_mul,
                perm_add,
                max_delay: inc.max_delay_cycles,
                stress_words,
                stress_iters: inc.stress_iters,
                stress_lines: u32::from(inc.stress_lines),
                slot_stride: lay.slot_stride,
                lines: lay.locations.len() as u32,
                line_burst: inc.line_burst,
            };
            // An instance of a kernel of several blocks is that many
            // consecutive blocks (see `gridcheck_kernelgen::KernelPlan`).
            for (f, blocks, block, pdl) in &host {
                let grid = n.checked_mul(*blocks).ok_or_else(|| {
                    GpuError::new(format!("{n} instances of {blocks} blocks overflow a grid"))
                })?;
                launch(stream, f, grid, *block, *pdl, params)?;
            }
            launch(stream, &hist_fn, n.div_ceil(256), 256, false, hp)?;
            // Each launch is waited for before the next is queued: in an
            // earlier version with reused buffers, queuing the 32 launches of
            // c2-tail-sees-named-stream-child back to back hung the H100 in 8
            // of 45 runs, waiting after each launch in none of 32.
            // GRIDCHECK_QUEUE_LAUNCHES queues them.
            if let Some((w, budget_s, side, _, host)) = watch.as_mut() {
                let total = u64::from(n) * u64::from(budget.launches);
                let ctx = WatchCtx {
                    stream,
                    side,
                    lay: &lay,
                    status: plain(&status),
                    host: *host,
                    words: nz * lay.status_stride as usize,
                    start: launches_start,
                    budget_s: *budget_s,
                    total,
                };
                watch_launch(&ctx, w, li).map_err(GpuError::new)?;
                w.launch_done(u64::from(n));
                let t = launches_start.elapsed().as_secs_f64();
                if t >= *budget_s && li + 1 < budget.launches {
                    return Err(GpuError::new(w.long_run(t, total)));
                }
            } else if sync_each {
                stream
                    .synchronize()
                    .map_err(drv(&format!("launch {li} of {test_name} failed")))?;
            }
        }
        stream
            .synchronize()
            .map_err(drv(&format!("a launch of {test_name} failed")))?;
        run.launch_elapsed = launches_start.elapsed();
        let hist_h = stream
            .clone_dtoh(&hist)
            .map_err(drv("cannot copy the histogram back"))?;
        run.histogram = plan.decode(&hist_h);
        let bins = plan.bins as usize;
        let (failed, odd) = (hist_h[bins], hist_h[bins + 1]);
        run.launch_failures = failed;
        run.instances = hist_h[..bins].iter().sum::<u64>() + odd;
        if failed + odd > 0 {
            let count = stream
                .clone_dtoh(&records.slice(0..1))
                .map_err(drv("cannot copy the record count back"))?[0]
                as usize;
            let stored = count.min(capacity as usize);
            let recs = stream
                .clone_dtoh(&records.slice(1..1 + stored * rec_words))
                .map_err(drv("cannot copy the records back"))?;
            let (mut seen_failed, mut seen_odd) = (0, 0);
            for r in recs.chunks_exact(rec_words) {
                let (rg, rest) = r.split_at(lay.reg_stride as usize);
                let (mm, st) = rest.split_at(lay.slot_stride as usize);
                match instance_failure(&lay, st) {
                    Some(why) => {
                        seen_failed += 1;
                        run.first_launch_error.get_or_insert(why);
                    }
                    None => {
                        seen_odd += 1;
                        *run.histogram
                            .entry(instance_state(&lay, rg, mm))
                            .or_default() += 1;
                    }
                }
            }
            if (seen_failed, seen_odd) != (failed, odd) {
                return Err(GpuError::new(format!(
                    "the GPU histogram counted {failed} failed and {odd} out-of-domain instances \
                     but recorded {seen_failed} and {seen_odd}"
                )));
            }
        }
        Ok(run)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_decoding() {
        let yaml = "rules:\n  - id: cdp2.t.r\n    source: { seed: s.txt, section: \"1\" }\n    quote: q\n    profile: cdp2\n    tests: [t]\ntests:\n  - name: t\n    kind: litmus\n    memory: { x: 0 }\n    kernels:\n      - kernel: parent\n        launch: host\n        threads:\n          t0: [store x 1, launch child tail]\n      - kernel: child\n        launch: device\n        threads:\n          t0: [load r0 x]\n    condition: exists child.t0.r0 == 0\n    expect: forbidden\n";
        let spec = gridcheck_spec::load_sources(
            &[(std::path::PathBuf::from("spec/x.yaml"), yaml.to_string())],
            None,
        );
        let spec = spec.unwrap_or_else(|e| panic!("{e}"));
        let gridcheck_spec::TestBody::Litmus(l) = &spec.tests[0].body else {
            panic!()
        };
        let lay = gridcheck_kernelgen::layout(l);
        assert!(
            instance_failure(&lay, &lay.initial_status())
                .unwrap()
                .contains("not reached")
        );
        assert!(
            instance_failure(&lay, &[1, 1, 69])
                .unwrap()
                .contains("cudaErrorLaunchPendingCountExceeded")
        );
        assert!(
            instance_failure(&lay, &[1, 0, 0])
                .unwrap()
                .contains("child")
        );
        assert_eq!(instance_failure(&lay, &[1, 1, 0]), None);
        let mut mem = lay.initial_slot();
        mem[0] = 1;
        let s = instance_state(&lay, &[0], &mem);
        let keys: Vec<String> = s.keys().cloned().collect();
        let mut obs = l.observables();
        obs.sort();
        assert_eq!(keys, obs);
        assert_eq!((s["child.t0.r0"], s["x"]), (0, 1));
    }

    #[test]
    fn every_block_of_an_instance_must_run() {
        let yaml = "rules:\n  - id: cdp2.t.r\n    source: { seed: s.txt, section: \"1\" }\n    quote: q\n    profile: cdp2\n    tests: [t]\ntests:\n  - name: t\n    kind: litmus\n    memory: { x: 0 }\n    kernels:\n      - kernel: parent\n        launch: host\n        threads:\n          b0.t0: [store x 1]\n          b1.t0: [load r0 x]\n    condition: exists parent.b1.t0.r0 == 0\n    expect: allowed\n";
        let spec = gridcheck_spec::load_sources(
            &[(std::path::PathBuf::from("spec/x.yaml"), yaml.to_string())],
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let gridcheck_spec::TestBody::Litmus(l) = &spec.tests[0].body else {
            panic!()
        };
        let lay = gridcheck_kernelgen::layout(l);
        assert_eq!((lay.kernels[0].blocks, lay.kernels[0].ran_value()), (2, 2));
        assert_eq!(instance_failure(&lay, &[2]), None);
        assert_eq!(
            instance_failure(&lay, &[1]).unwrap(),
            "kernel `parent` did not run: 1 of its 2 blocks ran"
        );
        let plan = histogram::Plan::new(l, &lay);
        assert_eq!(plan.status_expect, [2]);
    }

    #[test]
    fn stream_and_event_failures_discard_the_instance() {
        let yaml = "rules:\n  - id: cdp2.t.r\n    source: { seed: s.txt, section: \"1\" }\n    quote: q\n    profile: cdp2\n    tests: [t]\ntests:\n  - name: t\n    kind: litmus\n    memory: { x: 0 }\n    kernels:\n      - kernel: parent\n        launch: host\n        threads:\n          t0: [launch child s1, record e1 s1]\n      - kernel: child\n        launch: device\n        threads:\n          t0: [load r0 x]\n    condition: exists child.t0.r0 == 0\n    expect: allowed\n";
        let spec = gridcheck_spec::load_sources(
            &[(std::path::PathBuf::from("spec/x.yaml"), yaml.to_string())],
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let gridcheck_spec::TestBody::Litmus(l) = &spec.tests[0].body else {
            panic!()
        };
        let lay = gridcheck_kernelgen::layout(l);
        // ran: parent, child; launch; create s1, e1; record.
        assert_eq!(lay.status_stride, 6);
        assert_eq!(instance_failure(&lay, &[1, 1, 0, 0, 0, 0]), None);
        let why = instance_failure(&lay, &[1, 1, 0, 2, 0, 0]).unwrap();
        assert_eq!(
            why,
            "parent creating stream s1 failed: cudaErrorMemoryAllocation (2)"
        );
        let why = instance_failure(&lay, &[1, 1, 0, 0, 0, STATUS_NOT_REACHED]).unwrap();
        assert_eq!(why, "parent.t0 `record e1 s1` was not reached");
    }
}
