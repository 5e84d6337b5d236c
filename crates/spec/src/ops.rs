//! The operation syntax of litmus threads: one short string per operation.
//!
//! ```text
//! store <loc> <value>      plain store (to every word of a tile's range)
//! load <reg> <loc>         plain load (of a tile's range: a tile register)
//! syncthreads              __syncthreads()
//! launch <kernel> [stream] device-side launch; stream: null (default), tail,
//!                          fire-and-forget, or a name (a non-blocking stream of the block)
//! record <event> [stream]  cudaEventRecord (stream default null)
//! waitevent <stream> <ev>  cudaStreamWaitEvent
//! trigger                  cudaTriggerProgrammaticLaunchCompletion()
//! gridsync                 cudaGridDependencySynchronize()
//! devicesync [reg]         device-side cudaDeviceSynchronize() (CDP1); its
//!                          cudaError_t into reg when given
//! geterror <reg>           cudaGetLastError() into reg (resets the thread's last error)
//! peekerror <reg>          cudaPeekAtLastError() into reg (does not reset it)
//! bulkload <s> <x> <bar>   async-proxy copy of global x into shared s, tracked by mbarrier bar
//! mbarwait <bar>           wait until the bulk load that mbarrier bar tracks completed
//! bulkstore <x> <s>        async-proxy copy of shared s into global x (bulk async-group)
//! bulkcommit               cp.async.bulk.commit_group
//! bulkwait [read] <n>      cp.async.bulk.wait_group[.read] n
//! fence.proxy.async        proxy fence between the generic and the async proxy
//! ```
//!
//! A location operand `<loc>`, `<x>` or `<s>` is a word location, or words
//! of a tile: `x[5]`, `x[0..1024]` ([`crate::tile`]).

use crate::ast::{Op, StreamRef};

/// The most bulk async-groups `bulkwait` may leave pending.
pub const MAX_PENDING_GROUPS: u32 = 63;

pub use crate::place::is_ident;

/// Whether `s` is a valid test or shape name: lowercase words, digits and
/// `-`, a letter first.
pub fn is_name(s: &str) -> bool {
    s.chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && s.starts_with(|c: char| c.is_ascii_lowercase())
}

fn ident<'a>(what: &str, s: Option<&'a str>) -> Result<&'a str, String> {
    match s {
        Some(s) if is_ident(s) => Ok(s),
        Some(s) => Err(format!(
            "`{s}` is not a valid {what} name (letters, digits, `_`)"
        )),
        None => Err(format!("missing {what}")),
    }
}

/// A location operand: a word location `x`, or words of a tile, `x[5]`
/// or `x[0..1024]` (see [`crate::place::Place`]).
fn place(what: &str, s: Option<&str>) -> Result<String, String> {
    match s {
        Some(s) => crate::place::Place::parse(s).map(|_| s.to_string()),
        None => Err(format!("missing {what}")),
    }
}

fn stream(word: Option<&str>) -> Result<StreamRef, String> {
    Ok(match word {
        None | Some("null") => StreamRef::Null,
        Some("tail") => StreamRef::Tail,
        Some("fire-and-forget") => StreamRef::FireAndForget,
        Some(s) if is_ident(s) => StreamRef::Named(s.to_string()),
        Some(s) => {
            return Err(format!(
                "`{s}` is not a stream: expected null, tail, fire-and-forget or a stream name"
            ));
        }
    })
}

/// `bulkwait [read] <n>`, after the verb.
fn bulk_wait<'a>(words: &mut impl Iterator<Item = &'a str>) -> Result<Op, String> {
    let mut w = words.next();
    let read = w == Some("read");
    if read {
        w = words.next();
    }
    let n = w.ok_or("missing count: `bulkwait [read] <n>`")?;
    let pending: u32 = n
        .parse()
        .ok()
        .filter(|p| *p <= MAX_PENDING_GROUPS)
        .ok_or_else(|| {
            format!(
                "`{n}` is not a number of bulk async-groups left pending (0 to {MAX_PENDING_GROUPS})"
            )
        })?;
    Ok(Op::BulkWait { read, pending })
}

