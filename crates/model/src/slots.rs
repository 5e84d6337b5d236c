//! The slot layout of a block's stream state (see [`crate::stream`]),
//! computed once per kernel when a test is compiled: which slot of the
//! word each in-order stream, the tail stream and each event takes, and
//! how many launches and records each (block, stream) gets.

use std::collections::BTreeMap;

use gridcheck_spec::StreamRef;

use crate::error::{ErrorKind, ModelError};

/// The slots of a kernel's blocks' stream state (compiled once for the
/// kernel; each block has its own word of them): its in-order streams (NULL
/// first, then named streams by first use), its tail stream, then its
/// events. Each slot holds a set of grids (a bit per kernel). A named stream
/// or an event is used by one block only (the spec loader checks it), so
/// sharing the slot numbers between blocks shares nothing else.
#[derive(Default)]
pub(crate) struct Slots {
    streams: BTreeMap<String, usize>,
    events: BTreeMap<String, usize>,
    /// Slots allocated so far.
    pub next: usize,
    /// Launches per (block, stream slot).
    pub launches: BTreeMap<(usize, usize), usize>,
    /// (block, stream slot) of every `record`.
    pub recorded: Vec<(usize, usize)>,
    pub has_events: bool,
}

impl Slots {
    pub(crate) fn stream(&mut self, s: &StreamRef, what: &str) -> Result<usize, ModelError> {
        let key = match s {
            StreamRef::Null => "null".to_string(),
            StreamRef::Tail => "tail".to_string(),
            StreamRef::Named(n) => format!("named {n}"),
            StreamRef::FireAndForget => {
                return Err(err(format!(
                    "`{what}`: events on the fire-and-forget stream are not modeled"
                )));
            }
            #[allow(unreachable_patterns)]
            _ => return Err(err(format!("`{what}`: this stream is not modeled"))),
        };
        if key == "tail" && what != "launch" {
            return Err(err(format!(
                "`{what}`: events on the tail stream are not modeled"
            )));
        }
        let next = &mut self.next;
        Ok(*self.streams.entry(key).or_insert_with(|| {
            *next += 1;
            *next - 1
        }))
    }

    pub(crate) fn event(&mut self, e: &str) -> usize {
        self.has_events = true;
        let next = &mut self.next;
        *self.events.entry(e.to_string()).or_insert_with(|| {
            *next += 1;
            *next - 1
        })
    }
}

/// Every error here is a construct the model does not define.
fn err(msg: impl Into<String>) -> ModelError {
    ModelError::new(ErrorKind::Unsupported, msg)
}
