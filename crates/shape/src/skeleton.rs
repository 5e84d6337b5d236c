//! A program's skeleton: per kernel its launch kind and per thread its
//! operations' kinds, without values, locations, registers or names
//! ([`Shape`], shown as `host[st launch-tail|ld] device[ld]`). The
//! campaign groups and deduplicates findings across GPUs by it; a fact's
//! mechanism is a [`crate::Pattern`], which says more (which locations,
//! which kernel a launch starts, what must not happen).

use std::fmt;

use gridcheck_spec::{KernelLaunch, Litmus, Op, StreamRef};

/// The skeleton of a litmus program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    pub kernels: Vec<KernelShape>,
}

/// One kernel of a [`Shape`]: how it is launched and, per thread, the kinds
/// of its operations in program order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelShape {
    /// `host`, `host-pdl` or `device`.
    pub launch: &'static str,
    pub threads: Vec<Vec<&'static str>>,
}

fn stream_kind(s: &StreamRef) -> &'static str {
    match s {
        StreamRef::Null => "null",
        StreamRef::Tail => "tail",
        StreamRef::FireAndForget => "faf",
        StreamRef::Named(_) => "named",
    }
}

/// One operation without its values, locations, registers or names.
pub fn op_kind(o: &Op) -> &'static str {
    match o {
        Op::Store { .. } => "st",
        Op::Load { .. } => "ld",
        Op::SyncThreads => "bar",
        Op::Launch { stream, .. } => match stream_kind(stream) {
            "null" => "launch-null",
            "tail" => "launch-tail",
            "faf" => "launch-faf",
            _ => "launch-named",
        },
        Op::Trigger => "trigger",
        Op::GridDependencySync => "gridsync",
        Op::DeviceSynchronize { .. } => "devsync",
        Op::GetLastError { .. } => "geterr",
        Op::PeekAtLastError { .. } => "peekerr",
        Op::EventRecord { stream, .. } => match stream_kind(stream) {
            "null" => "record-null",
            "tail" => "record-tail",
            "faf" => "record-faf",
            _ => "record-named",
        },
        Op::StreamWaitEvent { stream, .. } => match stream_kind(stream) {
            "null" => "wait-null",
            "tail" => "wait-tail",
            "faf" => "wait-faf",
            _ => "wait-named",
        },
        Op::BulkLoad { .. } => "bulkld",
        Op::MbarWait { .. } => "mbarwait",
        Op::BulkStore { .. } => "bulkst",
        Op::BulkCommit => "bulkcommit",
        Op::BulkWait { read: false, .. } => "bulkwait",
        Op::BulkWait { read: true, .. } => "bulkwait-read",
        Op::FenceProxyAsync => "proxyfence",
    }
}

/// Whether an operation kind is a memory access (a load or a store): what a
/// test observes with, not a call that can stop a grid.
fn is_access(kind: &str) -> bool {
    matches!(kind, "ld" | "st")
}

impl Shape {
    pub fn of(l: &Litmus) -> Shape {
        let kernels = l
            .kernels
            .iter()
            .map(|k| KernelShape {
                launch: match k.launch {
                    KernelLaunch::Host { pdl: false } => "host",
                    KernelLaunch::Host { pdl: true } => "host-pdl",
                    KernelLaunch::Device => "device",
                },
                threads: k
                    .threads
                    .iter()
                    .map(|t| t.ops.iter().map(op_kind).collect())
                    .collect(),
            })
            .collect();
        Shape { kernels }
    }

    /// Whether `self` is contained in `other`: each kernel of `self` is a
    /// distinct kernel of `other` launched the same way, and each of its
    /// threads that makes a call (an operation other than a load or a
    /// store) a distinct thread of that kernel making the same calls in the
    /// same order, perhaps among others. Loads and stores are not needed:
    /// a test's accesses are how it observes, and a program that makes a
    /// known hang's calls in the same places is of that hang whatever it
    /// reads and writes.
    pub fn embeds(&self, other: &Shape) -> bool {
        let mut used = vec![false; other.kernels.len()];
        embed_kernels(&self.kernels, &other.kernels, &mut used)
    }
}

