//! EXPERIMENT: atomics with release/acquire and spin-yield waits.

use std::sync::atomic::Ordering::{AcqRel, Acquire, Release};

use loom::sync::atomic::{AtomicU64, AtomicUsize};

#[derive(Debug)]
pub(crate) struct Counter {
    n: AtomicUsize,
}

impl Counter {
    pub(crate) fn new() -> Counter {
        Counter {
            n: AtomicUsize::new(0),
        }
    }
    pub(crate) fn add(&self) -> usize {
        self.n.fetch_add(1, AcqRel) + 1
    }
    pub(crate) fn wait_at_least(&self, n: usize) {
        while self.n.load(Acquire) < n {
            loom::thread::yield_now();
        }
    }
}

#[derive(Debug)]
pub(crate) struct Gate {
    v: AtomicU64,
}

impl Gate {
    pub(crate) fn new() -> Gate {
        Gate {
            v: AtomicU64::new(0),
        }
    }
    pub(crate) fn open(&self, value: u64) {
        self.v.store(value + 1, Release);
    }
    pub(crate) fn wait(&self) -> u64 {
        loop {
            let v = self.v.load(Acquire);
            if v != 0 {
                return v - 1;
            }
            loom::thread::yield_now();
        }
    }
}

#[derive(Debug)]
pub(crate) struct Barrier {
    n: usize,
    c: AtomicUsize,
}

impl Barrier {
    pub(crate) fn new(n: usize) -> Barrier {
        Barrier {
            n,
            c: AtomicUsize::new(0),
        }
    }
    pub(crate) fn wait(&self) {
        let before = self.c.fetch_add(1, AcqRel);
        let target = (before / self.n + 1) * self.n;
        while self.c.load(Acquire) < target {
            loom::thread::yield_now();
        }
    }
}
