//! The device timeline: every time a trial held a device (a test's GPU run,
//! a host program, a mutant's runs, an escalation), with when it asked,
//! when it got the device and when it gave it back, in seconds since the
//! run began. Written beside the results (`<results>.timeline.jsonl`) and
//! summed after the run: where the suite's time goes, so that a slower
//! suite says which runs grew, and the time no device was held is seen.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use serde::Serialize;

/// One hold of a device.
#[derive(Debug, Clone, Serialize)]
pub struct Span {
    /// The device's slot in the run's pool (0 without `--devices`).
    pub device: usize,
    /// What held it: `litmus`, `runtime`, `host`, `mutant` or `escalation`.
    pub what: &'static str,
    /// The test (or mutant) that held it.
    pub test: String,
    /// When it asked for the device.
    pub asked_s: f64,
    /// When it got it.
    pub start_s: f64,
    /// When it gave it back.
    pub end_s: f64,
}

/// The run's device timeline.
pub struct Timeline {
    start: Instant,
    spans: Mutex<Vec<Span>>,
}

impl Default for Timeline {
    fn default() -> Self {
        Timeline {
            start: Instant::now(),
            spans: Mutex::default(),
        }
    }
}

impl Timeline {
    /// Seconds since the run began.
    pub fn now(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// Records one hold that was asked for at `asked_s`, began at
    /// `start_s` and ends now.
    pub fn record(
        &self,
        device: usize,
        what: &'static str,
        test: &str,
        asked_s: f64,
        start_s: f64,
    ) {
        let span = Span {
            device,
            what,
            test: test.to_string(),
            asked_s,
            start_s,
            end_s: self.now(),
        };
        self.spans
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(span);
    }

    /// Every hold so far, in the order they began.
    pub fn spans(&self) -> Vec<Span> {
        let mut s = self.spans.lock().unwrap_or_else(|p| p.into_inner()).clone();
        s.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
        s
    }

    /// Writes every hold, one JSON line each, to `path`.
    pub fn write(&self, path: &Path) -> Result<(), String> {
        let spans = self.spans();
        if spans.is_empty() {
            return Ok(());
        }
        let mut text = Vec::new();
        for s in &spans {
            serde_json::to_writer(&mut text, s).map_err(|e| e.to_string())?;
            text.push(b'\n');
        }
        std::fs::File::create(path)
            .and_then(|mut f| f.write_all(&text))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

/// Where a results file's timeline goes: `results.jsonl` gives
/// `results.timeline.jsonl`.
pub fn path_for(results: &Path) -> PathBuf {
    let stem = results
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "results".into());
    results.with_file_name(format!("{stem}.timeline.jsonl"))
}

/// The timeline summed: per device, how long it was held, by what, over how
/// long the run took, and the holds that took longest.
pub fn summary(spans: &[Span], wall_s: f64, longest: usize) -> Vec<String> {
    let mut out = Vec::new();
    let devices: std::collections::BTreeSet<usize> = spans.iter().map(|s| s.device).collect();
    for d in devices {
        let mine: Vec<&Span> = spans.iter().filter(|s| s.device == d).collect();
        let held: f64 = mine.iter().map(|s| s.end_s - s.start_s).sum();
        let mut by: std::collections::BTreeMap<&str, (usize, f64)> = Default::default();
        for s in &mine {
            let e = by.entry(s.what).or_default();
            e.0 += 1;
            e.1 += s.end_s - s.start_s;
        }
        let parts: Vec<String> = by
            .iter()
            .map(|(w, (n, t))| format!("{w} {t:.1} s ({n})"))
            .collect();
        out.push(format!(
            "device {d}: held {held:.1} s of the run's {wall_s:.1} s ({:.0} %): {}",
            if wall_s > 0.0 {
                100.0 * held / wall_s
            } else {
                0.0
            },
            parts.join(", ")
        ));
        let mut long = mine.clone();
        long.sort_by(|a, b| (b.end_s - b.start_s).total_cmp(&(a.end_s - a.start_s)));
        for s in long.iter().take(longest) {
            out.push(format!(
                "  {:.2} s {} {}",
                s.end_s - s.start_s,
                s.what,
                s.test
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_are_kept_in_order_written_and_summed() {
        let t = Timeline::default();
        t.record(0, "litmus", "b", 0.0, t.now());
        t.record(0, "host", "a", 0.0, 0.0);
        let spans = t.spans();
        assert_eq!(spans.len(), 2);
        assert_eq!(spans[0].test, "a", "sorted by start");
        assert!(spans.iter().all(|s| s.end_s >= s.start_s));
        let lines = summary(&spans, 10.0, 1);
        assert!(lines[0].starts_with("device 0: held "), "{lines:?}");
        assert!(lines[0].contains("host ") && lines[0].contains("litmus "));
        assert_eq!(lines.len(), 2, "one device, its longest hold");
        let dir = std::env::temp_dir().join(format!("gridcheck-timeline-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = path_for(&dir.join("results.jsonl"));
        assert!(f.ends_with("results.timeline.jsonl"));
        t.write(&f).unwrap();
        let text = std::fs::read_to_string(&f).unwrap();
        assert_eq!(text.lines().count(), 2);
        let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(first["what"], "host");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
