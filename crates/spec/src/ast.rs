//! The typed spec: rules, and the tests that check them.
//!
//! These types are what every other crate consumes. They are produced only by
//! [`crate::load`], which validates everything the types cannot express
//! (unique ids, resolved references, well-formed operations and conditions).

use std::fmt;
use std::path::PathBuf;

use crate::condition::Condition;
pub use crate::programs::{
    Check, CmpOp, CompileExpect, CompileTest, HostTest, Limit, RuntimeExpect, RuntimeTest,
};
pub use crate::state::{State, render_state};

/// The whole spec: every rule and every test, in file order.
#[derive(Debug, Clone)]
pub struct Spec {
    pub rules: Vec<Rule>,
    pub tests: Vec<Test>,
}

impl Spec {
    /// The test with this name, if any.
    pub fn test(&self, name: &str) -> Option<&Test> {
        self.tests.iter().find(|t| t.name == name)
    }

    /// The test called `name` now, or formerly (see [`Test::formerly`]):
    /// where a recorded result under that name belongs.
    pub fn test_now_or_formerly(&self, name: &str) -> Option<&Test> {
        self.test(name).or_else(|| {
            self.tests
                .iter()
                .find(|t| t.formerly.iter().any(|f| f == name))
        })
    }

    /// The rule with this id, if any.
    pub fn rule(&self, id: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.id == id)
    }

    /// Every (rule, test) pair, in rule order then the rule's test order.
    /// Validation guarantees every name resolves.
    pub fn pairs(&self) -> impl Iterator<Item = (&Rule, &Test)> {
        self.rules.iter().flat_map(move |r| {
            r.tests
                .iter()
                .filter_map(move |name| self.test(name).map(|t| (r, t)))
        })
    }
}

/// Where a rule or test was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub file: PathBuf,
    /// 1-based line of the item's `id:` or `name:` key.
    pub line: usize,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// Which CUDA semantics a rule belongs to.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Profile {
    /// CUDA Dynamic Parallelism as of CUDA 12 (the default on compute capability 9.0).
    Cdp2,
    /// Legacy CUDA Dynamic Parallelism (only below compute capability 9.0).
    Cdp1,
    /// Programmatic Dependent Launch (compute capability 9.0 and newer).
    Pdl,
}

impl Profile {
    pub const ALL: [Profile; 3] = [Profile::Cdp2, Profile::Cdp1, Profile::Pdl];

    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Cdp2 => "cdp2",
            Profile::Cdp1 => "cdp1",
            Profile::Pdl => "pdl",
        }
    }

    pub fn parse(s: &str) -> Option<Profile> {
        Profile::ALL.into_iter().find(|p| p.as_str() == s)
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The document and section a rule quotes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// Which kind of document `file` names.
    pub kind: SourceKind,
    /// The file quoted: a seed's name under `../shared/seeds/` (or the
    /// directory given to the loader), or a document's under
    /// `spec/documents/`.
    pub file: String,
    pub section: String,
}

/// Where a rule's quote comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// One of the five seed documents (`source: { seed: ... }`).
    Seed,
    /// Another public document (`source: { document: ... }`): the PTX ISA,
    /// the runtime API reference, a public issue. `spec/documents/` holds
    /// the passages quoted, copied verbatim with the document's title and
    /// address (`crate::documents`).
    Document,
}

impl Source {
    /// The seed's file name, for a rule quoting a seed.
    pub fn seed(&self) -> Option<&str> {
        (self.kind == SourceKind::Seed).then_some(self.file.as_str())
    }
}

/// One checkable statement of a source document.
#[derive(Debug, Clone)]
pub struct Rule {
    /// `<profile>.<area>.<claim>`; the key that links every artefact.
    pub id: String,
    pub source: Source,
    /// Verbatim text from the seed.
    pub quote: String,
    pub profile: Profile,
    /// Names of the tests that check this rule.
    pub tests: Vec<String>,
    /// Why the rule has no runnable test, when it has none.
    pub untested: Option<Untested>,
    /// Where the guide is ambiguous: the decision taken and why.
    pub decision: Option<String>,
    pub origin: Origin,
}

