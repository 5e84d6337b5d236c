//! The first pass over a spec file, on the YAML parser's events, before serde
//! builds anything: it enforces [`MAX_NESTING`], [`MAX_NODES`] and
//! [`MAX_SCALAR_BYTES`] (counting what each alias repeats), stopping as soon
//! as one is passed, and finds where each rule and test starts, whatever
//! style it is written in, so that later errors point at the right lines.
//!
//! The pass keeps no copy of the events: its memory is the anchors' names
//! and sizes, the open collections and one entry per item.

use std::collections::HashMap;
use std::mem::MaybeUninit;
use std::ptr::NonNull;

use libyaml_rs as sys;

use crate::limits::{MAX_NESTING, MAX_NODES, MAX_SCALAR_BYTES};

/// A 1-based line and column.
pub type Pos = (usize, usize);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    Rule,
    Test,
}

/// One entry of the file's `rules` or `tests` list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub kind: ItemKind,
    /// Where the entry's node starts.
    pub line: usize,
    /// Its `id` (rule) or `name` (test), where that is a plain value.
    pub key: Option<String>,
}

#[derive(Debug, Default)]
pub struct Scan {
    /// Every item up to the end of the file or to a YAML syntax error (which
    /// the parse proper reports).
    pub items: Vec<Item>,
    /// Where a second document starts.
    pub second_document: Option<Pos>,
    /// Where the first document ends (where a second one, if any, begins).
    pub first_document_end: Option<Pos>,
    /// The first alias (`*name`).
    pub first_alias: Option<Pos>,
}

/// A bound the file passes, where it passes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub pos: Pos,
    pub message: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Root,
    List(ItemKind),
    Item(usize),
    Other,
}

struct Frame {
    map: bool,
    /// In a mapping: the next node is a key.
    key_turn: bool,
    /// In a mapping: the last key, when it was a scalar.
    key: Option<Vec<u8>>,
    role: Role,
    /// The anchor of this collection and the totals when it started.
    anchor: Option<(Vec<u8>, Totals)>,
}

#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct Totals {
    nodes: u64,
    bytes: u64,
}

/// The parser, freed on every path out.
struct Parser(NonNull<sys::yaml_parser_t>);

impl Parser {
    fn new(src: &[u8]) -> Option<Parser> {
        let boxed: Box<MaybeUninit<sys::yaml_parser_t>> = Box::new(MaybeUninit::uninit());
        let p = Box::into_raw(boxed).cast::<sys::yaml_parser_t>();
        // SAFETY: `p` points at memory for one parser; initialization
        // failure (out of memory) frees it again.
        unsafe {
            if sys::yaml_parser_initialize(p).fail {
                drop(Box::from_raw(p.cast::<MaybeUninit<sys::yaml_parser_t>>()));
                return None;
            }
            sys::yaml_parser_set_encoding(p, sys::YAML_UTF8_ENCODING);
            // The parser keeps this pointer: `src` outlives the parser (both
            // live in `scan`).
            sys::yaml_parser_set_input_string(p, src.as_ptr(), src.len() as u64);
        }
        NonNull::new(p).map(Parser)
    }
}

impl Drop for Parser {
    fn drop(&mut self) {
        // SAFETY: initialized in `new`, deleted once here.
        unsafe {
            sys::yaml_parser_delete(self.0.as_ptr());
            drop(Box::from_raw(
                self.0.as_ptr().cast::<MaybeUninit<sys::yaml_parser_t>>(),
            ));
        }
    }
}

/// One event, copied out of the parser's.
enum Ev {
    DocumentStart,
    DocumentEnd,
    Scalar {
        anchor: Option<Vec<u8>>,
        value: Vec<u8>,
    },
    Alias(Vec<u8>),
    Start {
        map: bool,
        anchor: Option<Vec<u8>>,
    },
    End,
    StreamEnd,
    Other,
}

/// # Safety
/// `p` is a NUL-terminated string or null.
unsafe fn c_bytes(p: *const u8) -> Option<Vec<u8>> {
    if p.is_null() {
        return None;
    }
    // SAFETY: per the contract.
    Some(
        unsafe { std::ffi::CStr::from_ptr(p.cast()) }
            .to_bytes()
            .to_vec(),
    )
}

