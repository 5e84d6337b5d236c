//! A progress line with an estimate of the time left, for long runs.
//!
//! libtest prints each trial on standard output; the progress goes to
//! standard error as whole lines (no cursor tricks, so logs stay readable),
//! at most one every few seconds and at the end. It is on with `--progress`,
//! and by default when standard error is a terminal but standard output is
//! not (e.g. `gpu-run.sh`, which sends libtest's lines to a file).

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often a line is printed at most.
const EVERY: Duration = Duration::from_secs(5);

pub struct Progress {
    total: usize,
    start: Instant,
    state: Mutex<(usize, Instant)>,
}

impl Progress {
    pub fn new(total: usize) -> Progress {
        let now = Instant::now();
        Progress {
            total,
            start: now,
            state: Mutex::new((0, now)),
        }
    }

    /// Counts a finished trial; returns the line to print, if one is due.
    pub fn tick(&self) -> Option<String> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        st.0 += 1;
        let now = Instant::now();
        let done = st.0;
        // Records written after the run (trials ignored up front) are not
        // part of the count.
        if done > self.total || (done < self.total && now.duration_since(st.1) < EVERY) {
            return None;
        }
        st.1 = now;
        Some(line(done, self.total, now.duration_since(self.start)))
    }
}

/// `progress: 120/495 trials (24%), 10 s elapsed, about 31 s left`. The
/// estimate assumes the remaining trials take as long, on average, as the
/// finished ones.
pub fn line(done: usize, total: usize, elapsed: Duration) -> String {
    let pct = (done * 100).checked_div(total).unwrap_or(100);
    let secs = elapsed.as_secs_f64();
    let left = if done == 0 || done >= total {
        String::new()
    } else {
        let rest = secs / done as f64 * (total - done) as f64;
        format!(", about {rest:.0} s left")
    };
    format!("progress: {done}/{total} trials ({pct}%), {secs:.0} s elapsed{left}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_scales_the_average_trial() {
        assert_eq!(
            line(100, 400, Duration::from_secs(10)),
            "progress: 100/400 trials (25%), 10 s elapsed, about 30 s left"
        );
        assert_eq!(
            line(400, 400, Duration::from_secs(41)),
            "progress: 400/400 trials (100%), 41 s elapsed"
        );
        assert_eq!(
            line(0, 0, Duration::ZERO),
            "progress: 0/0 trials (100%), 0 s elapsed"
        );
    }

    #[test]
    fn lines_are_rate_limited_but_the_last_is_always_printed() {
        let p = Progress::new(3);
        assert!(p.tick().is_none(), "too soon after the start");
        assert!(p.tick().is_none());
        let last = p.tick().expect("the last trial prints");
        assert!(last.starts_with("progress: 3/3"), "{last}");
        assert!(p.tick().is_none(), "nothing past the total");
    }
}
