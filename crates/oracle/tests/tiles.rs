//! Tiles against words, on both oracles: every litmus test of the spec
//! that uses the asynchronous proxy, rewritten over tiles of one word,
//! reaches exactly the one-word test's states and verdict (the tile model
//! at size 1 is the word model: `crates/spec/src/tile.rs`); and at four
//! words, where a read may see old and new words at once, the same
//! comparison finds the torn states a word cannot show (so it can fail),
//! while each test's verdict, read as "any word", stays the one-word
//! test's.

use std::collections::BTreeSet;
use std::path::Path;

use gridcheck_oracle::{Agreement, CrossCheck, cross_check};
use gridcheck_spec::{Expr, Litmus, Op, Profile, State, TestBody, load_dir, render};

/// The litmus tests of the spec that use the asynchronous proxy (bulk
/// copies, shared memory), by name.
fn async_proxy_tests() -> Vec<(String, Litmus)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec");
    let spec = load_dir(&dir, None).unwrap_or_else(|e| panic!("{e}"));
    spec.tests
        .into_iter()
        .filter_map(|t| match t.body {
            TestBody::Litmus(l)
                if l.tiles.is_empty() && (l.bulk_copies() > 0 || !l.shared.is_empty()) =>
            {
                Some((t.name, l))
            }
            _ => None,
        })
        .collect()
}

/// The registers of `l`'s loads, as `kernel.thread.reg`.
fn load_registers(l: &Litmus) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for k in &l.kernels {
        for t in &k.threads {
            for op in &t.ops {
                if let Op::Load { reg, .. } = op {
                    out.insert(format!("{}.{}.{reg}", k.name, t.name));
                }
            }
        }
    }
    out
}

/// `l` with every location a tile of `words` words, every operation on
/// all of it, and each comparison of a load's register made over its
/// words: `r[0]` for one word, `any(r)` for more. Written as YAML and
/// loaded, so that the loader accepts it.
fn as_tiles(name: &str, l: &Litmus, words: u32) -> Litmus {
    let range = |loc: &str| {
        if words == 1 {
            format!("{loc}[0]")
        } else {
            format!("{loc}[0..{words}]")
        }
    };
    let mut t = l.clone();
    t.tiles = l
        .memory
        .iter()
        .chain(&l.shared)
        .map(|(n, _)| (n.clone(), words))
        .collect();
    for op in t
        .kernels
        .iter_mut()
        .flat_map(|k| &mut k.threads)
        .flat_map(|t| &mut t.ops)
    {
        match op {
            Op::Store { loc, .. } | Op::Load { loc, .. } => *loc = range(loc),
            Op::BulkLoad { dst, src, .. } | Op::BulkStore { dst, src } => {
                *dst = range(dst);
                *src = range(src);
            }
            _ => {}
        }
    }
    let regs = load_registers(l);
    fn rewrite(e: &mut Expr, regs: &BTreeSet<String>, words: u32) {
        match e {
            Expr::Cmp { term, .. } if regs.contains(term.as_str()) => {
                *term = if words == 1 {
                    format!("{term}[0]")
                } else {
                    format!("any({term})")
                }
            }
            Expr::Cmp { .. } => {}
            Expr::Not(a) => rewrite(a, regs, words),
            Expr::And(a, b) | Expr::Or(a, b) => {
                rewrite(a, regs, words);
                rewrite(b, regs, words);
            }
        }
    }
    rewrite(&mut t.condition.expr, &regs, words);
    render::load_litmus(&render::litmus_spec_yaml(Profile::Pdl, name, &t))
        .unwrap_or_else(|e| panic!("{name} over tiles of {words} words: {e}"))
}

/// A one-word test's states as its tile version names them: a load's
/// register is `r[0]`, and a location's final value (a tile's is not
/// observed) is left out.
fn renamed(l: &Litmus, states: &BTreeSet<State>) -> BTreeSet<State> {
    let regs = load_registers(l);
    let locations: BTreeSet<&str> = l.memory.iter().map(|(n, _)| n.as_str()).collect();
    states
        .iter()
        .map(|s| {
            s.iter()
                .filter(|(k, _)| !locations.contains(k.as_str()))
                .map(|(k, v)| match regs.contains(k) {
                    true => (format!("{k}[0]"), *v),
                    false => (k.clone(), *v),
                })
                .collect()
        })
        .collect()
}

/// A four-word test's state as one word's: a register's set of values
/// (`k.t0.r0[0..4]`) is its value where the words agree, and a value no
/// word holds (100 and up) where they do not.
fn one_value(s: &State) -> State {
    s.iter()
        .map(|(k, &v)| match k.strip_suffix("[0..4]") {
            Some(r) if v.count_ones() == 1 => (format!("{r}[0]"), v.trailing_zeros()),
            Some(r) => (format!("{r}[0]"), 100 + v),
            None => (k.clone(), v),
        })
        .collect()
}

