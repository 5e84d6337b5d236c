//! Whether a [`Pattern`] matches a litmus program: a search over the
//! pattern's kernels (each a distinct kernel of the program, launched as it
//! says, host-launched kernels in the pattern's order), its threads (each a
//! distinct thread of its kernel whose operations contain the thread's in
//! order), the operations its kernels' lines ask of some thread, and then
//! the operations that must not appear, checked with the bindings found.
//! Backtracking, bounded by the pattern's size (`pattern::MAX_*`) and the
//! program's (the spec's limits).

use gridcheck_spec::{KernelLaunch, Litmus, Op, StreamRef};

use crate::pattern::{Item, LaunchPat, Name, OpPat, Pattern, StreamPat};

/// What a variable names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sort {
    Kernel,
    Loc,
    Stream,
    Event,
    Bar,
}

/// Variables bound so far: distinct variables of a sort bind distinct names.
#[derive(Debug, Clone, Default)]
struct Bind(Vec<(Sort, String, String)>);

impl Bind {
    /// Binds `n` to `value`, or checks it; `loose` (for an operation that
    /// must not appear) accepts an unbound variable without binding it.
    /// A location variable binds a location, whichever of its words an
    /// operation names (`s[0..512]` and `s[512..1024]` are both `s`): a
    /// fact's shape written over words applies to the same program over
    /// tiles, where its envelope's `words` then decides. Whether two
    /// ranges overlap is not matched.
    fn unify(&mut self, sort: Sort, n: &Name, value: &str, loose: bool) -> bool {
        let value = match sort {
            Sort::Loc => gridcheck_spec::place::base(value),
            _ => value,
        };
        let Name::Var(v) = n else { return true };
        if let Some((_, _, bound)) = self.0.iter().find(|(s, x, _)| *s == sort && x == v) {
            return bound == value;
        }
        if loose {
            return true;
        }
        if self.0.iter().any(|(s, _, b)| *s == sort && b == value) {
            return false;
        }
        self.0.push((sort, v.clone(), value.to_string()));
        true
    }

    fn stream(&mut self, p: &StreamPat, s: &StreamRef, loose: bool) -> bool {
        match (p, s) {
            (StreamPat::Any, _)
            | (StreamPat::Null, StreamRef::Null)
            | (StreamPat::Tail, StreamRef::Tail)
            | (StreamPat::FireAndForget, StreamRef::FireAndForget) => true,
            (StreamPat::Named(n), StreamRef::Named(name)) => {
                self.unify(Sort::Stream, n, name, loose)
            }
            _ => false,
        }
    }

    /// Whether `op` is of the pattern `p`, binding its variables.
    fn op(&mut self, p: &OpPat, op: &Op, loose: bool) -> bool {
        use OpPat as P;
        match (p, op) {
            (P::Store { loc, value }, Op::Store { loc: l, value: v }) => {
                value.is_none_or(|x| x == *v) && self.unify(Sort::Loc, loc, l, loose)
            }
            (P::Load { loc }, Op::Load { loc: l, .. }) => self.unify(Sort::Loc, loc, l, loose),
            (P::SyncThreads, Op::SyncThreads)
            | (P::Trigger, Op::Trigger)
            | (P::GridSync, Op::GridDependencySync)
            | (P::DeviceSync, Op::DeviceSynchronize { .. })
            | (P::GetLastError, Op::GetLastError { .. })
            | (P::PeekAtLastError, Op::PeekAtLastError { .. })
            | (P::BulkCommit, Op::BulkCommit)
            | (P::FenceProxyAsync, Op::FenceProxyAsync) => true,
            (
                P::Launch { kernel, stream },
                Op::Launch {
                    kernel: k,
                    stream: s,
                },
            ) => self.stream(stream, s, loose) && self.unify(Sort::Kernel, kernel, k, loose),
            (
                P::Record { event, stream },
                Op::EventRecord {
                    event: e,
                    stream: s,
                },
            ) => self.stream(stream, s, loose) && self.unify(Sort::Event, event, e, loose),
            (
                P::WaitEvent { stream, event },
                Op::StreamWaitEvent {
                    stream: s,
                    event: e,
                },
            ) => self.stream(stream, s, loose) && self.unify(Sort::Event, event, e, loose),
            (
                P::BulkLoad { dst, src, bar },
                Op::BulkLoad {
                    dst: d,
                    src: s,
                    bar: b,
                },
            ) => {
                self.unify(Sort::Loc, dst, d, loose)
                    && self.unify(Sort::Loc, src, s, loose)
                    && self.unify(Sort::Bar, bar, b, loose)
            }
            (P::MbarWait { bar }, Op::MbarWait { bar: b }) => self.unify(Sort::Bar, bar, b, loose),
            (P::BulkStore { dst, src }, Op::BulkStore { dst: d, src: s }) => {
                self.unify(Sort::Loc, dst, d, loose) && self.unify(Sort::Loc, src, s, loose)
            }
            (
                P::BulkWait { read, pending },
                Op::BulkWait {
                    read: r,
                    pending: n,
                },
            ) => read.is_none_or(|x| x == *r) && pending.is_none_or(|x| x == *n),
            _ => false,
        }
    }

