//! The library tier's side of a record ([`LibraryResult`]: what a CCCL
//! algorithm's program reported for one case, the controls run after a
//! failure and the reproducer). The diff of two releases is
//! `crates/report`'s `release_diff.rs`.

use serde::{Deserialize, Serialize};

/// One case of a CCCL algorithm on the GPU, as its program reported it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LibraryResult {
    /// The CCCL release whose headers built the program (`13.3`, named as
    /// the toolchain that ships them).
    pub release: String,
    /// The CCCL version the program reports (`3.3.0`), when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cccl: Option<String>,
    /// `sm_90` (SASS) or `compute_80` (PTX, JIT-compiled by the driver).
    pub target: String,
    pub algorithm: String,
    pub size: u64,
    /// `quiet`, `back-to-back`, `stress`, `burst` or `delay`.
    pub env: String,
    /// The calls asked for.
    pub reps: u64,
    /// How the binary's run went.
    pub run: LibraryRun,
    /// After a failure: the same case with the program's other builds
    /// (PDL off, compute_90 PTX, the wait moved), each one's outcome.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub controls: Vec<LibraryControl>,
    /// The case's own build run again beside its controls, once in each
    /// control round after the first (a new seed each round): what a
    /// control's result is compared with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub beside: Vec<LibraryRun>,
    /// How to run the case again without the harness.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reproducer: Option<Reproducer>,
}

/// One run of a program: its counts, or why there are none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LibraryRun {
    /// The calls made and checked.
    #[serde(default)]
    pub calls: u64,
    /// The calls whose result was wrong.
    #[serde(default)]
    pub wrong: u64,
    /// The first wrong element (`index 17: got 5 want 3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_wrong: Option<String>,
    /// The CUDA error that ended the run (`cudaErrorIllegalAddress`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The calls made before that error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_calls: Option<u64>,
    /// The run did not answer within this many seconds and was killed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timed_out_s: Option<u64>,
    /// The run ended otherwise without its line (a crash, bad output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// Whether the binary was built with PDL on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pdl: Option<bool>,
    /// PDL launches of one call, measured by the program (the call
    /// captured into a graph, its programmatic edges counted); `None`: not
    /// measured (a call that cannot be captured, or an older program).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pdl_edges: Option<u64>,
    /// What `cub::PtxVersion` reported (900: compute_90 code ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ptx_version: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_ms: Option<f64>,
    /// The cases the program's process had answered before this one (a
    /// staying process, `--serve`); `None`: a process of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earlier_cases: Option<u64>,
}

impl LibraryRun {
    /// Whether every call was made and right.
    pub fn passed(&self, reps: u64) -> bool {
        self.wrong == 0
            && self.error.is_none()
            && self.timed_out_s.is_none()
            && self.problem.is_none()
            && self.calls >= reps
    }

    /// What went wrong, in the words a message uses, or `None` when the
    /// run passed.
    pub fn failure(&self, reps: u64) -> Option<String> {
        if let Some(t) = self.timed_out_s {
            return Some(format!("no answer within {t} s"));
        }
        if let Some(p) = &self.problem {
            return Some(p.clone());
        }
        if let Some(e) = &self.error {
            let k = self.after_calls.unwrap_or(self.calls);
            return Some(format!("{e} after {k} calls"));
        }
        if self.wrong > 0 {
            let first = self
                .first_wrong
                .as_deref()
                .map(|f| format!(" (first: {f})"))
                .unwrap_or_default();
            return Some(format!(
                "wrong in {} of {} calls{first}",
                self.wrong, self.calls
            ));
        }
        (self.calls < reps).then(|| format!("made {} of {reps} calls", self.calls))
    }
}

/// A control: the failing case run with another build of its program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LibraryControl {
    /// The binary's suffix: `-nopdl`, `-ptx90`, `-sass80`, `-<patch>`.
    pub variant: String,
    /// `pass`, `fail`, `not-run` or `invalid` (a `-nopdl` build measured
    /// launching with PDL: it controls nothing).
    pub outcome: String,
    /// What it showed, in words.
    pub message: String,
    /// The run's counts, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<LibraryRun>,
    /// Its runs in the later control rounds, beside the case's own build
    /// (`LibraryResult::beside`), until it failed or the rounds ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<LibraryRun>,
}

impl LibraryControl {
    /// Whether the control removed the failure (it ran and passed).
    pub fn removes_failure(&self) -> bool {
        self.outcome == "pass"
    }
}

/// How to run one case without the harness.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reproducer {
    /// The program's command line, as the harness ran it.
    pub command: String,
    /// The standalone source, `kernels/cccl/<program>.cu`.
    pub source: String,
    /// The nvcc command that builds it (from the build's `build.json`),
    /// or why it is not known.
    pub build: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_says_what_went_wrong_in_the_messages_words() {
        let mut r = LibraryRun {
            calls: 20,
            ..LibraryRun::default()
        };
        assert!(r.passed(20));
        assert_eq!(r.failure(20), None);
        assert_eq!(r.failure(30).as_deref(), Some("made 20 of 30 calls"));
        r.wrong = 3;
        r.first_wrong = Some("index 17: got 5 want 3".into());
        assert!(!r.passed(20));
        assert_eq!(
            r.failure(20).as_deref(),
            Some("wrong in 3 of 20 calls (first: index 17: got 5 want 3)")
        );
        r.error = Some("cudaErrorIllegalAddress".into());
        r.after_calls = Some(7);
        assert_eq!(
            r.failure(20).as_deref(),
            Some("cudaErrorIllegalAddress after 7 calls")
        );
        let hung = LibraryRun {
            timed_out_s: Some(60),
            ..LibraryRun::default()
        };
        assert_eq!(hung.failure(1).as_deref(), Some("no answer within 60 s"));
    }
}