/// Why a rule has no runnable test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untested {
    pub status: UntestedStatus,
    pub reason: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum UntestedStatus {
    /// Nothing a program can observe distinguishes compliance.
    Untestable,
    /// CDP1 exists only below compute capability 9.0.
    NeedsOlderGpu,
    /// Needs a second GPU.
    NeedsMultiGpu,
    /// Testable, but by a kind of test the harness cannot run yet; the
    /// reason says which.
    NeedsHarness,
    /// A performance claim, measured by `cargo xtask bench` rather than
    /// judged pass or fail; the reason names the figures and what the
    /// baseline says.
    Benchmarked,
    /// A definition or an overview: it names or introduces what other
    /// rules state; the reason names (by id) the rules relying on it.
    Definition,
    /// An error of the source (the book's comment says one thing, its code
    /// another): the reason says what is wrong and which rule tests what
    /// the code does.
    Erratum,
}

impl UntestedStatus {
    pub const ALL: [UntestedStatus; 7] = [
        UntestedStatus::Untestable,
        UntestedStatus::NeedsOlderGpu,
        UntestedStatus::NeedsMultiGpu,
        UntestedStatus::NeedsHarness,
        UntestedStatus::Benchmarked,
        UntestedStatus::Definition,
        UntestedStatus::Erratum,
    ];

    /// Whether the reason must name other rules by id (a definition names
    /// the rules relying on it, an erratum the rule that tests the code).
    pub fn names_rules(self) -> bool {
        matches!(self, UntestedStatus::Definition | UntestedStatus::Erratum)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            UntestedStatus::Untestable => "untestable",
            UntestedStatus::NeedsOlderGpu => "needs-older-gpu",
            UntestedStatus::NeedsMultiGpu => "needs-multi-gpu",
            UntestedStatus::NeedsHarness => "needs-harness",
            UntestedStatus::Benchmarked => "benchmarked",
            UntestedStatus::Definition => "definition",
            UntestedStatus::Erratum => "erratum",
        }
    }

    pub fn parse(s: &str) -> Option<UntestedStatus> {
        UntestedStatus::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

/// A test: a litmus scenario or a compile check.
#[derive(Debug, Clone)]
pub struct Test {
    pub name: String,
    pub description: Option<String>,
    /// Names the test had before (`formerly:`), each the name of no other
    /// test and claimed by no other test: results recorded under one of
    /// them are results of this test.
    pub formerly: Vec<String>,
    pub body: TestBody,
    pub origin: Origin,
    /// The 1-based line of the spec file where the first line of the test's
    /// `source` (a runtime, host or compile test's program) is written (for
    /// a `*alias`, where its anchor's text is); `None` when the test has no
    /// source or the line cannot be found. Generated files point nvcc's
    /// errors there (`#line`).
    pub source_line: Option<usize>,
    /// The `.cu` file the test's program was read from (`source_file:`,
    /// joined to the spec file's directory), in which `source_line` is 1;
    /// `None` for a program written inline in the spec file.
    pub source_file: Option<PathBuf>,
    /// `gpu_timeout:` seconds after which the harness kills the test's GPU
    /// trial, when shorter than its `--timeout`: a test that is known to be
    /// able to hang records the hang quickly, as its finding.
    pub gpu_timeout: Option<u64>,
}

#[derive(Debug, Clone)]
pub enum TestBody {
    Litmus(Litmus),
    Compile(CompileTest),
    Runtime(RuntimeTest),
    Host(HostTest),
}

impl TestBody {
    pub fn kind(&self) -> &'static str {
        match self {
            TestBody::Litmus(_) => "litmus",
            TestBody::Compile(_) => "compile",
            TestBody::Runtime(_) => "runtime",
            TestBody::Host(_) => "host",
        }
    }
}

