//! The stall watch of every litmus launch ([`Gpu::watch_stalls`]): a thread
//! of its own beside the one that waits for each launch, so that a launch
//! that never ends is noticed within seconds instead of at the harness's
//! timeout, and said where it stopped.
//!
//! The thread that runs a litmus test waits for each launch as it always
//! has (`cuStreamSynchronize`); before it waits it notes the launch in
//! flight (its number, start, status words and layout) and clears the note
//! when the wait returns, two uncontended lock operations a launch. The
//! watchdog wakes every [`POLL`] and looks only at a launch that has been in
//! flight for [`FIRST_LOOK_S`] (a launch of the suite takes milliseconds,
//! so for those it does nothing): it copies the launch's status words back
//! on a stream of its own, beside the kernel, into page-locked memory
//! allocated before the launches, and gives them to a
//! [`Watcher`](crate::watch::Watcher). Once no status word moved for the
//! stall time it calls the callback with the watcher's words ([`STALL`]:
//! which launch, after how many instances, which kernel did not run or
//! which call did not return, in how many instances) and stops watching;
//! the launch is left running, and the waiting thread with it: the process
//! is expected to report the stall and be ended by its parent.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use cudarc::driver::{CudaContext, CudaStream, PinnedHostSlice, sys};
use gridcheck_kernelgen::Layout;

use crate::error::{GpuError, drv};
use crate::run_buffers::alloc;
use crate::watch::{Progress, STALL, Watcher, copy_status};

/// How often the watchdog looks at the launch in flight.
pub const POLL: Duration = Duration::from_millis(100);

/// How long a launch is in flight before the watchdog copies its status
/// words back at all.
pub const FIRST_LOOK_S: f64 = 0.25;

/// What the waiting thread and the watchdog share.
#[derive(Default)]
struct Flight {
    /// The stall time of the launches to come, in seconds.
    stall_after_s: f64,
    launch: Option<InFlight>,
    /// Page-locked memory the status words are copied into.
    host: Option<PinnedHostSlice<u32>>,
    /// Counts launches, so that the watchdog tells one from the next.
    serial: u64,
    /// The watchdog has reported a stall, or its device was closed.
    stopped: bool,
}

/// A launch being waited for.
struct InFlight {
    serial: u64,
    li: u32,
    started: Instant,
    status: sys::CUdeviceptr,
    words: usize,
    lay: Arc<Layout>,
    instances_done: u64,
    stall_after_s: f64,
}

/// The watch of one device's launches (see the module docs).
pub(crate) struct Watchdog {
    flight: Arc<Mutex<Flight>>,
}

fn lock(m: &Mutex<Flight>) -> MutexGuard<'_, Flight> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Watchdog {
    /// Starts the watchdog thread of the context; `on_stall` is called at
    /// most once, from that thread.
    pub(crate) fn start(
        ctx: &Arc<CudaContext>,
        on_stall: Box<dyn Fn(String) + Send>,
    ) -> Result<Watchdog, GpuError> {
        let side = ctx
            .new_stream()
            .map_err(drv("cannot create the watch stream"))?;
        let flight = Arc::new(Mutex::new(Flight {
            stall_after_s: 2.0,
            ..Flight::default()
        }));
        let shared = Arc::clone(&flight);
        let ctx = Arc::clone(ctx);
        std::thread::Builder::new()
            .name("gridcheck-watchdog".into())
            .spawn(move || watch(&shared, &ctx, &side, on_stall))
            .map_err(|e| GpuError::new(format!("cannot start the watchdog thread: {e}")))?;
        Ok(Watchdog { flight })
    }

    /// The stall time of the launches to come.
    pub(crate) fn set_stall_after(&self, seconds: f64) {
        lock(&self.flight).stall_after_s = seconds;
    }

    /// Makes room for `words` status words in the page-locked buffer (the
    /// context must be current): before the launches, never beside one.
    pub(crate) fn reserve(&self, ctx: &Arc<CudaContext>, words: usize) -> Result<(), GpuError> {
        let mut f = lock(&self.flight);
        if f.host.as_ref().is_some_and(|h| h.len() >= words) {
            return Ok(());
        }
        // SAFETY: written by the copies before it is read.
        let host = unsafe { ctx.alloc_pinned_with_flags::<u32>(words.max(1), 0) }
            .map_err(alloc("the watch buffer"))?;
        f.host = Some(host);
        Ok(())
    }

    /// Notes launch `li` in flight until the guard is dropped.
    pub(crate) fn launch(
        &self,
        li: u32,
        status: sys::CUdeviceptr,
        words: usize,
        lay: &Arc<Layout>,
        instances_done: u64,
    ) -> InFlightGuard<'_> {
        let mut f = lock(&self.flight);
        f.serial += 1;
        f.launch = Some(InFlight {
            serial: f.serial,
            li,
            started: Instant::now(),
            status,
            words,
            lay: Arc::clone(lay),
            instances_done,
            stall_after_s: f.stall_after_s,
        });
        InFlightGuard { dog: self }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        lock(&self.flight).stopped = true;
    }
}

/// A launch noted in flight; dropping it (after the wait returned, before
/// the launch's buffers are freed) clears the note.
pub(crate) struct InFlightGuard<'a> {
    dog: &'a Watchdog,
}

impl Drop for InFlightGuard<'_> {
    fn drop(&mut self) {
        lock(&self.dog.flight).launch = None;
    }
}

/// The watchdog thread: looks at the launch in flight every [`POLL`] and
/// reports the first stall.
fn watch(
    flight: &Mutex<Flight>,
    ctx: &CudaContext,
    side: &CudaStream,
    on_stall: Box<dyn Fn(String) + Send>,
) {
    if ctx.bind_to_thread().is_err() {
        return;
    }
    // The watcher of the launch it looks at, by the launch's serial.
    let mut current: Option<(u64, Watcher)> = None;
    loop {
        std::thread::sleep(POLL);
        let mut f = lock(flight);
        if f.stopped {
            return;
        }
        let Some(stall) = look(&mut f, side, &mut current) else {
            continue;
        };
        f.stopped = true;
        drop(f);
        on_stall(stall);
        return;
    }
}

/// One look at the launch in flight, with the lock held (its buffers stay
/// until the lock is released): a stall's words, or `None`.
fn look(f: &mut Flight, side: &CudaStream, current: &mut Option<(u64, Watcher)>) -> Option<String> {
    let l = f.launch.as_ref()?;
    let t = l.started.elapsed().as_secs_f64();
    if t < FIRST_LOOK_S {
        return None;
    }
    let host = f.host.as_mut().filter(|h| h.len() >= l.words)?;
    let ptr = host.as_mut_ptr().ok()?;
    if current.as_ref().is_none_or(|(s, _)| *s != l.serial) {
        let mut w = Watcher::new(l.stall_after_s);
        w.launch_done(l.instances_done);
        w.launch_started(0.0);
        *current = Some((l.serial, w));
    }
    let (_, w) = current.as_mut()?;
    match copy_status(side, ptr, l.status, l.words, l.li) {
        Ok(()) => {
            // SAFETY: the copy into `ptr` (`words` u32s, within the
            // buffer's length) has completed.
            let words = unsafe { std::slice::from_raw_parts(ptr, l.words) };
            w.observe(t, l.li, Progress::of(&l.lay, words), &l.lay)
        }
        // A copy that cannot run beside the kernel: a stall too.
        Err(e) if e.starts_with(STALL) => Some(e),
        // Any other error is the waiting thread's to report.
        Err(_) => {
            f.launch = None;
            None
        }
    }
}
