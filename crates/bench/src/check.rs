//! The machine-code check's speed (no GPU): cubins a second over a
//! directory or a list of files, with an empty cache and then with the
//! cache it filled; optionally against the reference (each cubin's file
//! disassembled whole, every kernel: `--pack 1 --all-kernels`), whose
//! kernels must come out the same, with the prefilter's count of kernels
//! passed against those that hold PDL instructions.

use std::path::{Path, PathBuf};
use std::time::Instant;

use gridcheck_check::{Options, Report, check};

/// One timed run.
#[derive(Debug, Clone)]
pub struct Timing {
    pub what: String,
    pub cubins: usize,
    pub wall_s: f64,
    /// User and system time of this process and the nvdisasm runs it
    /// waited for (Linux; none elsewhere).
    pub cpu_s: Option<f64>,
}

impl Timing {
    pub fn row(&self, corpus: Option<usize>, jobs: usize) -> String {
        let per_s = self.cubins as f64 / self.wall_s.max(1e-9);
        let cpu = self.cpu_s.map_or("-".into(), |c| {
            format!("{:.3}", c / self.cubins.max(1) as f64)
        });
        let whole = corpus.map_or(String::new(), |n| {
            let by_cpu = self
                .cpu_s
                .map(|c| c / self.cubins.max(1) as f64 * n as f64 / jobs as f64 / 60.0);
            format!(
                "  {n} cubins: {:.1} min at this wall rate{}",
                n as f64 / per_s / 60.0,
                by_cpu.map_or(String::new(), |m| format!(
                    ", {m:.1} min from the CPU time on {jobs} cores"
                ))
            )
        });
        format!(
            "{:<10} {:>6} cubins {:>8.1} s wall {:>8.2} cubins/s {:>7} s CPU a cubin{whole}",
            self.what, self.cubins, self.wall_s, per_s, cpu
        )
    }
}

/// The CPU seconds of this process and its waited-for children, from
/// `/proc/self/stat` (clock ticks of 1/100 s).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    // Fields 14 to 17 of the file (utime, stime, cutime, cstime) are 11 to
    // 14 after the command's name and state.
    let ticks: f64 = (11..15).filter_map(|k| f.get(k)?.parse::<f64>().ok()).sum();
    Some(ticks / 100.0)
}

/// Runs the check and times it.
pub fn timed(what: &str, files: &[PathBuf], opts: &Options) -> (Timing, Report) {
    let cpu0 = cpu_seconds();
    let start = Instant::now();
    let report = check(files, opts);
    let wall_s = start.elapsed().as_secs_f64();
    let cpu_s = cpu0.zip(cpu_seconds()).map(|(a, b)| b - a);
    let cubins = report.files.iter().map(|f| f.units.len()).sum();
    (
        Timing {
            what: what.into(),
            cubins,
            wall_s,
            cpu_s,
        },
        report,
    )
}

/// `n` of the files, chosen by a seeded shuffle (the same for a seed).
pub fn sample(mut files: Vec<PathBuf>, n: usize, seed: u64) -> Vec<PathBuf> {
    files.sort();
    let mut state = seed ^ 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        // xorshift64*
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    for k in (1..files.len()).rev() {
        let j = (next() % (k as u64 + 1)) as usize;
        files.swap(k, j);
    }
    files.truncate(n);
    files
}

/// Each file's kernels as the report gives them (JSON, one line a file):
/// what must not change between the check and its reference.
pub fn kernels_json(r: &Report) -> Vec<String> {
    r.files
        .iter()
        .map(|f| serde_json::to_string(f).unwrap_or_default())
        .collect()
}

/// The prefilter against the reference: kernels disassembled by the fast
/// run, kernels with PDL instructions in the reference, and the PDL kernels
/// the fast run did not disassemble (must be none).
pub fn prefilter_counts(fast: &Report, reference: &Report) -> (usize, usize, Vec<String>) {
    let kernels = |r: &Report| -> Vec<gridcheck_check::Kernel> {
        r.files.iter().flat_map(|f| f.all.iter().cloned()).collect()
    };
    let (f, r) = (kernels(fast), kernels(reference));
    let passed = f.iter().filter(|k| !k.skipped).count();
    let pdl = r.iter().filter(|k| k.has_pdl()).count();
    let dropped = r
        .iter()
        .filter(|k| k.has_pdl() && f.iter().any(|x| x.name == k.name && x.skipped))
        .map(|k| k.name.clone())
        .collect();
    (passed, pdl, dropped)
}

/// A fresh cache directory under the system's temporary directory.
pub fn scratch_cache() -> PathBuf {
    std::env::temp_dir().join(format!("gridcheck-bench-check-{}", std::process::id()))
}

/// The files to check: the arguments (directories walked), or the lines of
/// a list file.
pub fn files(paths: &[String], list: Option<&Path>) -> Result<Vec<PathBuf>, String> {
    let mut out: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
    if let Some(l) = list {
        let text = std::fs::read_to_string(l).map_err(|e| format!("{}: {e}", l.display()))?;
        out.extend(
            text.lines()
                .filter(|l| !l.trim().is_empty())
                .map(PathBuf::from),
        );
    }
    Ok(gridcheck_check::run::expand(&out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_is_the_same_for_a_seed_and_another_for_another() {
        let all: Vec<PathBuf> = (0..100).map(|k| PathBuf::from(format!("f{k}"))).collect();
        let a = sample(all.clone(), 10, 1);
        assert_eq!(a, sample(all.iter().rev().cloned().collect(), 10, 1));
        assert_ne!(a, sample(all.clone(), 10, 2));
        assert_eq!(a.len(), 10);
        let mut u = a.clone();
        u.sort();
        u.dedup();
        assert_eq!(u.len(), 10);
    }

    #[test]
    fn a_timing_row_extrapolates_to_a_corpus() {
        let t = Timing {
            what: "cold".into(),
            cubins: 100,
            wall_s: 20.0,
            cpu_s: Some(30.0),
        };
        let row = t.row(Some(1000), 2);
        assert!(row.contains("5.00 cubins/s"), "{row}");
        assert!(row.contains("0.300 s CPU"), "{row}");
        assert!(
            row.contains("3.3 min at this wall rate") && row.contains("2.5 min from the CPU"),
            "{row}"
        );
    }
}