/// herd7's vocabulary for what a condition's reachability must be.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// No execution reaches a state satisfying the condition.
    Forbidden,
    /// Some execution does.
    Allowed,
    /// Every execution does.
    Required,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Forbidden => "forbidden",
            Verdict::Allowed => "allowed",
            Verdict::Required => "required",
        }
    }

    pub fn parse(s: &str) -> Option<Verdict> {
        [Verdict::Forbidden, Verdict::Allowed, Verdict::Required]
            .into_iter()
            .find(|v| v.as_str() == s)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A small concurrent scenario: kernels, their threads' operations, and a
/// condition over the final state.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Litmus {
    /// Global memory locations with their initial values (a tile's: every
    /// word's), in declaration order.
    pub memory: Vec<(String, u32)>,
    /// Shared memory locations (`shared:`) with their initial values, in
    /// declaration order: every block of every kernel has its own copy,
    /// which dies with the block (not an observable of the final state).
    pub shared: Vec<(String, u32)>,
    /// The locations of `memory` and `shared` that are tiles, with their
    /// words (see [`crate::tile`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tiles: Vec<(String, u32)>,
    /// Kernels in declaration order. Host-launched kernels go into one host
    /// stream in this order.
    pub kernels: Vec<Kernel>,
    pub condition: Condition,
    pub expect: Verdict,
    /// Device runtime limits the test sets before its first host launch
    /// (`limits:`): only [`Limit::DevRuntimePendingLaunchCount`] and
    /// [`Limit::DevRuntimeSyncDepth`]. Unset limits have their defaults
    /// ([`Limit::default_value`]).
    pub limits: Vec<(Limit, u64)>,
}

impl Litmus {
    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// Whether `loc` names a shared memory location (`shared:`), or
    /// words of one.
    pub fn is_shared(&self, loc: &str) -> bool {
        let loc = crate::place::base(loc);
        self.shared.iter().any(|(l, _)| l == loc)
    }

    /// Bulk copies of the test: its `bulkload` and `bulkstore` operations.
    pub fn bulk_copies(&self) -> usize {
        self.kernels
            .iter()
            .flat_map(|k| &k.threads)
            .flat_map(|t| &t.ops)
            .filter(|op| op.is_bulk_copy())
            .count()
    }

    /// The value the test sets for `limit`, if it sets one.
    pub fn limit(&self, limit: Limit) -> Option<u64> {
        self.limits
            .iter()
            .find(|(l, _)| *l == limit)
            .map(|(_, v)| *v)
    }

    /// Total number of modeled GPU threads over all kernels.
    pub fn thread_count(&self) -> usize {
        self.kernels.iter().map(|k| k.threads.len()).sum()
    }

    /// The kernel and thread that launch `kernel`, with the stream used.
    pub fn launcher_of(&self, kernel: &str) -> Option<(&Kernel, &Thread, &StreamRef)> {
        self.kernels.iter().find_map(|k| {
            k.threads.iter().find_map(|t| {
                t.ops.iter().find_map(|op| match op {
                    Op::Launch { kernel: c, stream } if c == kernel => Some((k, t, stream)),
                    _ => None,
                })
            })
        })
    }
}

/// A kernel of a litmus test: a grid of one block (threads `tN`) or of
/// several (threads `bM.tN`, every block `b0` to the highest with at least
/// one); a test uses representative threads, not whole blocks.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Kernel {
    pub name: String,
    pub launch: KernelLaunch,
    pub threads: Vec<Thread>,
}

impl Kernel {
    /// Blocks of the kernel's grid: one more than its threads' highest block.
    pub fn blocks(&self) -> usize {
        self.threads
            .iter()
            .map(Thread::block)
            .max()
            .map_or(1, |b| b + 1)
    }

