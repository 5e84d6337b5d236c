//! The bounds every spec file is held to, so that no input, however large or
//! hostile, takes unbounded time, memory or stack. Each is checked before or
//! while the file is parsed and reported as a located error.

/// Bytes in one spec file (the largest real file is under 50 KB).
pub const MAX_FILE_BYTES: usize = 1 << 20;

/// Collections nested in collections, block or flow style. The YAML parser's
/// time grows with the square of the flow nesting, so the first pass stops
/// at this depth before the parser goes further.
pub const MAX_NESTING: usize = 64;

/// YAML nodes in one file once every alias is expanded (an alias counts the
/// nodes of the value it repeats).
pub const MAX_NODES: u64 = 1 << 18;

/// Bytes of scalar text in one file once every alias is expanded.
pub const MAX_SCALAR_BYTES: u64 = 16 << 20;

/// Errors reported for one file; the rest are counted in one last error.
pub const MAX_ERRORS_PER_FILE: usize = 50;

/// `(` and `~` nested in one condition.
pub const MAX_CONDITION_NESTING: usize = 32;

/// Comparisons in one condition.
pub const MAX_CONDITION_TERMS: usize = 256;

/// The highest thread index `tN` of a litmus kernel. The generated kernel
/// runs thread `tN` as `threadIdx.x == N * 32` with two more warps of stress
/// threads after the highest (see `gridcheck_kernelgen::layout`), and a block
/// holds at most 1024 threads: `(29 + 1 + 2) * 32 == 1024`.
pub const MAX_THREAD_INDEX: usize = 29;

/// The highest block index `bM` of a litmus kernel of several blocks. On the
/// GPU an instance of the test is a group of that many blocks of each kernel
/// (see `gridcheck_kernelgen::layout`).
pub const MAX_BLOCK_INDEX: usize = 15;

/// Representative threads of one litmus test, over every kernel and block.
/// The loom model explores at most 4 (a test with more is decided by the
/// axiomatic model alone), whose enumeration is bounded on its own (an
/// error, never a partial answer, beyond `Options::max_candidates`).
pub const MAX_THREADS: usize = 32;

/// The deepest device launch of a litmus test, the host grid at depth 0:
/// the device runtime's nesting limit is 24 levels (seed 001, "Nesting &
/// Synchronization Depth"), which neither model gives semantics to, so no
/// test reaches it.
pub const MAX_LAUNCH_DEPTH: usize = 23;
