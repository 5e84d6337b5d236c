//! Watching a litmus run that may not end: the status words of the launch
//! in flight (copied back beside the kernel, `litmus.rs`) summarized word by
//! word ([`Progress`]), and a run that outlives its time classified
//! ([`Watcher`]): a *stall* (no status word moved for a while: where the
//! instances stopped, which call or kernel) or a *long run* (instances still
//! finishing: at what rate, and how long the whole budget would take).
//!
//! The harness reruns a GPU trial that timed out alone under watch
//! (`Gpu::watch_each_launch`, set from the job: `conformance/src/timeouts.rs`;
//! the campaign's workers likewise); a classification ends
//! the run as an error whose message starts with [`STALL`] or [`LONG_RUN`].

use std::time::{Duration, Instant};

use cudarc::driver::{CudaStream, sys};
use gridcheck_kernelgen::{Layout, STATUS_NOT_REACHED};

/// The first word of a stall's message.
pub const STALL: &str = "stall:";
/// The first words of a long run's message.
pub const LONG_RUN: &str = "long run:";

/// How far the instances of one launch got, status word by status word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// Per status word, the instances that reached it: a kernel's word
    /// holds its ran value (every block ran), an error word was written.
    pub reached: Vec<u64>,
    /// Per status word, the instances where a call returned an error.
    pub failed: Vec<u64>,
    /// Instances whose every status word is reached.
    pub finished: u64,
    pub instances: u64,
}

impl Progress {
    /// Summarizes `status` (`status_stride` words an instance) under `lay`.
    pub fn of(lay: &Layout, status: &[u32]) -> Progress {
        let stride = lay.status_stride as usize;
        let words = stride.max(1);
        let mut p = Progress {
            reached: vec![0; stride],
            failed: vec![0; stride],
            finished: 0,
            instances: 0,
        };
        let errors: Vec<u32> = lay.error_words().iter().map(|e| e.word).collect();
        for inst in status.chunks_exact(words) {
            p.instances += 1;
            let mut all = true;
            for (k, &v) in inst.iter().enumerate().take(stride) {
                let reached = match lay.kernels.iter().find(|kp| kp.status_word as usize == k) {
                    Some(kp) => v == kp.ran_value() || !kp.must_run,
                    None if errors.contains(&(k as u32)) => v != STATUS_NOT_REACHED,
                    None => true,
                };
                if reached {
                    p.reached[k] += 1;
                } else {
                    all = false;
                }
                if errors.contains(&(k as u32)) && v != STATUS_NOT_REACHED && v != 0 {
                    p.failed[k] += 1;
                }
            }
            if all {
                p.finished += 1;
            }
        }
        p
    }

    /// The words some instances have not reached, in layout order, each
    /// with how many did: where a stalled launch's instances stopped.
    pub fn where_stopped(&self, lay: &Layout) -> String {
        let mut parts = Vec::new();
        for (k, &r) in self.reached.iter().enumerate() {
            if r == self.instances {
                continue;
            }
            let what = lay
                .kernels
                .iter()
                .find(|kp| kp.status_word as usize == k)
                .map(|kp| format!("kernel `{}` ran", kp.name))
                .or_else(|| {
                    lay.error_words()
                        .into_iter()
                        .find(|e| e.word as usize == k)
                        .map(|e| format!("{} returned", e.what))
                })
                .unwrap_or_else(|| format!("status word {k}"));
            parts.push(format!("{what} in {r} of {}", self.instances));
        }
        if parts.is_empty() {
            format!(
                "every status word of all {} instances is reached: the launch (or the kernel after it) does not complete",
                self.instances
            )
        } else {
            parts.join("; ")
        }
    }
}

/// Follows a run launch by launch and classifies it once it has no time
/// left or stops moving.
#[derive(Debug, Clone)]
pub struct Watcher {
    stall_after_s: f64,
    last: Option<Progress>,
    last_change_s: f64,
    instances_done: u64,
}