fn next_event(parser: &mut Parser) -> Option<(Ev, Pos)> {
    let mut event = MaybeUninit::<sys::yaml_event_t>::uninit();
    // SAFETY: the parser is initialized; a successful parse fills `event`,
    // whose union member is the one its type names, and it is deleted once.
    unsafe {
        let p = parser.0.as_ptr();
        if (&(*p)).error != sys::YAML_NO_ERROR {
            return None;
        }
        let e = event.as_mut_ptr();
        if sys::yaml_parser_parse(p, e).fail {
            return None;
        }
        let mark = (*e).start_mark;
        let ev = match (*e).type_ {
            sys::YAML_DOCUMENT_START_EVENT => Ev::DocumentStart,
            sys::YAML_DOCUMENT_END_EVENT => Ev::DocumentEnd,
            sys::YAML_STREAM_END_EVENT => Ev::StreamEnd,
            sys::YAML_SCALAR_EVENT => {
                let s = (*e).data.scalar;
                Ev::Scalar {
                    anchor: c_bytes(s.anchor),
                    value: std::slice::from_raw_parts(s.value, s.length as usize).to_vec(),
                }
            }
            sys::YAML_ALIAS_EVENT => Ev::Alias(c_bytes((*e).data.alias.anchor).unwrap_or_default()),
            sys::YAML_SEQUENCE_START_EVENT => Ev::Start {
                map: false,
                anchor: c_bytes((*e).data.sequence_start.anchor),
            },
            sys::YAML_MAPPING_START_EVENT => Ev::Start {
                map: true,
                anchor: c_bytes((*e).data.mapping_start.anchor),
            },
            sys::YAML_SEQUENCE_END_EVENT | sys::YAML_MAPPING_END_EVENT => Ev::End,
            _ => Ev::Other,
        };
        sys::yaml_event_delete(e);
        Some((ev, (mark.line as usize + 1, mark.column as usize + 1)))
    }
}

