//! Why the model could not decide a test ([`ModelError`]), and of what
//! kind ([`ErrorKind`]).

use std::fmt;

/// Why the model could not decide a test: a deadlock (synchronization that
/// can never be satisfied), a test beyond loom's limits, or a loom failure.
/// `kind` says which, for callers that decide by it (`crates/oracle`);
/// `message` says it for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelError {
    pub kind: ErrorKind,
    pub message: String,
}

/// The kinds of [`ModelError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// More threads than loom explores ([`crate::MAX_GPU_THREADS`]).
    TooManyThreads,
    /// An execution took more scheduling decisions than
    /// [`crate::Options::max_branches`] (a wait that is never satisfied?).
    BranchLimit,
    /// Some execution blocks forever, or the threads of a block execute
    /// different numbers of barriers.
    Deadlock,
    /// A construct, or a size of one, the model does not define.
    Unsupported,
    /// A program the spec's loader rejects (an undeclared name, a kernel
    /// launched twice, ...) or a condition that cannot be evaluated.
    Invalid,
    /// No execution reached a final state.
    NoFinalState,
    /// loom failed otherwise, or the model on std threads broke coherence.
    Failed,
}

impl ModelError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> ModelError {
        ModelError {
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ModelError {}
