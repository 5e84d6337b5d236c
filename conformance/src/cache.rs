//! Results computed once a key: a test listed by several rules is explored
//! by the model once, run on the GPU once and compiled for the machine-code
//! tier once; every trial of it waits for, and shares, that one result.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// One result a key, computed by the first caller while the others wait.
pub struct Cache<T>(Mutex<HashMap<String, Arc<OnceLock<T>>>>);

impl<T> Default for Cache<T> {
    fn default() -> Self {
        Cache(Mutex::default())
    }
}

impl<T: Clone> Cache<T> {
    /// The result of `key`, made by `make` if no caller made it before.
    pub fn get_or(&self, key: &str, make: impl FnOnce() -> T) -> T {
        let cell = {
            let mut m = self.0.lock().unwrap_or_else(|p| p.into_inner());
            Arc::clone(m.entry(key.to_string()).or_default())
        };
        cell.get_or_init(make).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_made_once_and_shared() {
        let c: Cache<u32> = Cache::default();
        let made = std::sync::atomic::AtomicU32::new(0);
        let make = || made.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 10;
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| assert_eq!(c.get_or("t", make), 10));
            }
        });
        assert_eq!(c.get_or("u", make), 11);
        assert_eq!(made.into_inner(), 2);
    }
}