    /// Whether `op` is of `p` for some values of its unbound variables
    /// (an operation that must not appear), binding nothing.
    fn could_be(&self, p: &OpPat, op: &Op) -> bool {
        self.clone().op(p, op, true)
    }
}

/// A kernel of the program as the matcher sees it.
struct Kernel<'a> {
    name: &'a str,
    launch: KernelLaunch,
    /// The stream of the `launch` that starts it (a device kernel).
    stream: Option<&'a StreamRef>,
    threads: Vec<&'a [Op]>,
}

fn program(l: &Litmus) -> Vec<Kernel<'_>> {
    let launches: Vec<(&str, &StreamRef)> = l
        .kernels
        .iter()
        .flat_map(|k| &k.threads)
        .flat_map(|t| &t.ops)
        .filter_map(|o| match o {
            Op::Launch { kernel, stream } => Some((kernel.as_str(), stream)),
            _ => None,
        })
        .collect();
    l.kernels
        .iter()
        .map(|k| Kernel {
            name: &k.name,
            launch: k.launch,
            stream: launches.iter().find(|(n, _)| *n == k.name).map(|(_, s)| *s),
            threads: k.threads.iter().map(|t| t.ops.as_slice()).collect(),
        })
        .collect()
}

fn launched_as(p: LaunchPat, k: &Kernel) -> bool {
    match (p, k.launch) {
        (LaunchPat::Any, _)
        | (LaunchPat::Host, KernelLaunch::Host { pdl: false })
        | (LaunchPat::HostPdl, KernelLaunch::Host { pdl: true })
        | (LaunchPat::Device, KernelLaunch::Device) => true,
        (LaunchPat::Tail, KernelLaunch::Device) => matches!(k.stream, Some(StreamRef::Tail)),
        _ => false,
    }
}

/// A partial match: the bindings, each pattern kernel's program kernel and
/// each pattern thread's program thread with its positives' positions.
#[derive(Debug, Clone, Default)]
struct State {
    bind: Bind,
    kernels: Vec<usize>,
    threads: Vec<(usize, usize, Vec<usize>)>,
}

struct Search<'p, 'l> {
    pat: &'p Pattern,
    prog: Vec<Kernel<'l>>,
}

impl Pattern {
    /// Whether the program is of this shape.
    pub fn matches(&self, l: &Litmus) -> bool {
        let s = Search {
            pat: self,
            prog: program(l),
        };
        s.kernels(State::default())
    }
}

impl Search<'_, '_> {
    fn kernels(&self, st: State) -> bool {
        let i = st.kernels.len();
        let Some(kp) = self.pat.kernels.get(i) else {
            return self.host_order(&st) && self.threads(st);
        };
        for (j, k) in self.prog.iter().enumerate() {
            if st.kernels.contains(&j) || !launched_as(kp.launch, k) {
                continue;
            }
            let mut next = st.clone();
            if !next
                .bind
                .unify(Sort::Kernel, &Name::Var(kp.var.clone()), k.name, false)
            {
                continue;
            }
            next.kernels.push(j);
            if self.kernels(next) {
                return true;
            }
        }
        false
    }

    /// Host-launched kernels in the pattern's order; `after P` is the host
    /// kernel right before.
    fn host_order(&self, st: &State) -> bool {
        let is_host = |j: usize| matches!(self.prog[j].launch, KernelLaunch::Host { .. });
        let hosts: Vec<usize> = st.kernels.iter().copied().filter(|&j| is_host(j)).collect();
        if hosts.windows(2).any(|w| w[0] > w[1]) {
            return false;
        }
        self.pat.kernels.iter().enumerate().all(|(i, kp)| {
            let Some(a) = &kp.after else { return true };
            let Some(pa) = self.pat.kernels.iter().position(|k| &k.var == a) else {
                return false;
            };
            let j = st.kernels[i];
            let before = (0..j).rev().find(|&x| is_host(x));
            before == Some(st.kernels[pa])
        })
    }