    /// The threads of block `b`, in declaration order.
    pub fn block_threads(&self, b: usize) -> impl Iterator<Item = &Thread> {
        self.threads.iter().filter(move |t| t.block() == b)
    }
}

/// How a kernel is started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum KernelLaunch {
    /// Launched from the host into the test's one host stream, in kernel
    /// declaration order. `pdl` sets the launch attribute
    /// `cudaLaunchAttributeProgrammaticStreamSerialization`.
    Host { pdl: bool },
    /// Launched from device code by exactly one `launch` operation.
    Device,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Thread {
    /// `t0`, `t1`, ...: `tN` is thread index N of the kernel's one block;
    /// in a kernel of several blocks `bM.tN` is thread N of block M (see
    /// [`crate::thread_name`]; the generated kernel places representative
    /// threads in distinct warps).
    pub name: String,
    pub ops: Vec<Op>,
}

impl Thread {
    /// The thread's index within its block, from its name.
    pub fn index(&self) -> usize {
        crate::thread_name::parse(&self.name).map_or(0, |n| n.index)
    }

    /// The thread's block within its kernel's grid: `M` of `bM.tN`, 0 for `tN`.
    pub fn block(&self) -> usize {
        crate::thread_name::parse(&self.name).map_or(0, |n| n.block.unwrap_or(0))
    }
}

/// One operation of a modeled GPU thread.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Op {
    /// `store x 1`: a plain (weak) global store.
    Store { loc: String, value: u32 },
    /// `load r0 x`: a plain (weak) global load into a register.
    Load { reg: String, loc: String },
    /// `syncthreads`: `__syncthreads()`, a barrier of the kernel's block.
    SyncThreads,
    /// `launch child` or `launch child tail`: a device-side launch of a
    /// kernel of this test into a stream.
    Launch { kernel: String, stream: StreamRef },
    /// `trigger`: `cudaTriggerProgrammaticLaunchCompletion()`.
    Trigger,
    /// `gridsync`: `cudaGridDependencySynchronize()`.
    GridDependencySync,
    /// `devicesync [reg]`: device-side `cudaDeviceSynchronize()` (CDP1 only);
    /// with a register, its `cudaError_t` goes into it.
    DeviceSynchronize { reg: Option<String> },
    /// `geterror e0`: `cudaGetLastError()` into a register; resets the
    /// calling thread's last error to `cudaSuccess`.
    GetLastError { reg: String },
    /// `peekerror e0`: `cudaPeekAtLastError()` into a register; leaves the
    /// thread's last error as it is.
    PeekAtLastError { reg: String },
    /// `record e1 [stream]`: `cudaEventRecord(e1, stream)`; the event is
    /// created by the thread's block with `cudaEventDisableTiming`.
    EventRecord { event: String, stream: StreamRef },
    /// `waitevent s1 e1`: `cudaStreamWaitEvent(s1, e1, 0)`.
    StreamWaitEvent { stream: StreamRef, event: String },
    /// `bulkload s x bar`: `mbarrier.arrive.expect_tx` on the block's
    /// mbarrier `bar`, then `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes`:
    /// a copy through the asynchronous proxy of global `x` into the block's
    /// shared `s`, complete when `bar`'s phase completes.
    BulkLoad {
        dst: String,
        src: String,
        bar: String,
    },
    /// `mbarwait bar`: `mbarrier.try_wait.parity` on the block's mbarrier
    /// `bar` until its first phase completes (the bulk load it tracks).
    MbarWait { bar: String },
    /// `bulkstore x s`: `cp.async.bulk.global.shared::cta.bulk_group`: a
    /// copy through the asynchronous proxy of the block's shared `s` into
    /// global `x`, tracked by the thread's bulk async-groups.
    BulkStore { dst: String, src: String },
    /// `bulkcommit`: `cp.async.bulk.commit_group`: the thread's bulk stores
    /// not yet committed form a new bulk async-group.
    BulkCommit,
    /// `bulkwait n` / `bulkwait read n`: `cp.async.bulk.wait_group[.read] n`:
    /// waits until at most `pending` of the thread's most recent bulk
    /// async-groups are pending (with `read`, only until their copies have
    /// read their source).
    BulkWait { read: bool, pending: u32 },
    /// `fence.proxy.async`: a proxy fence between the generic and the
    /// asynchronous proxy.
    FenceProxyAsync,
}

