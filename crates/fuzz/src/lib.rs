//! Structure-aware fuzzing, in process, driven by proptest: the real spec
//! files mutated line by line and token by token (YAML structure, the DSL's
//! names and conditions, nesting and alias bombs), fed to the loader and,
//! when accepted, to kernelgen; the real results file cut and damaged, fed
//! to the results reader.
//!
//! For every input: no panic, the time and the peak memory it took, and
//! for what is accepted, that no bound was passed (file size, thread index,
//! a block of at most 1024 threads in the generated code). Errors without a
//! line or a field are counted.
//!
//! `cargo test -p gridcheck-fuzz` runs a fixed budget; `GRIDCHECK_FUZZ_CASES`
//! sets another (see `tests/fuzz.rs`).

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gridcheck_spec::limits::{MAX_BLOCK_INDEX, MAX_FILE_BYTES, MAX_THREAD_INDEX};
use gridcheck_spec::thread_name;
use gridcheck_spec::{SpecError, TestBody, load_sources};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

mod mutate;

pub use mutate::{Damage, Mutation, apply_damage, damage, mutate, mutation};

/// The real inputs mutations start from.
pub struct Corpus {
    pub spec_files: Vec<(PathBuf, String)>,
    pub results: Vec<u8>,
}

impl Corpus {
    /// The checkout's spec files and a recorded results file.
    pub fn load(root: &Path) -> Corpus {
        let spec_files = gridcheck_spec::load::spec_files(&root.join("spec"))
            .expect("the spec directory")
            .into_iter()
            .map(|p| {
                let text = std::fs::read_to_string(&p).expect("a spec file");
                (p, text)
            })
            .collect();
        let results = std::fs::read_dir(root.join("records"))
            .into_iter()
            .flatten()
            .flatten()
            .flat_map(|gpu| {
                std::fs::read_dir(gpu.path())
                    .into_iter()
                    .flatten()
                    .flatten()
            })
            .find_map(|run| gridcheck_report::find_stored(&run.path(), "results.jsonl"))
            .and_then(|p| gridcheck_report::read_stored(&p).ok())
            .unwrap_or_default();
        Corpus {
            spec_files,
            results,
        }
    }
}

/// Figures of a run.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    pub spec_inputs: u64,
    pub spec_accepted: u64,
    pub results_inputs: u64,
    pub panics: u64,
    /// Accepted inputs past a bound.
    pub over_limit: u64,
    pub errors: u64,
    pub errors_without_line: u64,
    pub errors_without_field: u64,
    pub max_input_bytes: usize,
    /// The most wall-clock time one input took.
    pub max_time: Duration,
    pub max_time_input: String,
    /// The most CPU time one input took (Linux: the thread's own, so that a
    /// busy machine does not count).
    pub max_cpu: Option<Duration>,
    /// Peak resident memory of the process during one input, in KiB (Linux).
    pub max_rss_kib: Option<u64>,
    /// Examples of what went wrong, for the report.
    pub failures: Vec<String>,
    /// The kinds of errors without a field (their message up to the first
    /// backquote or digit), with their counts.
    pub without_field: std::collections::BTreeMap<String, u64>,
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "inputs: {} spec ({} accepted), {} results files",
            self.spec_inputs, self.spec_accepted, self.results_inputs
        )?;
        writeln!(
            f,
            "panics: {}; accepted over a limit: {}",
            self.panics, self.over_limit
        )?;
        writeln!(
            f,
            "errors: {}, without a line: {}, without a field: {}",
            self.errors, self.errors_without_line, self.errors_without_field
        )?;
        writeln!(
            f,
            "largest input: {} bytes; slowest input: {:.3} s ({})",
            self.max_input_bytes,
            self.max_time.as_secs_f64(),
            self.max_time_input
        )?;
        for (kind, n) in &self.without_field {
            writeln!(f, "  without a field: {n} x \"{kind}...\"")?;
        }
        if let Some(c) = self.max_cpu {
            writeln!(f, "most CPU time for one input: {:.3} s", c.as_secs_f64())?;
        }
        match self.max_rss_kib {
            Some(k) => writeln!(f, "peak resident memory during one input: {} MiB", k / 1024),
            None => writeln!(f, "peak resident memory: not measured on this system"),
        }
    }
}

/// CPU time this thread has used (Linux: `/proc/thread-self/stat`, in
/// clock ticks of 10 ms).
fn thread_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // The fields after the command (which may hold spaces) in parentheses.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// Resets the process's peak resident memory (Linux: `clear_refs` 5).
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The process's peak resident memory since the last reset, in KiB.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

impl Stats {
    fn cpu(&mut self, before: Option<Duration>) {
        if let (Some(b), Some(a)) = (before, thread_cpu()) {
            self.max_cpu = Some(self.max_cpu.unwrap_or_default().max(a.saturating_sub(b)));
        }
    }

    fn time(&mut self, t: Duration, what: impl FnOnce() -> String) {
        if t > self.max_time {
            self.max_time = t;
            self.max_time_input = what();
        }
    }

    fn memory(&mut self, measured: bool) {
        if measured && let Some(k) = peak_rss_kib() {
            self.max_rss_kib = Some(self.max_rss_kib.unwrap_or(0).max(k));
        }
    }

    fn fail(&mut self, what: String) {
        if self.failures.len() < 20 {
            self.failures.push(what);
        }
    }

    fn error(&mut self, e: &SpecError) {
        self.errors += 1;
        // The count of errors left out is about the whole file.
        if e.message.contains("more errors in this file not shown") {
            return;
        }
        if e.line.is_none() {
            self.errors_without_line += 1;
            self.fail(format!("an error without a line: {e}"));
        }
        if e.field.is_none() {
            self.errors_without_field += 1;
            let kind: String = e
                .message
                .split(|c: char| c == '`' || c.is_ascii_digit())
                .next()
                .unwrap_or("")
                .chars()
                .take(60)
                .collect();
            *self.without_field.entry(kind).or_default() += 1;
        }
    }

