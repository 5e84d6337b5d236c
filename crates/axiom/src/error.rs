//! Why the axiomatic model gives no answer ([`AxiomError`]), and of what
//! kind ([`ErrorKind`]).

use std::fmt;

/// Why the model gives no answer: a deadlock, a construct it does not
/// define, or a test too large to enumerate. `kind` says which, for callers
/// that decide by it (`crates/oracle`); `message` says it for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AxiomError {
    pub kind: ErrorKind,
    pub message: String,
}

/// The kinds of [`AxiomError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// An enumeration went past its bound ([`crate::Options::max_candidates`]):
    /// the test is too large, not wrong.
    BoundExceeded,
    /// Some execution blocks forever, or the threads of a block execute
    /// different numbers of barriers.
    Deadlock,
    /// A construct the model does not define.
    Unsupported,
    /// A program the spec's loader rejects (an undeclared name, a kernel
    /// launched twice, a launch cycle, ...) or a condition that cannot be
    /// evaluated.
    Invalid,
    /// No candidate execution is consistent with the axioms.
    NoConsistentExecution,
}

impl AxiomError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> AxiomError {
        AxiomError {
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for AxiomError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for AxiomError {}