impl Op {
    /// Whether it starts a copy through the asynchronous proxy (`bulkload`,
    /// `bulkstore`).
    pub fn is_bulk_copy(&self) -> bool {
        matches!(self, Op::BulkLoad { .. } | Op::BulkStore { .. })
    }

    /// The memory locations it names, global or shared.
    pub fn locations(&self) -> Vec<&str> {
        match self {
            Op::Store { loc, .. } | Op::Load { loc, .. } => vec![loc],
            Op::BulkLoad { dst, src, .. } | Op::BulkStore { dst, src } => vec![src, dst],
            _ => Vec::new(),
        }
    }

    /// The register the operation writes, if any: a load's, an error
    /// query's, or a `devicesync`'s that records its result.
    pub fn register(&self) -> Option<&str> {
        match self {
            Op::Load { reg, .. }
            | Op::GetLastError { reg }
            | Op::PeekAtLastError { reg }
            | Op::DeviceSynchronize { reg: Some(reg) } => Some(reg),
            _ => None,
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::Store { loc, value } => write!(f, "store {loc} {value}"),
            Op::Load { reg, loc } => write!(f, "load {reg} {loc}"),
            Op::SyncThreads => f.write_str("syncthreads"),
            Op::Launch { kernel, stream } => match stream {
                StreamRef::Null => write!(f, "launch {kernel}"),
                s => write!(f, "launch {kernel} {s}"),
            },
            Op::Trigger => f.write_str("trigger"),
            Op::GridDependencySync => f.write_str("gridsync"),
            Op::DeviceSynchronize { reg: None } => f.write_str("devicesync"),
            Op::DeviceSynchronize { reg: Some(r) } => write!(f, "devicesync {r}"),
            Op::GetLastError { reg } => write!(f, "geterror {reg}"),
            Op::PeekAtLastError { reg } => write!(f, "peekerror {reg}"),
            Op::EventRecord { event, stream } => match stream {
                StreamRef::Null => write!(f, "record {event}"),
                s => write!(f, "record {event} {s}"),
            },
            Op::StreamWaitEvent { stream, event } => write!(f, "waitevent {stream} {event}"),
            Op::BulkLoad { dst, src, bar } => write!(f, "bulkload {dst} {src} {bar}"),
            Op::MbarWait { bar } => write!(f, "mbarwait {bar}"),
            Op::BulkStore { dst, src } => write!(f, "bulkstore {dst} {src}"),
            Op::BulkCommit => f.write_str("bulkcommit"),
            Op::BulkWait {
                read: false,
                pending,
            } => write!(f, "bulkwait {pending}"),
            Op::BulkWait {
                read: true,
                pending,
            } => write!(f, "bulkwait read {pending}"),
            Op::FenceProxyAsync => f.write_str("fence.proxy.async"),
        }
    }
}

/// The stream a device-side launch goes into.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum StreamRef {
    /// The implicit NULL stream of the launching thread block.
    Null,
    /// `cudaStreamTailLaunch`: runs after the launching grid and all its work.
    Tail,
    /// `cudaStreamFireAndForget`: independent of other work of the grid.
    FireAndForget,
    /// A stream the launching block creates at first use with
    /// `cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)`.
    Named(String),
}

impl fmt::Display for StreamRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StreamRef::Null => "null",
            StreamRef::Tail => "tail",
            StreamRef::FireAndForget => "fire-and-forget",
            StreamRef::Named(n) => n,
        })
    }
}