fn checked(name: &str, l: &Litmus) -> CrossCheck {
    let c = cross_check(l).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(!c.is_conflict(), "{name}: {}", c.agreement);
    c
}

/// The agreement's kind, without its states.
fn kind(a: &Agreement) -> &'static str {
    match a {
        Agreement::Same => "same",
        Agreement::LoomOrdersWrites { .. } => "loom-orders-writes",
        Agreement::LoomBounded { .. } => "loom-bounded",
        Agreement::Single { .. } => "single",
        Agreement::Conflict { .. } => "conflict",
    }
}

#[test]
fn at_one_word_a_tile_is_a_word_and_at_four_words_a_read_can_tear() {
    let tests = async_proxy_tests();
    assert!(
        tests.len() >= 15,
        "{} tests of the asynchronous proxy",
        tests.len()
    );
    let mut differ = Vec::new();
    for (name, l) in &tests {
        let word = checked(name, l);
        let one = as_tiles(name, l, 1);
        let tile = checked(name, &one);
        assert_eq!(tile.verdict, word.verdict, "{name}: one-word tile");
        assert_eq!(
            tile.states,
            renamed(l, &word.states),
            "{name}: one-word tile"
        );
        assert_eq!(kind(&tile.agreement), kind(&word.agreement), "{name}");
        // Four words: the verdict of "any word" is the word's, and the
        // same comparison sees what a word cannot. (Not for the tests loom
        // needs over 20 000 executions for at one word: each word a tile
        // stores or copies is more to interleave.)
        let executions = word
            .loom
            .as_ref()
            .and_then(|r| r.as_ref().ok())
            .map(|o| o.executions);
        if executions.is_none_or(|n| n > 20_000) {
            continue;
        }
        let four = checked(name, &as_tiles(name, l, 4));
        assert_eq!(
            four.verdict, word.verdict,
            "{name}: four-word tiles, any word"
        );
        let as_one: BTreeSet<State> = four.states.iter().map(one_value).collect();
        if as_one != tile.states {
            differ.push(name.clone());
        }
    }
    // A read that sees one word old and another new (the set {0, 1}) where
    // the test allows a stale read: the comparison of states fails there.
    for stale in [
        "pdl-async-load-before-wait-may-be-stale",
        "pdl-async-load-read-before-mbarrier-may-be-stale",
        "pdl-async-store-without-proxy-fence-may-copy-stale",
    ] {
        assert!(differ.iter().any(|d| d == stale), "{stale}: {differ:?}");
    }
    // Where no read can be stale, four words are one.
    for fenced in [
        "pdl-async-load-after-wait-sees-primary",
        "pdl-async-store-before-trigger-wait-sees",
    ] {
        assert!(!differ.iter().any(|d| d == fenced), "{fenced}: {differ:?}");
    }
}

/// The values a register's segment shows over `states`, as masks.
fn seen(states: &BTreeSet<State>, key: &str) -> BTreeSet<u32> {
    states.iter().filter_map(|s| s.get(key).copied()).collect()
}

#[test]
fn the_tile_tests_tear_where_a_word_can_be_stale_and_only_there() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec");
    let spec = load_dir(&dir, None).unwrap_or_else(|e| panic!("{e}"));
    let test = |name: &str| match spec.test(name).map(|t| &t.body) {
        Some(TestBody::Litmus(l)) => checked(name, l),
        _ => panic!("no litmus test {name}"),
    };
    // {0} = 1, {1} = 2, {0, 1} = 3: old, new, torn.
    let slices = test("pdl-tiles-proxy-fence-after-barrier-may-copy-stale");
    assert_eq!(slices.decided_by, gridcheck_oracle::DecidedBy::Both);
    assert_eq!(
        seen(&slices.states, "next.t0.r0[0..512]"),
        BTreeSet::from([2])
    );
    assert_eq!(
        seen(&slices.states, "next.t0.r0[512..1024]"),
        BTreeSet::from([1, 2, 3])
    );
    let fenced = test("pdl-tiles-proxy-fence-in-writer-warps-copies-every-slice");
    for slice in ["next.t0.r0[0..512]", "next.t0.r0[512..1024]"] {
        assert_eq!(seen(&fenced.states, slice), BTreeSet::from([2]), "{slice}");
    }
    let trigger = test("pdl-tiles-store-completed-before-trigger-may-be-stale");
    assert_eq!(
        seen(&trigger.states, "secondary.t0.r0[0..1024]"),
        BTreeSet::from([1, 2, 3])
    );
    // A read of the copy before its mbarrier may see it half done.
    let early = test("pdl-tiles-load-read-before-mbarrier-may-be-stale");
    assert_eq!(
        seen(&early.states, "secondary.t0.r0[0..1024]"),
        BTreeSet::from([1, 2, 3])
    );
    let across = test("pdl-tiles-store-to-async-load-across-wait");
    assert_eq!(
        seen(&across.states, "secondary.t0.r0[0..4096]"),
        BTreeSet::from([2])
    );
}