pub fn parse_op(text: &str) -> Result<Op, String> {
    let mut words = text.split_whitespace();
    let verb = words.next().ok_or("empty operation")?;
    let op = match verb {
        "store" => {
            let loc = place("location", words.next())?;
            let v = words.next().ok_or("missing value: `store <loc> <value>`")?;
            let value = v
                .parse()
                .map_err(|_| format!("`{v}` is not a 32-bit unsigned value"))?;
            Op::Store { loc, value }
        }
        "load" => {
            let reg = ident("register", words.next())?.to_string();
            let loc = place("location", words.next())?;
            Op::Load { reg, loc }
        }
        "syncthreads" => Op::SyncThreads,
        "launch" => {
            let kernel = ident("kernel", words.next())?.to_string();
            let stream = stream(words.next())?;
            Op::Launch { kernel, stream }
        }
        "record" => {
            let event = ident("event", words.next())?.to_string();
            let stream = stream(words.next())?;
            Op::EventRecord { event, stream }
        }
        "waitevent" => {
            let stream = stream(Some(
                words
                    .next()
                    .ok_or("missing stream: `waitevent <stream> <event>`")?,
            ))?;
            let event = ident("event", words.next())?.to_string();
            Op::StreamWaitEvent { stream, event }
        }
        "trigger" => Op::Trigger,
        "gridsync" => Op::GridDependencySync,
        "devicesync" => Op::DeviceSynchronize {
            reg: match words.next() {
                None => None,
                r => Some(ident("register", r)?.to_string()),
            },
        },
        "geterror" => Op::GetLastError {
            reg: ident("register", words.next())?.to_string(),
        },
        "peekerror" => Op::PeekAtLastError {
            reg: ident("register", words.next())?.to_string(),
        },
        "bulkload" => Op::BulkLoad {
            dst: place("shared location", words.next())?,
            src: place("location", words.next())?,
            bar: ident("mbarrier", words.next())?.to_string(),
        },
        "mbarwait" => Op::MbarWait {
            bar: ident("mbarrier", words.next())?.to_string(),
        },
        "bulkstore" => Op::BulkStore {
            dst: place("location", words.next())?,
            src: place("shared location", words.next())?,
        },
        "bulkcommit" => Op::BulkCommit,
        "bulkwait" => bulk_wait(&mut words)?,
        "fence.proxy.async" => Op::FenceProxyAsync,
        other => {
            return Err(format!(
                "unknown operation `{other}`: expected store, load, syncthreads, launch, \
                 trigger, gridsync, devicesync, record, waitevent, geterror, peekerror, \
                 bulkload, mbarwait, bulkstore, bulkcommit, bulkwait or fence.proxy.async"
            ));
        }
    };
    if let Some(extra) = words.next() {
        return Err(format!("unexpected `{extra}` after `{op}`"));
    }
    Ok(op)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_op_round_trips_through_display() {
        for s in [
            "store x 1",
            "load r0 x",
            "syncthreads",
            "launch child",
            "launch child tail",
            "launch child fire-and-forget",
            "trigger",
            "gridsync",
            "devicesync",
            "devicesync e0",
            "geterror e0",
            "peekerror e1",
            "launch child s1",
            "record e1",
            "record e1 s1",
            "waitevent s2 e1",
            "waitevent null e1",
            "bulkload s x bar",
            "mbarwait bar",
            "bulkstore x s",
            "bulkcommit",
            "bulkwait 0",
            "bulkwait read 2",
            "fence.proxy.async",
            "store x[0..1024] 1",
            "load r0 x[5]",
            "bulkload s[0..512] x[512..1024] bar",
            "bulkstore x[0..4] s[4..8]",
        ] {
            assert_eq!(parse_op(s).unwrap().to_string(), s);
        }
        assert_eq!(parse_op("launch c null").unwrap().to_string(), "launch c");
    }

    #[test]
    fn bad_ops_say_why() {
        assert!(
            parse_op("stor x 1")
                .unwrap_err()
                .contains("unknown operation")
        );
        assert!(parse_op("store x").unwrap_err().contains("missing value"));
        assert!(parse_op("store x -1").unwrap_err().contains("unsigned"));
        assert!(
            parse_op("load r0")
                .unwrap_err()
                .contains("missing location")
        );
        assert!(
            parse_op("launch c 1s")
                .unwrap_err()
                .contains("is not a stream")
        );
        assert!(
            parse_op("waitevent")
                .unwrap_err()
                .contains("missing stream")
        );
        assert!(
            parse_op("record 1e")
                .unwrap_err()
                .contains("not a valid event")
        );
        assert!(
            parse_op("trigger now")
                .unwrap_err()
                .contains("unexpected `now`")
        );
        assert!(
            parse_op("geterror")
                .unwrap_err()
                .contains("missing register")
        );
        assert!(
            parse_op("peekerror 1e")
                .unwrap_err()
                .contains("not a valid register")
        );
        assert!(
            parse_op("devicesync e0 e1")
                .unwrap_err()
                .contains("unexpected `e1`")
        );
        assert!(
            parse_op("load 0r x")
                .unwrap_err()
                .contains("not a valid register")
        );
        assert!(
            parse_op("bulkload s x")
                .unwrap_err()
                .contains("missing mbarrier")
        );
        assert!(
            parse_op("bulkwait read")
                .unwrap_err()
                .contains("missing count")
        );
        assert!(parse_op("bulkwait 64").unwrap_err().contains("0 to 63"));
        assert!(
            parse_op("bulkwait write 0")
                .unwrap_err()
                .contains("`write` is not a number")
        );
        assert!(
            parse_op("store x[8..8] 1")
                .unwrap_err()
                .contains("empty range")
        );
        assert!(
            parse_op("load r0 x[0..n]")
                .unwrap_err()
                .contains("not a word index")
        );
        assert!(
            parse_op("store x[0..4 1")
                .unwrap_err()
                .contains("ending with `]`")
        );
        assert!(
            parse_op("fence.proxy.async now")
                .unwrap_err()
                .contains("unexpected `now`")
        );
    }
}
