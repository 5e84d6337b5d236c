//! Which axioms hold ([`Options`]): the guide's, or the loom model's.

/// Which axioms hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Allow load buffering (drop the `exec | rf` acyclicity axiom): the PTX
    /// memory model's answer for tests without dependencies. Default `false`.
    pub load_buffering: bool,
    /// Coherence order follows execution order (`exec | rf | co` acyclic):
    /// the loom model's operational restriction, not the guide's. Default
    /// `false`.
    pub co_follows_execution: bool,
    /// Upper bound on each enumerated product (control resolutions, per
    /// location choices, candidates).
    pub max_candidates: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            load_buffering: false,
            co_follows_execution: false,
            max_candidates: 2_000_000,
        }
    }
}

impl Options {
    /// The loom model's semantics: the guide's, plus coherence order
    /// following execution order.
    pub fn loom() -> Options {
        Options {
            co_follows_execution: true,
            ..Options::default()
        }
    }
}
