//! Synchronization primitives that carry happens-before, built on the
//! `Mutex` and `Condvar` of [`crate::sync`] (loom's).
//!
//! Every guarantee of the guide that makes one thread's writes visible to
//! another is one of these objects — a [`Counter`] (a count-down latch when it
//! is awaited at its final value: grid completion, stream order) or a
//! [`Barrier`] (`__syncthreads()`) — or a launch, which spawns the child's
//! threads (see [`crate::thread`]). Each is its own mutex, so it orders
//! only the threads that use it: a single global lock would add edges that
//! the guide does not give and hide states it allows.
//!
//! Happens-before comes from the mutex: a thread that acquires it after a
//! release sees everything that happened before that release (loom models
//! `Mutex` with acquire/release causality). Condvar notifications are only
//! issued when a thread is waiting, to keep loom's branch count down.

use crate::memory::View;
use crate::sync::{Condvar, Mutex, MutexGuard};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A poisoned lock only follows a panic inside the model, which loom
    // reports itself; keep going with the data.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn wait<'a, T>(cv: &Condvar, g: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    cv.wait(g).unwrap_or_else(|e| e.into_inner())
}

#[derive(Debug, Default)]
struct CounterState {
    /// The coherence views of the threads that held the mutex (see
    /// `memory.rs`): a mutex orders its holders.
    view: View,
    count: usize,
    waiters: usize,
    /// Whether an arrival was marked (see [`Counter::add_with`]).
    marked: bool,
}

/// A monotone counter. `add_with` releases, `wait_at_least` acquires: a thread that
/// returns from `wait_at_least(n)` happens after the first `n` calls to
/// `add_with` (and everything before them).
#[derive(Debug)]
pub(crate) struct Counter {
    state: Mutex<CounterState>,
    cv: Condvar,
}

impl Counter {
    pub(crate) fn new() -> Counter {
        Counter {
            state: Mutex::new(CounterState::default()),
            cv: Condvar::new(),
        }
    }

    /// Counts one arrival, marked or not, and runs `before` with the new
    /// count and whether any arrival so far was marked, while still holding
    /// the lock: whatever `before` does happens before any waiter returns
    /// for this count (the launch pool frees a grid's slot this way, before
    /// its completion can be observed).
    pub(crate) fn add_with(
        &self,
        mark: bool,
        view: &mut View,
        before: impl FnOnce(usize, bool),
    ) -> usize {
        let mut s = lock(&self.state);
        s.view.join(view);
        view.join(&s.view);
        s.count += 1;
        s.marked |= mark;
        before(s.count, s.marked);
        if s.waiters > 0 {
            self.cv.notify_all();
        }
        s.count
    }

    /// Whether a marked arrival was counted.
    pub(crate) fn marked(&self) -> bool {
        lock(&self.state).marked
    }

    /// Blocks until at least `n` arrivals were counted.
    pub(crate) fn wait_at_least(&self, n: usize, view: &mut View) {
        let mut s = lock(&self.state);
        s.view.join(view);
        while s.count < n {
            s.waiters += 1;
            s = wait(&self.cv, s);
            s.waiters -= 1;
        }
        view.join(&s.view);
    }
}

#[derive(Debug, Default)]
struct BarrierState {
    view: View,
    arrived: usize,
    generation: usize,
    waiters: usize,
}

/// A reusable barrier of `n` threads: every arrival happens before every
/// departure of the same generation.
#[derive(Debug)]
pub(crate) struct Barrier {
    n: usize,
    state: Mutex<BarrierState>,
    cv: Condvar,
}

impl Barrier {
    pub(crate) fn new(n: usize) -> Barrier {
        Barrier {
            n,
            state: Mutex::new(BarrierState::default()),
            cv: Condvar::new(),
        }
    }

    pub(crate) fn wait(&self, view: &mut View) {
        let mut s = lock(&self.state);
        s.view.join(view);
        s.arrived += 1;
        if s.arrived == self.n {
            s.arrived = 0;
            s.generation += 1;
            if s.waiters > 0 {
                self.cv.notify_all();
            }
            view.join(&s.view);
            return;
        }
        let generation = s.generation;
        while s.generation == generation {
            s.waiters += 1;
            s = wait(&self.cv, s);
            s.waiters -= 1;
        }
        view.join(&s.view);
    }
}