impl Watcher {
    /// A launch whose status words do not change for `stall_after_s`
    /// seconds is a stall.
    pub fn new(stall_after_s: f64) -> Watcher {
        Watcher {
            stall_after_s,
            last: None,
            last_change_s: 0.0,
            instances_done: 0,
        }
    }

    /// A launch started at `t_s` (seconds since the run began).
    pub fn launch_started(&mut self, t_s: f64) {
        self.last = None;
        self.last_change_s = t_s;
    }

    /// A launch of `instances` completed.
    pub fn launch_done(&mut self, instances: u64) {
        self.instances_done += instances;
    }

    /// The status words of launch `launch` at `t_s`: the stall's message
    /// when nothing moved for the stall time.
    pub fn observe(&mut self, t_s: f64, launch: u32, p: Progress, lay: &Layout) -> Option<String> {
        if self.last.as_ref() != Some(&p) {
            self.last = Some(p);
            self.last_change_s = t_s;
            return None;
        }
        let quiet = t_s - self.last_change_s;
        (quiet >= self.stall_after_s).then(|| {
            format!(
                "{STALL} launch {launch} (after {} instances completed in earlier launches): no status word \
                 changed for {quiet:.1} s; {}",
                self.instances_done,
                p.where_stopped(lay)
            )
        })
    }

    /// Out of time at `t_s` while the run still moves: a long run, with
    /// the rate of the instances completed and the time the whole budget
    /// (`total` instances) would take at that rate.
    pub fn long_run(&self, t_s: f64, total: u64) -> String {
        let in_flight = self.last.as_ref().map_or(0, |p| p.finished);
        let done = self.instances_done + in_flight;
        let rate = if t_s > 0.0 { done as f64 / t_s } else { 0.0 };
        let eta = if rate > 0.0 {
            format!("about {:.0} s", total as f64 / rate)
        } else {
            "unknown".to_string()
        };
        format!(
            "{LONG_RUN} {done} of {total} instances completed in {t_s:.1} s ({rate:.1} instances/s; \
             the whole budget would take {eta}), the status words still moving"
        )
    }
}

/// `<stall seconds>,<budget seconds>`, as a campaign worker's `--watch`
/// gives it: watch the run (see the module docs).
pub fn parse_watch(v: &str) -> Result<(f64, f64), String> {
    let bad = || format!("--watch {v}: expected <stall seconds>,<budget seconds>, both > 0");
    let (a, b) = v.split_once(',').ok_or_else(bad)?;
    let stall: f64 = a.trim().parse().map_err(|_| bad())?;
    let budget: f64 = b.trim().parse().map_err(|_| bad())?;
    check_watch(stall, budget).map_err(|_| bad())?;
    Ok((stall, budget))
}

/// Whether a watch's stall and budget seconds are both positive and finite.
pub fn check_watch(stall: f64, budget: f64) -> Result<(), String> {
    if stall > 0.0 && budget > 0.0 && stall.is_finite() && budget.is_finite() {
        Ok(())
    } else {
        Err(format!(
            "a watch of {stall} s stall and {budget} s budget: both must be positive seconds"
        ))
    }
}

/// What watching one launch needs (`Gpu::watch_each_launch`).
pub(crate) struct WatchCtx<'a> {
    pub(crate) stream: &'a CudaStream,
    /// A second stream: copies on it run beside a kernel that does not end.
    pub(crate) side: &'a CudaStream,
    pub(crate) lay: &'a Layout,
    /// The launch's status words (device address) and their count.
    pub(crate) status: sys::CUdeviceptr,
    /// Page-locked host memory for `words` u32s.
    pub(crate) host: *mut u32,
    pub(crate) words: usize,
    pub(crate) start: Instant,
    pub(crate) budget_s: f64,
    pub(crate) total: u64,
}