    fn kernel_of(&self, st: &State, var: &str) -> usize {
        let pk = self
            .pat
            .kernels
            .iter()
            .position(|k| k.var == var)
            .expect("Pattern::parse checks every thread's kernel");
        st.kernels[pk]
    }

    fn threads(&self, st: State) -> bool {
        let i = st.threads.len();
        let Some(tp) = self.pat.threads.get(i) else {
            return self.kernel_items(st, 0, 0);
        };
        let j = self.kernel_of(&st, &tp.kernel);
        let positives: Vec<&Item> = tp.items.iter().filter(|x| !x.not).collect();
        for (u, ops) in self.prog[j].threads.iter().enumerate() {
            if st.threads.iter().any(|(a, b, _)| (*a, *b) == (j, u)) {
                continue;
            }
            let found = self.sequence(
                &positives,
                ops,
                tp.adjacent,
                &st,
                &mut Vec::new(),
                &mut |b, pos| {
                    let mut next = st.clone();
                    next.bind = b;
                    next.threads.push((j, u, pos.to_vec()));
                    self.threads(next)
                },
            );
            if found {
                return true;
            }
        }
        false
    }

    /// The positives in order in `ops` (`adjacent`: one after another),
    /// each solution handed to `k` until it says yes.
    fn sequence(
        &self,
        items: &[&Item],
        ops: &[Op],
        adjacent: bool,
        st: &State,
        pos: &mut Vec<usize>,
        k: &mut dyn FnMut(Bind, &[usize]) -> bool,
    ) -> bool {
        let n = pos.len();
        let Some(item) = items.get(n) else {
            return k(st.bind.clone(), pos);
        };
        let from = pos.last().map_or(0, |p| p + 1);
        let to = match (adjacent, pos.last()) {
            (true, Some(_)) => (from + 1).min(ops.len()),
            _ => ops.len(),
        };
        for (q, op) in ops.iter().enumerate().take(to).skip(from) {
            let mut b = st.bind.clone();
            if !b.op(&item.op, op, false) {
                continue;
            }
            let next = State {
                bind: b,
                ..st.clone()
            };
            pos.push(q);
            let found = self.sequence(items, ops, adjacent, &next, pos, k);
            pos.pop();
            if found {
                return true;
            }
        }
        false
    }

    /// The operations a kernel's line asks of some thread of it: kernel
    /// `i`'s item `n`, then the rest.
    fn kernel_items(&self, st: State, i: usize, n: usize) -> bool {
        let Some(kp) = self.pat.kernels.get(i) else {
            return self.nothing_forbidden(&st);
        };
        let Some(item) = kp.items.get(n) else {
            return self.kernel_items(st, i + 1, 0);
        };
        if item.not {
            return self.kernel_items(st, i, n + 1);
        }
        for ops in &self.prog[st.kernels[i]].threads {
            for op in *ops {
                let mut b = st.bind.clone();
                if b.op(&item.op, op, false) {
                    let next = State {
                        bind: b,
                        ..st.clone()
                    };
                    if self.kernel_items(next, i, n + 1) {
                        return true;
                    }
                }
            }
        }
        false
    }

    /// No thread of a kernel makes what its line forbids, and no thread
    /// makes what its pattern forbids between its matched operations.
    fn nothing_forbidden(&self, st: &State) -> bool {
        for (i, kp) in self.pat.kernels.iter().enumerate() {
            for item in kp.items.iter().filter(|x| x.not) {
                let ops = self.prog[st.kernels[i]]
                    .threads
                    .iter()
                    .flat_map(|t| t.iter());
                if ops.clone().any(|op| st.bind.could_be(&item.op, op)) {
                    return false;
                }
            }
        }
        for (tp, (j, u, pos)) in self.pat.threads.iter().zip(&st.threads) {
            let ops = self.prog[*j].threads[*u];
            let mut seen = 0;
            for item in &tp.items {
                if !item.not {
                    seen += 1;
                    continue;
                }
                let from = if seen == 0 { 0 } else { pos[seen - 1] + 1 };
                let to = pos.get(seen).copied().unwrap_or(ops.len());
                if ops[from..to]
                    .iter()
                    .any(|op| st.bind.could_be(&item.op, op))
                {
                    return false;
                }
            }
        }
        true
    }
}
