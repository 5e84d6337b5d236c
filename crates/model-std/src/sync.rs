//! The model's synchronization primitives on std threads and atomics, with
//! randomized scheduling: before every atomic access, lock and spawn, a
//! thread may yield to the OS scheduler or spin a few hundred cycles, as a
//! per-thread random generator decides. This is the std counterpart of
//! `crates/model/src/sync.rs` (loom's); the model's modules see the same
//! names and signatures.

use std::cell::Cell;
use std::sync::atomic::AtomicU64 as StdU64;
pub(crate) use std::sync::atomic::Ordering;
pub(crate) use std::sync::{Condvar, LockResult, MutexGuard};
pub(crate) use std::thread::JoinHandle;

/// Mixed into every thread's generator; set once per sampling run.
static SEED: StdU64 = StdU64::new(0);
/// Gives each thread its own stream.
static THREADS: StdU64 = StdU64::new(0);

thread_local! {
    static RNG: Cell<u64> = const { Cell::new(0) };
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Seeds the generators of the threads started from now on.
pub(crate) fn seed(s: u64) {
    SEED.store(s, Ordering::Relaxed);
}

fn next() -> u64 {
    RNG.with(|r| {
        let mut v = r.get();
        if v == 0 {
            let n = THREADS.fetch_add(1, Ordering::Relaxed);
            v = mix(SEED.load(Ordering::Relaxed) ^ mix(n)) | 1;
        }
        v = mix(v);
        r.set(v);
        v
    })
}

/// A scheduling point: sometimes yield, sometimes spin, mostly go on.
fn chaos() {
    let r = next();
    match r & 7 {
        0 | 1 => std::thread::yield_now(),
        2 => {
            for _ in 0..(r >> 8) & 1023 {
                std::hint::spin_loop();
            }
        }
        _ => {}
    }
}

pub(crate) fn yield_now() {
    std::thread::yield_now();
}

pub(crate) fn spawn<F, T>(f: F) -> std::thread::JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    chaos();
    std::thread::spawn(move || {
        chaos();
        f()
    })
}

#[derive(Debug)]
pub(crate) struct Mutex<T>(std::sync::Mutex<T>);

impl<T> Mutex<T> {
    pub(crate) fn new(v: T) -> Mutex<T> {
        Mutex(std::sync::Mutex::new(v))
    }

    pub(crate) fn lock(&self) -> LockResult<MutexGuard<'_, T>> {
        chaos();
        self.0.lock()
    }
}

macro_rules! atomic {
    ($name:ident, $std:ty, $t:ty) => {
        #[derive(Debug)]
        pub(crate) struct $name($std);

        #[allow(dead_code)]
        impl $name {
            pub(crate) fn new(v: $t) -> $name {
                $name(<$std>::new(v))
            }
            pub(crate) fn load(&self, o: Ordering) -> $t {
                chaos();
                self.0.load(o)
            }
            pub(crate) fn store(&self, v: $t, o: Ordering) {
                chaos();
                self.0.store(v, o)
            }
            pub(crate) fn compare_exchange(
                &self,
                cur: $t,
                new: $t,
                s: Ordering,
                f: Ordering,
            ) -> Result<$t, $t> {
                chaos();
                self.0.compare_exchange(cur, new, s, f)
            }
            pub(crate) fn fetch_update<F: FnMut($t) -> Option<$t>>(
                &self,
                s: Ordering,
                f: Ordering,
                g: F,
            ) -> Result<$t, $t> {
                chaos();
                self.0.fetch_update(s, f, g)
            }
        }
    };
}

macro_rules! int_ops {
    ($name:ident, $t:ty) => {
        #[allow(dead_code)]
        impl $name {
            pub(crate) fn fetch_or(&self, v: $t, o: Ordering) -> $t {
                chaos();
                self.0.fetch_or(v, o)
            }
            pub(crate) fn fetch_sub(&self, v: $t, o: Ordering) -> $t {
                chaos();
                self.0.fetch_sub(v, o)
            }
            pub(crate) fn fetch_add(&self, v: $t, o: Ordering) -> $t {
                chaos();
                self.0.fetch_add(v, o)
            }
        }
    };
}

atomic!(AtomicU32, std::sync::atomic::AtomicU32, u32);
atomic!(AtomicU64, std::sync::atomic::AtomicU64, u64);
atomic!(AtomicUsize, std::sync::atomic::AtomicUsize, usize);
int_ops!(AtomicU32, u32);
int_ops!(AtomicU64, u64);
int_ops!(AtomicUsize, usize);

/// Stores the store `id` and appends `(id, value)` to the location's log
/// (see the model's `memory.rs`), both under the log's lock, so that the log
/// follows the location's modification order on real threads too; returns
/// the store's position in the log.
pub(crate) fn store_in_order(
    cell: &AtomicU32,
    log: &std::sync::Mutex<Vec<(u32, u32)>>,
    id: u32,
    value: u32,
) -> usize {
    let mut l = log.lock().unwrap_or_else(|e| e.into_inner());
    cell.store(id, Ordering::Relaxed);
    l.push((id, value));
    l.len() - 1
}