/// Waits for launch `li` while copying its status words back every second:
/// `Err` with the classification when they stop moving for the watcher's
/// stall time, or when the budget's time is spent while they still move.
pub(crate) fn watch_launch(c: &WatchCtx, w: &mut Watcher, li: u32) -> Result<(), String> {
    let t = || c.start.elapsed().as_secs_f64();
    w.launch_started(t());
    let mut last_look = t();
    loop {
        // SAFETY: the stream is live; a query only reads its state.
        match unsafe { sys::cuStreamQuery(c.stream.cu_stream()) } {
            sys::CUresult::CUDA_SUCCESS => return Ok(()),
            sys::CUresult::CUDA_ERROR_NOT_READY => {}
            e => return Err(format!("launch {li} failed: {e:?}")),
        }
        // A campaign's launches take a millisecond or two: a coarser poll
        // would be most of their time.
        std::thread::sleep(Duration::from_micros(200));
        if t() - last_look < 1.0 {
            continue;
        }
        last_look = t();
        copy_status(c.side, c.host, c.status, c.words, li)?;
        // SAFETY: the copy into `host` (`words` u32s) has completed.
        let host = unsafe { std::slice::from_raw_parts(c.host, c.words) };
        if let Some(stall) = w.observe(t(), li, Progress::of(c.lay, host), c.lay) {
            return Err(stall);
        }
        if t() >= c.budget_s {
            return Err(w.long_run(t(), c.total));
        }
    }
}

/// Copies a launch's status words (`words` u32s at `status`) into the
/// page-locked `host` on the `side` stream, beside a kernel that may not
/// end, and waits for the copy: `Err` with a stall's message when it does
/// not complete in 5 s (a kernel the copy cannot run beside), or with the
/// driver's error.
pub(crate) fn copy_status(
    side: &CudaStream,
    host: *mut u32,
    status: sys::CUdeviceptr,
    words: usize,
    li: u32,
) -> Result<(), String> {
    // SAFETY: `host` holds `words` u32s and the status buffer at least as
    // many; the copy is waited for below before `host` is read.
    let r = unsafe { sys::cuMemcpyDtoHAsync_v2(host.cast(), status, words * 4, side.cu_stream()) };
    if r != sys::CUresult::CUDA_SUCCESS {
        return Err(format!("cannot copy the status words back: {r:?}"));
    }
    let copy_start = Instant::now();
    loop {
        // SAFETY: the stream is live; a query only reads its state.
        match unsafe { sys::cuStreamQuery(side.cu_stream()) } {
            sys::CUresult::CUDA_SUCCESS => return Ok(()),
            sys::CUresult::CUDA_ERROR_NOT_READY if copy_start.elapsed() < COPY_LIMIT => {
                std::thread::sleep(Duration::from_millis(5))
            }
            sys::CUresult::CUDA_ERROR_NOT_READY => {
                return Err(format!(
                    "{STALL} launch {li}: the copy of the status words beside the kernel did not \
                     complete in {} s",
                    COPY_LIMIT.as_secs()
                ));
            }
            e => return Err(format!("cannot copy the status words back: {e:?}")),
        }
    }
}