    /// One spec input: the loader on `text` with every other file of the
    /// spec (rules list tests of other profiles, and `definition` reasons
    /// name rules anywhere), then kernelgen on what it accepts.
    pub fn spec_input(
        &mut self,
        spec: &[(PathBuf, String)],
        path: &Path,
        text: String,
        muts: &[Mutation],
    ) {
        self.spec_inputs += 1;
        self.max_input_bytes = self.max_input_bytes.max(text.len());
        let len = text.len();
        let mut text = Some(text);
        let files: Vec<(PathBuf, String)> = spec
            .iter()
            .map(|(p, t)| match text.take_if(|_| p == path) {
                Some(mutant) => (p.clone(), mutant),
                None => (p.clone(), t.clone()),
            })
            .collect();
        let measured = reset_peak_rss();
        let cpu = thread_cpu();
        let t = Instant::now();
        let out = catch_unwind(AssertUnwindSafe(|| {
            let r = load_sources(&files, None);
            let generated = r
                .as_ref()
                .ok()
                .map(|spec| (spec.clone(), gridcheck_kernelgen::generate_all(spec)));
            (r.err(), generated)
        }));
        let took = t.elapsed();
        self.cpu(cpu);
        self.memory(measured);
        self.time(took, || format!("{} with {muts:?}", path.display()));
        let (errors, generated) = match out {
            Ok(o) => o,
            Err(_) => {
                self.panics += 1;
                self.fail(format!("panic: {} with {muts:?}", path.display()));
                return;
            }
        };
        for e in errors.iter().flat_map(|e| &e.0) {
            self.error(e);
        }
        let Some((spec, files)) = generated else {
            return;
        };
        self.spec_accepted += 1;
        let mut over = Vec::new();
        if len > MAX_FILE_BYTES {
            over.push(format!("{len} bytes"));
        }
        for t in &spec.tests {
            if !t.name.starts_with(|c: char| c.is_ascii_lowercase()) {
                over.push(format!("test name `{}`", t.name));
            }
            if let TestBody::Litmus(l) = &t.body {
                for k in &l.kernels {
                    let several = k.blocks() > 1;
                    for th in &k.threads {
                        let canonical =
                            thread_name::format(several.then_some(th.block()), th.index());
                        if th.index() > MAX_THREAD_INDEX
                            || th.block() > MAX_BLOCK_INDEX
                            || th.name != canonical
                        {
                            over.push(format!("thread `{}`", th.name));
                        }
                    }
                }
            }
        }
        for (name, code) in &files {
            if code
                .lines()
                .any(|l| l.starts_with("#error") && l.contains("threads per block"))
            {
                over.push(format!("{name}: a block over 1024 threads"));
            }
        }
        if !over.is_empty() {
            self.over_limit += 1;
            over.truncate(3);
            self.fail(format!(
                "accepted over a limit ({}): {} with {muts:?}",
                over.join(", "),
                path.display()
            ));
        }
    }

    /// One results file: the reader keeps every complete record line and
    /// names every other non-blank line.
    pub fn results_input(&mut self, bytes: &[u8], ds: &[Damage]) {
        self.results_inputs += 1;
        self.max_input_bytes = self.max_input_bytes.max(bytes.len());
        let measured = reset_peak_rss();
        let cpu = thread_cpu();
        let t = Instant::now();
        let out = catch_unwind(AssertUnwindSafe(|| gridcheck_report::read_results(bytes)));
        let took = t.elapsed();
        self.cpu(cpu);
        self.memory(measured);
        self.time(took, || format!("results file with {ds:?}"));
        let Ok(read) = out else {
            self.panics += 1;
            self.fail(format!("panic reading a results file damaged by {ds:?}"));
            return;
        };
        let nonblank = bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
            .count();
        if read.records.len() + read.skipped.len() != nonblank {
            self.fail(format!(
                "{} records and {} skipped lines of {nonblank}: {ds:?}",
                read.records.len(),
                read.skipped.len()
            ));
            self.over_limit += 1;
        }
    }
}

/// Runs `spec_cases` spec inputs and `results_cases` results inputs from
/// `corpus`, reproducibly for a `seed`.
pub fn run(corpus: &Corpus, spec_cases: u32, results_cases: u32, seed: u64) -> Stats {
    let mut stats = Stats::default();
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    let config = Config {
        cases: spec_cases,
        failure_persistence: None,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &key);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let n = corpus.spec_files.len();
    let strategy = (0..n, proptest::collection::vec(mutation(), 1..6));
    let cell = std::cell::RefCell::new(&mut stats);
    let _ = runner.run(&strategy, |(f, muts)| {
        let (path, text) = &corpus.spec_files[f];
        let input = mutate(text, &corpus.spec_files, &muts);
        cell.borrow_mut()
            .spec_input(&corpus.spec_files, path, input, &muts);
        Ok(())
    });
    if !corpus.results.is_empty() {
        let config = Config {
            cases: results_cases,
            failure_persistence: None,
            ..Config::default()
        };
        key[8] = 1;
        let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &key);
        let mut runner = TestRunner::new_with_rng(config, rng);
        let strategy = proptest::collection::vec(damage(), 1..5);
        let _ = runner.run(&strategy, |ds| {
            let bytes = apply_damage(&corpus.results, &ds);
            cell.borrow_mut().results_input(&bytes, &ds);
            Ok(())
        });
    }
    stats
}
