//! A fact's shape as written: a predicate over a litmus program, in the
//! operation vocabulary of the spec's litmus DSL (`spec/README.md`), parsed
//! from the lines of a fact's `shape` (`conformance/facts/README.md` is the
//! reference). One line a kernel or a thread:
//!
//! ```text
//! P: host, launch C tail       # a host-launched kernel P; some thread of P tail-launches C
//! P.a: trigger, store x        # a thread a of P triggers, then (later) stores to x
//! C: device                    # C is launched from the device
//! C.b: load x                  # a thread of C loads x
//! ```
//!
//! Kernel, thread, location, stream, event and mbarrier names are
//! variables bound by the match (distinct variables of one kind bind
//! distinct names; `_` matches anything and binds nothing); values,
//! registers and counts left out match any. `!op` is an operation that
//! must not appear: on a kernel's line, in no thread of the kernel; among a
//! thread's items, not between the operations matched before and after it
//! (first or last: from the thread's start or to its end). `adjacent`
//! after a thread (`P.a adjacent: ...`) asks its operations to follow one
//! another with nothing between.

use std::fmt;

/// How the kernel a pattern names is launched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaunchPat {
    /// `host`: from the host without the PDL attribute.
    Host,
    /// `host-pdl`: from the host with it (a PDL secondary).
    HostPdl,
    /// `device`: by a `launch` operation, into any stream.
    Device,
    /// `tail`: by a `launch` operation into the tail stream.
    Tail,
    /// `any`.
    Any,
}

/// A stream as an operation names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamPat {
    /// Left out, or `null`: the block's NULL stream (as in the DSL).
    Null,
    Tail,
    FireAndForget,
    /// A named stream, bound to a variable (`_`: any named stream).
    Named(Name),
    /// `_` in a stream's place: any stream.
    Any,
}

/// A variable, or `_`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Name {
    Var(String),
    Any,
}

/// One operation of a pattern: the DSL's operation with its names as
/// variables and its values optional.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpPat {
    Store {
        loc: Name,
        value: Option<u32>,
    },
    Load {
        loc: Name,
    },
    SyncThreads,
    Launch {
        kernel: Name,
        stream: StreamPat,
    },
    Trigger,
    GridSync,
    DeviceSync,
    GetLastError,
    PeekAtLastError,
    Record {
        event: Name,
        stream: StreamPat,
    },
    WaitEvent {
        stream: StreamPat,
        event: Name,
    },
    BulkLoad {
        dst: Name,
        src: Name,
        bar: Name,
    },
    MbarWait {
        bar: Name,
    },
    BulkStore {
        dst: Name,
        src: Name,
    },
    BulkCommit,
    /// `bulkwait` (any), `bulkwait read`, `bulkwait [read] n`.
    BulkWait {
        read: Option<bool>,
        pending: Option<u32>,
    },
    FenceProxyAsync,
}

/// An item of a line: an operation that must appear, or must not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub not: bool,
    pub op: OpPat,
}

/// A kernel of the pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelPat {
    pub var: String,
    pub launch: LaunchPat,
    /// `after P`: the host-launched kernel right before this one is `P`'s
    /// (a PDL secondary's primary).
    pub after: Option<String>,
    /// Operations some thread of the kernel makes (`op`) or none makes
    /// (`!op`).
    pub items: Vec<Item>,
}

/// A thread of the pattern: its kernel's variable and its items in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadPat {
    pub kernel: String,
    pub var: String,
    pub adjacent: bool,
    pub items: Vec<Item>,
}

/// A parsed shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    pub kernels: Vec<KernelPat>,
    pub threads: Vec<ThreadPat>,
    /// The text it was parsed from, trimmed: how messages show it.
    pub text: String,
}

/// At most this many kernels, threads, and items a line: a pattern's
/// search is exponential in its size, so its size is bounded.
pub const MAX_KERNELS: usize = 8;
pub const MAX_THREADS: usize = 12;
pub const MAX_ITEMS: usize = 16;

fn name(what: &str, w: Option<&str>) -> Result<Name, String> {
    let w = w.ok_or_else(|| format!("missing {what}"))?;
    if w == "_" {
        return Ok(Name::Any);
    }
    if is_ident(w) {
        Ok(Name::Var(w.to_string()))
    } else {
        Err(format!("`{w}` is not a {what} variable or `_`"))
    }
}