/// How long a copy of the status words beside a kernel may take.
const COPY_LIMIT: Duration = Duration::from_secs(5);

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(yaml_threads: &str, extra_kernels: &str) -> Layout {
        let yaml = gridcheck_fixture::OneRule::new().id("cdp2.t.r").tests(&format!(
            "  - name: t\n    kind: litmus\n    memory: {{ x: 0 }}\n    kernels:\n      - kernel: parent\n        launch: host\n        threads:\n          t0: [{yaml_threads}]\n{extra_kernels}    condition: exists x == 0\n    expect: allowed\n"
        )).yaml();
        let spec =
            gridcheck_spec::load_sources(&[(std::path::PathBuf::from("spec/x.yaml"), yaml)], None)
                .unwrap_or_else(|e| panic!("{e}"));
        let gridcheck_spec::TestBody::Litmus(l) = &spec.tests[0].body else {
            panic!()
        };
        gridcheck_kernelgen::layout(l)
    }

    const TAIL: &str =
        "      - kernel: tl\n        launch: device\n        threads:\n          t0: [load r0 x]\n";

    #[test]
    fn progress_counts_each_word_and_says_where_instances_stopped() {
        let lay = layout("trigger, launch tl tail, store x 1", TAIL);
        // Words: parent ran, tl ran, the launch's error.
        assert_eq!(lay.status_stride, 3);
        let n = STATUS_NOT_REACHED;
        // Instance 0 finished; 1: the tail never ran; 2: still inside the launch.
        let p = Progress::of(&lay, &[1, 1, 0, 1, 0, 0, 0, 0, n]);
        assert_eq!(p.instances, 3);
        assert_eq!(p.reached, [2, 1, 2]);
        assert_eq!(p.finished, 1);
        let w = p.where_stopped(&lay);
        assert!(w.contains("kernel `parent` ran in 2 of 3"), "{w}");
        assert!(w.contains("kernel `tl` ran in 1 of 3"), "{w}");
        assert!(w.contains("`launch tl tail` returned in 2 of 3"), "{w}");
        let failed = Progress::of(&lay, &[1, 0, 69]);
        assert_eq!(failed.failed, [0, 0, 1]);
        let done = Progress::of(&lay, &[1, 1, 0]);
        assert!(done.where_stopped(&lay).starts_with("every status word"));
    }

    #[test]
    fn a_quiet_launch_is_a_stall_a_moving_one_is_not() {
        let lay = layout("record e1, record e2, store x 1", "");
        let n = STATUS_NOT_REACHED;
        // Words: parent ran, create e1, create e2, record e1, record e2.
        assert_eq!(lay.status_stride, 5);
        let mut w = Watcher::new(5.0);
        w.launch_done(64);
        w.launch_started(10.0);
        let stuck = || Progress::of(&lay, &[0, 0, 0, 0, n]);
        assert_eq!(w.observe(11.0, 1, stuck(), &lay), None);
        assert_eq!(w.observe(15.0, 1, stuck(), &lay), None, "4 s quiet");
        let s = w.observe(16.5, 1, stuck(), &lay).expect("a stall");
        assert!(s.starts_with(STALL), "{s}");
        assert!(s.contains("launch 1 (after 64 instances"), "{s}");
        assert!(s.contains("for 5.5 s"), "{s}");
        assert!(s.contains("`record e2` returned in 0 of 1"), "{s}");
        // Moving words restart the clock.
        let mut w = Watcher::new(5.0);
        w.launch_started(0.0);
        assert_eq!(w.observe(4.0, 0, stuck(), &lay), None);
        let moved = Progress::of(&lay, &[1, 0, 0, 0, 0]);
        assert_eq!(w.observe(8.0, 0, moved.clone(), &lay), None);
        assert_eq!(w.observe(12.0, 0, moved, &lay), None);
    }

    #[test]
    fn a_long_run_gives_its_rate() {
        let lay = layout("store x 1", "");
        let mut w = Watcher::new(5.0);
        w.launch_done(1000);
        w.launch_started(9.0);
        assert_eq!(
            w.observe(10.0, 1, Progress::of(&lay, &[1, 1, 0]), &lay),
            None
        );
        let s = w.long_run(10.0, 10_000);
        assert_eq!(
            s,
            "long run: 1002 of 10000 instances completed in 10.0 s (100.2 instances/s; the whole budget \
             would take about 100 s), the status words still moving"
        );
        assert!(
            Watcher::new(1.0)
                .long_run(0.0, 5)
                .contains("would take unknown")
        );
    }

    #[test]
    fn the_watch_setting() {
        assert_eq!(parse_watch("5,50"), Ok((5.0, 50.0)));
        assert_eq!(parse_watch(" 2.5 , 10"), Ok((2.5, 10.0)));
        for bad in ["5", "0,10", "5,-1", "a,b", "5,inf"] {
            let e = parse_watch(bad).unwrap_err();
            assert!(e.contains("--watch"), "{e}");
        }
        assert!(check_watch(1.0, f64::NAN).is_err());
    }
}
