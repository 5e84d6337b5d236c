//! Small programs enumerated exhaustively, as herdtools' `diy` does rather
//! than drawn at random: every sequence of operations from an [`ALPHABET`],
//! up to a total length, over two threads in two kernels of one of the
//! [`Skeleton`]s (a host parent and the child grid one of its threads
//! launches into some stream at some point; a host primary and its PDL
//! secondary; a host kernel and the next one in its stream).
//!
//! Programs that differ only by the names of their locations are one
//! program (locations are numbered in order of first use), and every
//! program kept loads through the spec's own loader
//! ([`GenProgram::litmus`]).

use std::collections::BTreeSet;

use crate::{GenKernel, GenLaunch, GenOp, GenProgram, GenStream};

/// The operations a thread's sequence is drawn from: stores and loads of
/// two locations, the PDL trigger and wait.
pub const ALPHABET: [GenOp; 6] = [
    GenOp::Store(0, 1),
    GenOp::Store(1, 1),
    GenOp::Load(0),
    GenOp::Load(1),
    GenOp::Trigger,
    GenOp::GridSync,
];

/// The streams a parent's thread launches its child into.
pub const LAUNCH_STREAMS: [GenStream; 4] = [
    GenStream::Null,
    GenStream::Tail,
    GenStream::FireAndForget,
    GenStream::Named(1),
];

/// How the two kernels of a program are related.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skeleton {
    /// A host kernel whose thread launches the second kernel from the device
    /// into `stream`, after `pos` of its operations.
    Child { stream: GenStream, pos: usize },
    /// The second kernel launched by the host after the first, with the PDL
    /// attribute or without.
    Host { pdl: bool },
}

/// Every sequence over the alphabet of length `0..=max`.
fn sequences(max: usize) -> Vec<Vec<GenOp>> {
    let mut all = vec![Vec::new()];
    let mut last = vec![Vec::new()];
    for _ in 0..max {
        let mut next = Vec::new();
        for s in &last {
            for op in ALPHABET {
                let mut t: Vec<GenOp> = s.clone();
                t.push(op);
                next.push(t);
            }
        }
        all.extend(next.iter().cloned());
        last = next;
    }
    all
}

/// The program of two one-thread kernels.
pub fn program(skeleton: Skeleton, first: &[GenOp], second: &[GenOp]) -> GenProgram {
    let launch = match skeleton {
        Skeleton::Child { stream, pos } => GenLaunch::Device {
            parent: 0,
            thread: 0,
            pos,
            stream,
        },
        Skeleton::Host { pdl } => GenLaunch::Host { pdl },
    };
    let kernel = |launch, ops: &[GenOp]| GenKernel {
        launch,
        threads: vec![ops.to_vec()],
        blocks: vec![0],
        barrier: None,
    };
    let mut p = GenProgram {
        cdp1: false,
        locations: 2,
        kernels: vec![
            kernel(GenLaunch::Host { pdl: false }, first),
            kernel(launch, second),
        ],
        pool: None,
        sync_depth: None,
    };
    canonical_locations(&mut p);
    p
}

/// Numbers the locations in order of first use (so that programs equal up
/// to renaming are equal), and counts only those used (at least one).
fn canonical_locations(p: &mut GenProgram) {
    let mut order: Vec<u8> = Vec::new();
    for op in p.kernels.iter().flat_map(|k| k.threads.iter().flatten()) {
        if let GenOp::Store(l, _) | GenOp::Load(l) = op
            && !order.contains(l)
        {
            order.push(*l);
        }
    }
    let rename = |l: u8| order.iter().position(|&x| x == l).unwrap_or(0) as u8;
    for op in p
        .kernels
        .iter_mut()
        .flat_map(|k| k.threads.iter_mut().flatten())
    {
        match op {
            GenOp::Store(l, _) | GenOp::Load(l) => *l = rename(*l),
            _ => {}
        }
    }
    p.locations = order.len().max(1);
}

/// Every skeleton for a first thread of `len` operations.
fn skeletons(len: usize) -> Vec<Skeleton> {
    let mut v = vec![Skeleton::Host { pdl: false }, Skeleton::Host { pdl: true }];
    for stream in LAUNCH_STREAMS {
        for pos in 0..=len {
            v.push(Skeleton::Child { stream, pos });
        }
    }
    v
}

/// Every program of at most `max_ops` operations in all (launches not
/// counted), each once up to the names of its locations, in a fixed order;
/// the programs the loader rejects are left out.
pub fn programs(max_ops: usize) -> Vec<GenProgram> {
    let seqs = sequences(max_ops);
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for first in &seqs {
        for second in seqs.iter().filter(|s| first.len() + s.len() <= max_ops) {
            for sk in skeletons(first.len()) {
                let p = program(sk, first, second);
                // A Debug string is a total key for these plain values.
                if seen.insert(format!("{p:?}")) && p.litmus().is_ok() {
                    out.push(p);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_are_every_word_up_to_the_length() {
        let s = sequences(2);
        assert_eq!(s.len(), 1 + 6 + 36);
        let distinct: BTreeSet<String> = s.iter().map(|w| format!("{w:?}")).collect();
        assert_eq!(distinct.len(), s.len());
    }

    #[test]
    fn renamed_programs_are_one() {
        let a = program(
            Skeleton::Host { pdl: true },
            &[GenOp::Store(1, 1)],
            &[GenOp::Load(1)],
        );
        let b = program(
            Skeleton::Host { pdl: true },
            &[GenOp::Store(0, 1)],
            &[GenOp::Load(0)],
        );
        assert_eq!(a, b);
        assert_eq!(a.locations, 1);
    }

    #[test]
    fn the_enumeration_is_complete_deduplicated_and_loadable() {
        let ps = programs(2);
        let keys: BTreeSet<String> = ps.iter().map(|p| format!("{p:?}")).collect();
        assert_eq!(keys.len(), ps.len(), "no program twice");
        assert!(ps.iter().all(|p| p.litmus().is_ok()));
        // Message passing from a parent to its tail child, written by hand,
        // is among them.
        let mp = program(
            Skeleton::Child {
                stream: GenStream::Tail,
                pos: 1,
            },
            &[GenOp::Store(0, 1)],
            &[GenOp::Load(0)],
        );
        assert!(ps.contains(&mp));
        // And every skeleton with empty threads: two host skeletons and
        // four streams at position 0.
        let empty = ps
            .iter()
            .filter(|p| p.kernels.iter().all(|k| k.threads[0].is_empty()))
            .count();
        assert_eq!(empty, 6);
        // Larger bounds only add programs.
        assert!(programs(1).iter().all(|p| ps.contains(p)));
    }
}
