//! A litmus test compiled for the model (`compile.rs` compiles it): names
//! resolved to indices, and the static facts the runtime needs (each grid's
//! completion count, its tail launches, its host-stream predecessors, the
//! layout of its block's stream state, its resources).

/// The most GPU threads one test may have: loom's `MAX_THREADS` (5) less the
/// main thread.
pub const MAX_GPU_THREADS: usize = 4;

/// Where a device-launched grid goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    /// An in-order stream of the launching block: its NULL stream or a named
    /// one; `slot` is the stream's place in the block's stream state.
    InOrder { slot: usize },
    /// `cudaStreamTailLaunch`; `slot` orders several tail launches.
    Tail { slot: usize },
    /// `cudaStreamFireAndForget`.
    FireAndForget,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Start {
    /// The first kernel of the host stream.
    HostFirst,
    /// A host kernel without PDL: starts once these host kernels are finished.
    HostAfter { wait: Vec<usize> },
    /// A host kernel launched with programmatic stream serialization: starts
    /// once every thread of `primary` triggered or exited; `gridsync` waits for
    /// the host kernels in `wait`.
    HostPdl { primary: usize, wait: Vec<usize> },
    /// Launched by a thread of `parent` into `stream`.
    Device { parent: usize, stream: Stream },
}

#[derive(Debug, Clone)]
pub(crate) struct KernelInfo {
    /// Global indices of the kernel's threads, every block's.
    pub threads: Vec<usize>,
    /// Global indices of the threads of each block of its grid.
    pub blocks: Vec<Vec<usize>>,
    pub start: Start,
    /// Arrivals that complete the grid: its threads and every grid it
    /// launched outside the tail stream.
    pub done_target: usize,
    /// Number of grids it launches into its tail stream.
    pub tails: usize,
    /// Some block's stream operations need shared state: one of its
    /// streams gets more than one launch, or it uses events. Otherwise
    /// every launch has no stream predecessor and the state is skipped.
    pub stream_state: bool,
    /// The next host kernel is a PDL secondary: record triggers.
    pub has_pdl_dependent: bool,
    /// Some thread calls `devicesync`: record each block's launches.
    pub has_devicesync: bool,
    /// Something waits for this grid to be *done* (its tail grids, or its
    /// own completion being awaited): its threads and non-tail children
    /// report to its completion count. When nothing does, the model skips
    /// the count: it would add scheduling points to explore and no edge.
    pub done_awaited: bool,
    /// Something waits for this grid to be *finished* (done and its tail
    /// grids finished): a host successor, a stream successor, an event, a
    /// `devicesync`, the completion of its parent, or, when the launch pool
    /// is modeled, the release of its pool slot.
    pub finished_awaited: bool,
    /// Nesting depth: 0 for a host kernel, its parent's plus one for a
    /// device kernel.
    pub depth: usize,
    /// The next host kernel, when it waits for this one's completion alone
    /// (no PDL on either side): the thread that completes this grid spawns
    /// the successor's threads, so that they do not exist, and add no
    /// interleavings, before they may start. The spawn carries the
    /// completion's happens-before, like the wait it replaces.
    pub successor: Option<usize>,
    /// Spawned by its predecessor's completion (see `successor`), not at the
    /// start of an execution.
    pub lazy: bool,
    /// A `devicesync` in this grid is deeper than the synchronization depth
    /// limit: it returns an error and waits for nothing.
    pub sync_depth_exceeded: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MOp {
    Store {
        loc: usize,
        value: u32,
        /// Unique to this store operation, never 0 (the initial value's):
        /// what the location's atomic holds (see `memory.rs`).
        id: u32,
    },
    Load {
        loc: usize,
    },
    SyncThreads,
    Launch {
        child: usize,
    },
    /// `record e s`: slots of the event and of the stream.
    Record {
        event: usize,
        stream: usize,
    },
    /// `waitevent s e`: slots of the stream and of the event.
    WaitEvent {
        stream: usize,
        event: usize,
    },
    Trigger,
    GridSync,
    /// `devicesync`; `record`: its result goes into the next register.
    DeviceSync {
        record: bool,
    },
    /// `geterror`: the last error into the next register, then reset.
    GetError,
    /// `peekerror`: the last error into the next register.
    PeekError,
    /// `bulkload` / `bulkstore`: issues bulk copy `copy` (see [`Copy`]).
    Bulk {
        copy: usize,
    },
    /// `mbarwait`: waits for mbarrier `mbar`'s first phase.
    MbarWait {
        mbar: usize,
    },
    BulkCommit,
    BulkWait {
        read: bool,
        pending: usize,
    },
    FenceProxy,
}

/// A bulk copy through the asynchronous proxy: one `bulkload` or
/// `bulkstore` operation, run by an agent of its own (see `bulk.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Copy {
    /// The issuing thread.
    pub thread: usize,
    /// Memory cells (see [`Program::memory`]), a word at a time: source
    /// and destination (one pair for a word; a tile's representative words
    /// segment by segment).
    pub words: Vec<(usize, usize)>,
    /// Where its words' reads start in an exploration's choices
    /// ([`Program::async_reads`]).
    pub first_read: usize,
    /// Unique among the test's stores, never 0: what its write stores.
    pub id: u32,
    /// `Some(mbar)`: a bulk load, complete when the mbarrier's phase is;
    /// `None`: a bulk store, tracked by the thread's bulk async-groups.
    pub mbar: Option<usize>,
    /// Per word, how many older stores its read may take beyond loom's
    /// load (see `memory.rs`, "The asynchronous proxy"): 0 when no thread
    /// of its block accesses the source through the generic proxy.
    pub stale: Vec<usize>,
    /// Which of a bulk store's progress signals some `bulkwait` of its
    /// thread may wait for.
    pub awaited: Awaited,
}