fn is_ident(w: &str) -> bool {
    let mut c = w.chars();
    c.next().is_some_and(|c| c.is_ascii_alphabetic())
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn stream(w: Option<&str>) -> Result<StreamPat, String> {
    Ok(match w {
        None | Some("null") => StreamPat::Null,
        Some("tail") => StreamPat::Tail,
        Some("fire-and-forget") => StreamPat::FireAndForget,
        Some("_") => StreamPat::Any,
        Some("named") => StreamPat::Named(Name::Any),
        Some(s) => StreamPat::Named(name("stream", Some(s))?),
    })
}

fn number(w: &str) -> Result<u32, String> {
    w.parse()
        .map_err(|_| format!("`{w}` is not a 32-bit unsigned number"))
}

/// One operation pattern (`store x`, `launch C tail`, `!gridsync` without
/// its `!`).
pub fn parse_op(text: &str) -> Result<OpPat, String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let verb = *words.first().ok_or("empty operation")?;
    let arg = |i: usize| words.get(i).copied();
    let (op, used) = match verb {
        "store" => {
            let value = arg(2).map(number).transpose()?;
            (
                OpPat::Store {
                    loc: name("location", arg(1))?,
                    value,
                },
                3,
            )
        }
        // `load x`, or the DSL's `load r0 x` (the register is not matched).
        "load" if words.len() == 3 => (
            OpPat::Load {
                loc: name("location", arg(2))?,
            },
            3,
        ),
        "load" => (
            OpPat::Load {
                loc: name("location", arg(1))?,
            },
            2,
        ),
        "syncthreads" => (OpPat::SyncThreads, 1),
        "trigger" => (OpPat::Trigger, 1),
        "gridsync" => (OpPat::GridSync, 1),
        "devicesync" => (OpPat::DeviceSync, 2),
        "geterror" => (OpPat::GetLastError, 2),
        "peekerror" => (OpPat::PeekAtLastError, 2),
        "launch" => (
            OpPat::Launch {
                kernel: name("kernel", arg(1))?,
                stream: stream(arg(2))?,
            },
            3,
        ),
        "record" => (
            OpPat::Record {
                event: name("event", arg(1))?,
                stream: stream(arg(2))?,
            },
            3,
        ),
        "waitevent" => (
            OpPat::WaitEvent {
                stream: stream(Some(
                    arg(1).ok_or("missing stream: `waitevent <stream> <event>`")?,
                ))?,
                event: name("event", arg(2))?,
            },
            3,
        ),
        "bulkload" => (
            OpPat::BulkLoad {
                dst: name("shared location", arg(1))?,
                src: name("location", arg(2))?,
                bar: name("mbarrier", arg(3))?,
            },
            4,
        ),
        "mbarwait" => (
            OpPat::MbarWait {
                bar: name("mbarrier", arg(1))?,
            },
            2,
        ),
        "bulkstore" => (
            OpPat::BulkStore {
                dst: name("location", arg(1))?,
                src: name("shared location", arg(2))?,
            },
            3,
        ),
        "bulkcommit" => (OpPat::BulkCommit, 1),
        "bulkwait" => {
            let read = arg(1) == Some("read");
            let n = arg(if read { 2 } else { 1 }).map(number).transpose()?;
            let read = match (read, n) {
                (true, _) => Some(true),
                (false, Some(_)) => Some(false),
                (false, None) => None,
            };
            let used = 1 + usize::from(read == Some(true)) + usize::from(n.is_some());
            (OpPat::BulkWait { read, pending: n }, used)
        }
        "fence.proxy.async" => (OpPat::FenceProxyAsync, 1),
        other => {
            return Err(format!(
                "unknown operation `{other}`: expected one of the litmus DSL's (store, load, \
                 syncthreads, launch, trigger, gridsync, devicesync, record, waitevent, geterror, \
                 peekerror, bulkload, mbarwait, bulkstore, bulkcommit, bulkwait, fence.proxy.async)"
            ));
        }
    };
    if let Some(extra) = words.get(used) {
        return Err(format!("unexpected `{extra}` in `{text}`"));
    }
    Ok(op)
}

fn items(text: &str) -> Result<Vec<Item>, String> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err("an empty operation between commas".into());
        }
        let (not, op) = match part.strip_prefix('!') {
            Some(rest) => (true, rest.trim()),
            None => (false, part),
        };
        out.push(Item {
            not,
            op: parse_op(op).map_err(|e| format!("`{part}`: {e}"))?,
        });
    }
    if out.len() > MAX_ITEMS {
        return Err(format!("more than {MAX_ITEMS} operations on one line"));
    }
    Ok(out)
}

