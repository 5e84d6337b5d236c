//! Litmus thread names: `tN`, thread N of a kernel's one block, and `bM.tN`,
//! thread N of block M of a kernel of several blocks. Each index is written
//! one way only (`t1`, never `t01`): two spellings would be two threads to
//! the models and one to the GPU.

use crate::limits::{MAX_BLOCK_INDEX, MAX_THREAD_INDEX};

/// A thread name taken apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadName {
    /// `Some(M)` for `bM.tN`, `None` for `tN`.
    pub block: Option<usize>,
    pub index: usize,
}

/// A decimal index without leading zeros, at most 4 digits.
fn number(s: &str) -> Option<usize> {
    let ok = !s.is_empty()
        && s.len() < 5
        && s.chars().all(|c| c.is_ascii_digit())
        && (s == "0" || !s.starts_with('0'));
    ok.then(|| s.parse().ok()).flatten()
}

/// `tN` or `bM.tN`, or `None` when the name has neither form (indices are
/// not checked against their bounds: see [`check`]).
pub fn parse(name: &str) -> Option<ThreadName> {
    let (block, thread) = match name.split_once('.') {
        Some((b, t)) => (Some(number(b.strip_prefix('b')?)?), t),
        None => (None, name),
    };
    Some(ThreadName {
        block,
        index: number(thread.strip_prefix('t')?)?,
    })
}

/// The name of thread `index` of block `block` (`None`: a kernel of one block).
pub fn format(block: Option<usize>, index: usize) -> String {
    match block {
        Some(b) => format!("b{b}.t{index}"),
        None => format!("t{index}"),
    }
}

/// [`parse`], with the bounds: the message says what is wrong.
pub fn check(name: &str) -> Result<ThreadName, String> {
    let n = parse(name).ok_or_else(|| {
        format!(
            "thread `{name}` is not named `t<index>` or `b<block>.t<index>` (indices without \
             leading zeros)"
        )
    })?;
    if n.index > MAX_THREAD_INDEX {
        return Err(format!(
            "thread `{name}`: the highest thread is t{MAX_THREAD_INDEX} (thread tN runs as \
             threadIdx.x == N*32, in a block of at most 1024 threads)"
        ));
    }
    if n.block.is_some_and(|b| b > MAX_BLOCK_INDEX) {
        return Err(format!(
            "thread `{name}`: the highest block is b{MAX_BLOCK_INDEX} (each block of a \
             kernel is one more block per instance on the GPU)"
        ));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_one_spelling_only() {
        for (name, block, index) in [("t0", None, 0), ("t29", None, 29), ("b3.t1", Some(3), 1)] {
            let n = parse(name).expect(name);
            assert_eq!((n.block, n.index), (block, index));
            assert_eq!(format(n.block, n.index), name);
        }
        for bad in [
            "t01", "b01.t0", "b1t0", "b1.", ".t0", "t", "b.t0", "x1", "b1.t0.t1", "t-1",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        assert!(check("t30").unwrap_err().contains("highest thread is t29"));
        assert!(
            check("b16.t0")
                .unwrap_err()
                .contains("highest block is b15")
        );
        assert!(check("b15.t29").is_ok());
    }
}