/// Backtracking: the first of `ks` placed in some unused kernel of `into`,
/// then the rest.
fn embed_kernels(ks: &[KernelShape], into: &[KernelShape], used: &mut [bool]) -> bool {
    let Some((k, rest)) = ks.split_first() else {
        return true;
    };
    for (i, o) in into.iter().enumerate() {
        if used[i] || o.launch != k.launch {
            continue;
        }
        let calls: Vec<Vec<&str>> = k
            .threads
            .iter()
            .map(|t| t.iter().copied().filter(|o| !is_access(o)).collect())
            .filter(|c: &Vec<&str>| !c.is_empty())
            .collect();
        let mut used_threads = vec![false; o.threads.len()];
        if !embed_threads(&calls, &o.threads, &mut used_threads) {
            continue;
        }
        used[i] = true;
        if embed_kernels(rest, into, used) {
            return true;
        }
        used[i] = false;
    }
    false
}

/// Backtracking over threads: each call sequence of `calls` a subsequence
/// of a distinct thread of `into`.
fn embed_threads(calls: &[Vec<&str>], into: &[Vec<&str>], used: &mut [bool]) -> bool {
    let Some((c, rest)) = calls.split_first() else {
        return true;
    };
    for (i, t) in into.iter().enumerate() {
        if used[i] || !is_subsequence(c, t) {
            continue;
        }
        used[i] = true;
        if embed_threads(rest, into, used) {
            return true;
        }
        used[i] = false;
    }
    false
}

fn is_subsequence(a: &[&str], b: &[&str]) -> bool {
    let mut it = b.iter();
    a.iter().all(|x| it.any(|y| y == x))
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kernels: Vec<String> = self
            .kernels
            .iter()
            .map(|k| {
                let threads: Vec<String> = k.threads.iter().map(|t| t.join(" ")).collect();
                format!("{}[{}]", k.launch, threads.join("|"))
            })
            .collect();
        f.write_str(&kernels.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(l: &Litmus) -> String {
        Shape::of(l).to_string()
    }

    /// A program of two kernels: a host kernel whose threads are `threads`
    /// (YAML lines) and a device kernel `k1` loading x.
    pub fn litmus(threads: &str, cond: &str, expect: &str) -> Litmus {
        let yaml = format!(
            "rules:\n  - id: cdp2.t.r\n    source: {{ seed: s.txt, section: \"1\" }}\n    quote: q\n    profile: cdp2\n    tests: [t]\ntests:\n  - name: t\n    kind: litmus\n    memory: {{ x: 0 }}\n    kernels:\n      - kernel: k0\n        launch: host\n        threads:\n{threads}      - kernel: k1\n        launch: device\n        threads:\n          t0: [load r0 x]\n    condition: {cond}\n    expect: {expect}\n"
        );
        gridcheck_spec::render::load_litmus(&yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"))
    }

    fn one(ops: &str) -> Shape {
        Shape::of(&litmus(
            &format!("          t0: [{ops}]\n"),
            "exists x == 0",
            "allowed",
        ))
    }

    #[test]
    fn shapes_forget_values_and_names() {
        let a = litmus(
            "          t0: [store x 1, launch k1 tail]\n",
            "exists x == 1",
            "allowed",
        );
        let b = litmus(
            "          t0: [store x 2, launch k1 tail]\n",
            "exists x == 0",
            "allowed",
        );
        assert_eq!(shape(&a), shape(&b));
        assert_eq!(shape(&a), "host[st launch-tail] device[ld]");
        let c = litmus(
            "          t0: [launch k1 tail, store x 2]\n",
            "exists x == 0",
            "allowed",
        );
        assert_ne!(shape(&a), shape(&c));
    }

    #[test]
    fn a_shape_embeds_where_its_calls_are_in_order_in_distinct_threads() {
        let known = one("trigger, store x 1, launch k1 tail");
        // Accesses are not needed; other calls may come between.
        assert!(known.embeds(&one("trigger, launch k1 tail")));
        assert!(known.embeds(&one("trigger, syncthreads, launch k1 tail, store x 2")));
        // The order of the calls is.
        assert!(!known.embeds(&one("launch k1 tail, trigger")));
        // Each thread of the known shape needs a thread of its own.
        let split = Shape::of(&litmus(
            "          t0: [record e1]\n          t1: [record e1 s1, launch k1]\n",
            "exists x == 0",
            "allowed",
        ));
        assert!(split.embeds(&Shape::of(&litmus(
            "          t0: [record e2 s2, launch k1]\n          t1: [record e1]\n",
            "exists x == 0",
            "allowed",
        ))));
        assert!(!split.embeds(&one("record e1, record e1 s1, launch k1")));
        // The kernel's launch kind must agree.
        let mut pdl = one("trigger, launch k1 tail");
        pdl.kernels[0].launch = "host-pdl";
        assert!(!known.embeds(&pdl));
        assert!(known.embeds(&known));
    }
}