/// Runs the first pass over `src`. A YAML syntax error ends the pass
/// quietly: the parse proper reports it, with its message.
pub fn scan(src: &str) -> Result<Scan, Refusal> {
    let mut out = Scan::default();
    let Some(mut parser) = Parser::new(src.as_bytes()) else {
        return Ok(out);
    };
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: HashMap<Vec<u8>, Totals> = HashMap::new();
    let mut total = Totals::default();
    let mut documents = 0;
    while let Some((ev, pos)) = next_event(&mut parser) {
        let refuse = |message: String| Refusal { pos, message };
        // The node this event starts, if any: its cost and whether it is a
        // scalar (with its value).
        let (cost, scalar) = match &ev {
            Ev::StreamEnd => break,
            Ev::DocumentStart => {
                documents += 1;
                if documents == 2 {
                    out.second_document = Some(pos);
                }
                continue;
            }
            Ev::DocumentEnd => {
                out.first_document_end.get_or_insert(pos);
                continue;
            }
            Ev::Other => continue,
            Ev::End => {
                let Some(frame) = stack.pop() else { continue };
                if let Some((name, at_start)) = frame.anchor {
                    anchors.insert(
                        name,
                        Totals {
                            nodes: total.nodes - at_start.nodes,
                            bytes: total.bytes - at_start.bytes,
                        },
                    );
                }
                continue;
            }
            Ev::Scalar { value, .. } => (
                Totals {
                    nodes: 1,
                    bytes: value.len() as u64,
                },
                Some(value.as_slice()),
            ),
            Ev::Start { .. } => (Totals { nodes: 1, bytes: 0 }, None),
            Ev::Alias(name) => {
                out.first_alias.get_or_insert(pos);
                let open = stack
                    .iter()
                    .any(|f| f.anchor.as_ref().is_some_and(|(n, _)| n == name));
                if open {
                    return Err(refuse(format!(
                        "alias `*{}` repeats a value that contains it",
                        String::from_utf8_lossy(name)
                    )));
                }
                // An unknown anchor is the parse proper's error.
                (anchors.get(name).copied().unwrap_or_default(), None)
            }
        };
        add_checked(&mut total, cost).map_err(refuse)?;
        let role = role_of(&mut stack, scalar, pos.0, &mut out);
        match ev {
            Ev::Start { map, anchor } => {
                if stack.len() >= MAX_NESTING {
                    return Err(refuse(format!(
                        "lists and mappings nest more than {MAX_NESTING} deep"
                    )));
                }
                stack.push(Frame {
                    map,
                    key_turn: true,
                    key: None,
                    role,
                    anchor: anchor.map(|a| {
                        (
                            a,
                            Totals {
                                nodes: total.nodes - 1,
                                bytes: total.bytes,
                            },
                        )
                    }),
                });
            }
            Ev::Scalar {
                anchor: Some(a), ..
            } => {
                anchors.insert(a, cost);
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Adds a node's cost to the file's totals: more values or text than the
/// limits, counting what aliases repeat, is refused.
fn add_checked(total: &mut Totals, cost: Totals) -> Result<(), String> {
    total.nodes = total.nodes.saturating_add(cost.nodes);
    total.bytes = total.bytes.saturating_add(cost.bytes);
    if total.nodes > MAX_NODES {
        return Err(format!(
            "the file holds more than {MAX_NODES} YAML values, counting what aliases repeat"
        ));
    }
    if total.bytes > MAX_SCALAR_BYTES {
        return Err(format!(
            "the file holds more than {} MiB of text, counting what aliases repeat",
            MAX_SCALAR_BYTES >> 20
        ));
    }
    Ok(())
}

/// Where a node sits under the top of `stack`: a key, a value (an item's
/// `id` or `name` sets its key), a list entry (a rule or a test starts at
/// `line`).
fn role_of(stack: &mut [Frame], scalar: Option<&[u8]>, line: usize, out: &mut Scan) -> Role {
    match stack.last_mut() {
        None => Role::Root,
        Some(parent) if parent.map => {
            if parent.key_turn {
                parent.key_turn = false;
                parent.key = scalar.map(<[u8]>::to_vec);
                Role::Other
            } else {
                parent.key_turn = true;
                let key = parent.key.as_deref();
                match (parent.role, key) {
                    (Role::Root, Some(b"rules")) => Role::List(ItemKind::Rule),
                    (Role::Root, Some(b"tests")) => Role::List(ItemKind::Test),
                    (Role::Item(i), Some(k)) => {
                        let item = &mut out.items[i];
                        let named = match item.kind {
                            ItemKind::Rule => k == b"id",
                            ItemKind::Test => k == b"name",
                        };
                        if named && let Some(v) = scalar {
                            item.key = Some(String::from_utf8_lossy(v).into_owned());
                        }
                        Role::Other
                    }
                    _ => Role::Other,
                }
            }
        }
        Some(parent) => match parent.role {
            Role::List(kind) => {
                out.items.push(Item {
                    kind,
                    line,
                    key: None,
                });
                Role::Item(out.items.len() - 1)
            }
            _ => Role::Other,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_in_block_and_flow_style() {
        let src = "rules:\n  - id: a.b.c\n    tests: [x]\n  - {id: a.b.d, tests: [y]}\n  - id: a.b.e\ntests:\n- name: x\n  kind: litmus\n- {kind: compile, name: y}\n";
        let s = scan(src).unwrap();
        let got: Vec<(ItemKind, usize, Option<&str>)> = s
            .items
            .iter()
            .map(|i| (i.kind, i.line, i.key.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                (ItemKind::Rule, 2, Some("a.b.c")),
                (ItemKind::Rule, 4, Some("a.b.d")),
                (ItemKind::Rule, 5, Some("a.b.e")),
                (ItemKind::Test, 7, Some("x")),
                (ItemKind::Test, 9, Some("y")),
            ]
        );
        assert_eq!(s.second_document, None);
    }

    #[test]
    fn deep_nesting_stops_at_the_limit() {
        let src = format!("a: {}{}", "[".repeat(100_000), "]".repeat(100_000));
        let t = std::time::Instant::now();
        let r = scan(&src).unwrap_err();
        assert!(t.elapsed().as_secs_f64() < 0.5, "{:?}", t.elapsed());
        assert!(r.message.contains("nest more than"), "{}", r.message);
        assert_eq!(r.pos.0, 1);
        // The same depth as block mappings, one per line.
        let block: String = (0..100).map(|i| format!("{}k:\n", " ".repeat(i))).collect();
        assert!(scan(&block).unwrap_err().message.contains("nest more than"));
    }

    #[test]
    fn alias_expansion_is_counted() {
        let big = "x".repeat(64 * 1024);
        let src = format!("a: [&a {big}{}]\n", ", *a".repeat(300));
        let r = scan(&src).unwrap_err();
        assert!(r.message.contains("MiB of text"), "{}", r.message);
        // A billion laughs: each level doubles the one before.
        let mut laughs = String::from("l0: &l0 [lol]\n");
        for i in 1..40 {
            laughs += &format!("l{i}: &l{i} [*l{}, *l{}]\n", i - 1, i - 1);
        }
        let r = scan(&laughs).unwrap_err();
        assert!(r.message.contains("YAML values"), "{}", r.message);
        assert!(r.pos.0 < 40, "{r:?}");
        // A handful of small aliases is fine.
        let ok = scan("a: &a [1, 2]\nb: *a\nc: *a\n").unwrap();
        assert_eq!(ok.first_alias, Some((2, 4)));
    }

    #[test]
    fn a_second_document_is_located() {
        let s = scan("a: 1\n---\nb: 2\n").unwrap();
        assert_eq!(s.second_document, Some((2, 1)));
    }
}
