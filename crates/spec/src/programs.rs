//! The tests that are whole CUDA programs (compile, runtime and host
//! tests), the checks of their named outputs, and the context limits a test
//! may set (a litmus test too). Part of the typed spec: [`crate::ast`]
//! re-exports them.

/// A compile-time test: a CUDA snippet that nvcc must accept, reject or warn about.
#[derive(Debug, Clone)]
pub struct CompileTest {
    /// `sm_90`, ...
    pub arch: String,
    /// Extra nvcc flags after `-arch=<arch> -rdc=true -c`.
    pub flags: Vec<String>,
    pub source: String,
    pub expect: CompileExpect,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompileExpect {
    /// nvcc exits 0 and prints no warning.
    Accept,
    /// nvcc exits non-zero and its output contains the substring.
    Reject { diagnostic: String },
    /// nvcc exits 0 and its output contains the substring.
    Warn { diagnostic: String },
}

/// A runtime test: a hand-written CUDA program whose entry kernel writes
/// named 32-bit outputs that must have the expected values, or whose module
/// must fail to load with an expected error.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RuntimeTest {
    pub arch: String,
    pub flags: Vec<String>,
    /// CUDA source with `extern "C" __global__ void <entry>(unsigned int *out)`.
    pub source: String,
    pub entry: String,
    pub grid: u32,
    pub block: u32,
    /// Context limits set before loading, e.g. the pending launch count.
    pub limits: Vec<(Limit, u64)>,
    /// Names of `out[0]`, `out[1]`, ...
    pub outputs: Vec<String>,
    pub expect: RuntimeExpect,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RuntimeExpect {
    /// Each named output compared with a value.
    Values(Vec<(String, Check)>),
    /// Loading the module fails with this `cudaError_t` (name, value).
    LoadError { name: String, value: u32 },
}

/// A host test: a whole CUDA program (`int main()` and its kernels) for the
/// host-side APIs a runtime test cannot reach: stream capture and graph
/// edges, JIT loading, mapped memory, textures, per-kernel attributes. Built
/// with `nvcc -rdc=true ... -lcudadevrt` into an executable that prints each
/// named output as a `gridcheck-output <name> <value>` line
/// (`kernels/include/gridcheck_host.cuh`); the values are checked as a
/// runtime test's are.
#[derive(Debug, Clone)]
pub struct HostTest {
    pub arch: String,
    /// Extra nvcc flags after `-arch=<arch> -rdc=true`.
    pub flags: Vec<String>,
    pub source: String,
    /// The outputs the program must print, in order.
    pub outputs: Vec<String>,
    pub expect: Vec<(String, Check)>,
    /// Outcomes the source allows and a run should show (`may:`): when one
    /// of these checks does not hold, the run did not provoke it, a
    /// quality-warning (as for an allowed litmus outcome never observed),
    /// not a failure.
    pub may: Vec<(String, Check)>,
}

/// `== 3`, `>= 16`, `cudaErrorLaunchPendingCountExceeded` (equality).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Check {
    pub op: CmpOp,
    pub value: u32,
    /// As written in the spec.
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum CmpOp {
    Eq,
    Ne,
    Ge,
    Le,
    Gt,
    Lt,
}

impl Check {
    pub fn holds(&self, v: u32) -> bool {
        match self.op {
            CmpOp::Eq => v == self.value,
            CmpOp::Ne => v != self.value,
            CmpOp::Ge => v >= self.value,
            CmpOp::Le => v <= self.value,
            CmpOp::Gt => v > self.value,
            CmpOp::Lt => v < self.value,
        }
    }
}

/// Context limits a runtime test may set (`cuCtxSetLimit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Limit {
    /// `cudaLimitDevRuntimePendingLaunchCount`.
    DevRuntimePendingLaunchCount,
    /// `cudaLimitDevRuntimeSyncDepth` (CDP1).
    DevRuntimeSyncDepth,
    /// `cudaLimitStackSize`.
    StackSize,
    /// `cudaLimitMallocHeapSize`.
    MallocHeapSize,
}

impl Limit {
    pub const ALL: [Limit; 4] = [
        Limit::DevRuntimePendingLaunchCount,
        Limit::DevRuntimeSyncDepth,
        Limit::StackSize,
        Limit::MallocHeapSize,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Limit::DevRuntimePendingLaunchCount => "dev-runtime-pending-launch-count",
            Limit::DevRuntimeSyncDepth => "dev-runtime-sync-depth",
            Limit::StackSize => "stack-size",
            Limit::MallocHeapSize => "malloc-heap-size",
        }
    }

    pub fn parse(s: &str) -> Option<Limit> {
        Limit::ALL.into_iter().find(|l| l.as_str() == s)
    }

    /// Whether a litmus test may set it (the limits the model gives
    /// semantics to).
    pub fn applies_to_litmus(self) -> bool {
        matches!(
            self,
            Limit::DevRuntimePendingLaunchCount | Limit::DevRuntimeSyncDepth
        )
    }

    /// The device runtime's default: 2048 pending launches (seed 001,
    /// Configuration Options: "The default pending launch count is 2048
    /// launches") and a synchronization depth of 2 ("The default maximum
    /// sync depth is 2"); `None` for the others.
    pub fn default_value(self) -> Option<u64> {
        match self {
            Limit::DevRuntimePendingLaunchCount => Some(2048),
            Limit::DevRuntimeSyncDepth => Some(2),
            _ => None,
        }
    }
}