/// What the `bulkwait`s of a bulk store's thread may wait for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Awaited {
    /// A `bulkwait read`: the copy read its source.
    pub read: bool,
    /// A `bulkwait`: the copy wrote its destination.
    pub written: bool,
}

/// An observable a thread writes: a register, or a segment of a tile
/// register.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Obs {
    pub name: String,
    /// Words it covers: 1 for a register.
    pub width: u32,
    /// Values the thread produces for it (its loads of the segment's
    /// representative words), folded by `gridcheck_spec::place::observe`.
    pub count: usize,
}

#[derive(Debug, Clone)]
pub(crate) struct ThreadInfo {
    pub kernel: usize,
    /// Its block within the kernel's grid.
    pub block: usize,
    pub ops: Vec<MOp>,
    /// The observables it writes, in program order.
    pub regs: Vec<Obs>,
    /// The bulk copies it issues.
    pub copies: Vec<usize>,
}

#[derive(Debug, Clone)]
pub(crate) struct Program {
    /// Memory cells and their initial values: the test's global word
    /// locations (the first [`Program::globals`]), then one cell for each
    /// shared location a block uses and for each representative word of a
    /// tile's segment (see `names.rs`).
    pub memory: Vec<(String, u32)>,
    /// Global word locations: the final state's.
    pub globals: usize,
    pub copies: Vec<Copy>,
    /// mbarriers of every block that loads with one.
    pub mbarriers: usize,
    pub kernels: Vec<KernelInfo>,
    pub threads: Vec<ThreadInfo>,
    /// The launch pool's size when it can fill up (the test makes more
    /// device launches than `cudaLimitDevRuntimePendingLaunchCount`);
    /// `None`: every launch finds a free slot, and the pool is not modeled.
    pub pool: Option<usize>,
}

impl Program {
    /// Whether thread `tid` is spawned at the start of an execution: a
    /// thread of a host kernel not started by its predecessor's completion.
    pub(crate) fn is_host_thread(&self, tid: usize) -> bool {
        let k = &self.kernels[self.threads[tid].kernel];
        !matches!(k.start, Start::Device { .. }) && !k.lazy && !self.pdl_spawned(tid)
    }

    /// Whether thread `tid` belongs to a PDL secondary and is not its first
    /// thread: the first waits for the primary's trigger and spawns it (see
    /// [`crate::pdl`]).
    pub(crate) fn pdl_follower(&self, tid: usize) -> bool {
        let k = &self.kernels[self.threads[tid].kernel];
        matches!(k.start, Start::HostPdl { .. }) && k.threads.first() != Some(&tid)
    }

    /// Whether another modeled thread spawns thread `tid` of a PDL
    /// secondary: a follower (see [`Program::pdl_follower`]), or the first
    /// thread of a secondary whose primary is itself a PDL secondary, which
    /// that primary's first thread spawns once it may start (see
    /// [`crate::pdl`]).
    pub(crate) fn pdl_spawned(&self, tid: usize) -> bool {
        let k = &self.kernels[self.threads[tid].kernel];
        match k.start {
            Start::HostPdl { primary, .. } => {
                self.pdl_follower(tid)
                    || matches!(self.kernels[primary].start, Start::HostPdl { .. })
            }
            _ => false,
        }
    }

    /// The PDL secondary of kernel `k`, if the next host kernel is one.
    pub(crate) fn pdl_secondary_of(&self, k: usize) -> Option<usize> {
        self.kernels
            .iter()
            .position(|s| matches!(s.start, Start::HostPdl { primary, .. } if primary == k))
    }

    /// Every choice of how the bulk copies' reads take their values (each
    /// word's, copy by copy: [`Copy::first_read`]), one exploration each
    /// (see `memory.rs`, "The asynchronous proxy").
    pub(crate) fn async_reads(&self) -> Vec<Vec<crate::memory::AsyncRead>> {
        use crate::memory::AsyncRead;
        let mut out = vec![Vec::new()];
        for &stale in self.copies.iter().flat_map(|c| &c.stale) {
            let options: Vec<AsyncRead> = std::iter::once(AsyncRead::Loom)
                .chain((0..stale).map(AsyncRead::Stale))
                .collect();
            out = out
                .into_iter()
                .flat_map(|v| {
                    options.iter().map(move |o| {
                        let mut v = v.clone();
                        v.push(*o);
                        v
                    })
                })
                .collect();
        }
        out
    }

    /// Bits of one set of grids in a block's stream state word.
    pub(crate) fn mask_bits(&self) -> usize {
        self.kernels.len()
    }
}