fn launch(w: &str) -> Result<LaunchPat, String> {
    Ok(match w {
        "host" => LaunchPat::Host,
        "host-pdl" => LaunchPat::HostPdl,
        "device" => LaunchPat::Device,
        "tail" => LaunchPat::Tail,
        "any" => LaunchPat::Any,
        _ => {
            return Err(format!(
                "`{w}` is not a launch: expected host, host-pdl, device, tail or any"
            ));
        }
    })
}

/// `P: host after Q, item, ...`, after the `P:`.
fn kernel_line(var: &str, rest: &str) -> Result<KernelPat, String> {
    let (head, tail) = rest.split_once(',').unwrap_or((rest, ""));
    let words: Vec<&str> = head.split_whitespace().collect();
    let after = match words.as_slice() {
        [_] => None,
        [_, "after", p] if is_ident(p) => Some(p.to_string()),
        _ => {
            return Err(format!(
                "`{}`: expected `<launch>` or `<launch> after <kernel>`",
                head.trim()
            ));
        }
    };
    let launch = launch(words.first().ok_or("missing launch")?)?;
    if after.is_some() && !matches!(launch, LaunchPat::Host | LaunchPat::HostPdl) {
        return Err("`after` orders host-launched kernels only".into());
    }
    let items = if tail.trim().is_empty() {
        Vec::new()
    } else {
        items(tail)?
    };
    Ok(KernelPat {
        var: var.to_string(),
        launch,
        after,
        items,
    })
}

impl Pattern {
    /// A shape's text; an error names the line (1-based, within the text).
    pub fn parse(text: &str) -> Result<Pattern, String> {
        let mut p = Pattern {
            kernels: Vec::new(),
            threads: Vec::new(),
            text: text.trim().to_string(),
        };
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            p.line(line).map_err(|e| format!("line {}: {e}", i + 1))?;
        }
        p.check()?;
        Ok(p)
    }

    fn line(&mut self, line: &str) -> Result<(), String> {
        let (head, rest) = line
            .split_once(':')
            .ok_or("expected `<kernel>: <launch>...` or `<kernel>.<thread>: <operations>`")?;
        let head = head.trim();
        let mut words = head.split_whitespace();
        let who = words
            .next()
            .ok_or("missing a kernel or thread before `:`")?;
        let adjacent = match words.next() {
            None => false,
            Some("adjacent") => true,
            Some(w) => return Err(format!("`{w}`: expected `adjacent` or `:`")),
        };
        match who.split_once('.') {
            Some((k, t)) => {
                if !is_ident(k) || !is_ident(t) {
                    return Err(format!("`{who}` is not `<kernel>.<thread>`"));
                }
                if self.threads.iter().any(|x| x.kernel == k && x.var == t) {
                    return Err(format!("thread `{who}` is given twice"));
                }
                let items = items(rest)?;
                if !items.iter().any(|i| !i.not) {
                    return Err(format!("thread `{who}` has no operation it must make"));
                }
                self.threads.push(ThreadPat {
                    kernel: k.to_string(),
                    var: t.to_string(),
                    adjacent,
                    items,
                });
            }
            None => {
                if adjacent || !is_ident(who) {
                    return Err(format!("`{head}` is not a kernel variable"));
                }
                if self.kernels.iter().any(|k| k.var == who) {
                    return Err(format!("kernel `{who}` is given twice"));
                }
                self.kernels.push(kernel_line(who, rest)?);
            }
        }
        Ok(())
    }

    fn check(&self) -> Result<(), String> {
        if self.kernels.len() > MAX_KERNELS || self.threads.len() > MAX_THREADS {
            return Err(format!(
                "at most {MAX_KERNELS} kernels and {MAX_THREADS} threads"
            ));
        }
        for t in &self.threads {
            if !self.kernels.iter().any(|k| k.var == t.kernel) {
                return Err(format!(
                    "thread `{}.{}` of a kernel not given (`{}: <launch>`)",
                    t.kernel, t.var, t.kernel
                ));
            }
        }
        if self.kernels.is_empty() {
            return Err("a shape names at least one kernel (`P: host`)".into());
        }
        for k in &self.kernels {
            if let Some(a) = &k.after
                && !self.kernels.iter().any(|p| {
                    &p.var == a && matches!(p.launch, LaunchPat::Host | LaunchPat::HostPdl)
                })
            {
                return Err(format!(
                    "kernel `{}` is after `{a}`, not a host-launched kernel of the shape",
                    k.var
                ));
            }
        }
        Ok(())
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<&str> = self
            .text
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .filter(|l| !l.is_empty())
            .collect();
        f.write_str(&lines.join("; "))
    }
}
