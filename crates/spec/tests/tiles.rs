//! The loader on tiles (locations of more than one word): declarations in
//! words and bytes, ranges in operations, slices, bulk copies of ranges,
//! conditions over tile registers, the segments both models split a tile
//! into; and each mistake located by file, line, test and field, with the
//! rule it breaks.

use std::collections::BTreeMap;
use std::path::PathBuf;

use gridcheck_fixture::OneRule;
use gridcheck_spec::{Litmus, State, TestBody, load_sources, render, render_state};

/// One litmus test `t` whose memory is declared in block style (a tile's
/// key holds `[`, which a flow mapping's plain key cannot), with these
/// threads of a host kernel `k`.
fn test(memory: &str, shared: &str, threads: &str, condition: &str) -> String {
    OneRule::new()
        .tests(&format!(
            "  - name: t\n    kind: litmus\n    memory:\n{memory}{shared}    kernels:\n      \
             - kernel: k\n        launch: host\n        threads:\n{threads}    condition: {condition}\n    \
             expect: allowed\n"
        ))
        .yaml()
}

const MEMORY: &str = "      x[1024]: 0\n      y: 0\n";
const SHARED: &str = "    shared:\n      s[4 KiB]: 0\n";

fn load(yaml: &str) -> Result<Litmus, String> {
    match load_sources(&[(PathBuf::from("spec/p.yaml"), yaml.to_string())], None) {
        Ok(spec) => match &spec.tests[0].body {
            TestBody::Litmus(l) => Ok(l.clone()),
            _ => Err("not litmus".into()),
        },
        Err(e) => Err(e.to_string()),
    }
}

fn state(pairs: &[(&str, u32)]) -> State {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[test]
fn tiles_load_with_their_sizes_and_render_back() {
    let yaml = test(
        MEMORY,
        SHARED,
        "          t0: [\"store s[0..512] 1\", fence.proxy.async, syncthreads, \"bulkstore x[0..1024] s[0..1024]\"]\n          \
         t1: [\"store s[512..1024] 1\", syncthreads, \"load r0 x[0..1024]\", load r1 y]\n",
        "exists any(k.t1.r0) == 0",
    );
    let l = load(&yaml).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        l.tiles,
        [("x".to_string(), 1024), ("s".to_string(), 1024)],
        "4 KiB are 1024 words"
    );
    assert_eq!(l.largest_location_words(), 1024);
    // The slices' boundary is carried across the copy into x: the load's
    // register is observed per segment. A tile's final value is not.
    assert_eq!(
        l.observables(),
        ["k.t1.r0[0..512]", "k.t1.r0[512..1024]", "k.t1.r1", "y"]
    );
    let plan = l.tile_plan();
    assert_eq!(
        plan.split("x", (0, 1024)),
        Some(vec![(0, 512), (512, 1024)])
    );
    assert_eq!(plan.split("y", (0, 1)), None, "a word is no tile");
    // Two values (0 and 1): two representative words a segment.
    assert_eq!(plan.modeled_words((0, 512)), 2);
    let again = render::load_litmus(&render::litmus_spec_yaml(
        gridcheck_spec::Profile::Pdl,
        "t",
        &l,
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again.tiles, l.tiles);
    assert_eq!(again.kernels[0].threads[1].ops, l.kernels[0].threads[1].ops);
}

#[test]
fn a_condition_reads_a_tile_register_word_by_word() {
    let yaml = test(
        MEMORY,
        "",
        "          t0: [\"store x[0..1024] 1\"]\n          t1: [\"load r0 x[0..1024]\"]\n",
        "exists any(k.t1.r0[0..16]) == 0 \\/ k.t1.r0[700] == 0 \\/ ~(all(k.t1.r0) == 1)",
    );
    let l = load(&yaml).unwrap_or_else(|e| panic!("{e}"));
    // The condition's words and ranges split the register too.
    let obs = l.observables();
    assert_eq!(
        obs,
        [
            "k.t1.r0[0..16]",
            "k.t1.r0[16..700]",
            "k.t1.r0[700]",
            "k.t1.r0[701..1024]",
            "y"
        ]
    );
    // A segment of several words holds the set of its values (bit v for
    // value v), one word its value.
    let all_new = state(&[
        ("k.t1.r0[0..16]", 0b10),
        ("k.t1.r0[16..700]", 0b10),
        ("k.t1.r0[700]", 1),
        ("k.t1.r0[701..1024]", 0b10),
        ("y", 0),
    ]);
    assert!(!l.condition.holds(&all_new).unwrap());
    assert_eq!(
        render_state(&obs, &all_new),
        "k.t1.r0[0..16]={1}; k.t1.r0[16..700]={1}; k.t1.r0[700]=1; k.t1.r0[701..1024]={1}; y=0"
    );
    let mut torn = all_new.clone();
    torn.insert("k.t1.r0[16..700]".into(), 0b11);
    assert!(l.condition.holds(&torn).unwrap(), "not all words are 1");
    let mut one_word = all_new.clone();
    one_word.insert("k.t1.r0[700]".into(), 0);
    assert!(l.condition.holds(&one_word).unwrap());
    let mut first = all_new.clone();
    first.insert("k.t1.r0[0..16]".into(), 0b01);
    assert!(l.condition.holds(&first).unwrap());
    // The range limits `any`: a stale word outside 0..16 alone is not in it.
    let c = gridcheck_spec::condition::parse("exists any(k.t1.r0[0..16]) == 0").unwrap();
    assert!(!c.holds(&torn).unwrap() && c.holds(&first).unwrap());
    // `all(..) == v`, `any(..) != v` (some word differs), `all(..) != v`
    // (no word holds v).
    let parse = |c: &str| gridcheck_spec::condition::parse(c).unwrap();
    let all1 = parse("exists all(k.t1.r0) == 1");
    let any_not1 = parse("exists any(k.t1.r0) != 1");
    let none0 = parse("exists all(k.t1.r0) != 0");
    assert!(all1.holds(&all_new).unwrap() && !all1.holds(&torn).unwrap());
    assert!(!any_not1.holds(&all_new).unwrap() && any_not1.holds(&torn).unwrap());
    assert!(none0.holds(&all_new).unwrap() && !none0.holds(&torn).unwrap());
}

#[test]
fn sizes_are_in_words_or_in_bytes() {
    for (key, words) in [
        ("x[16 B]", 4),
        ("x[1 KiB]", 256),
        ("x[64 KiB]", 16384),
        ("x[3]", 3),
    ] {
        let yaml = test(
            &format!("      {key}: 0\n"),
            "",
            "          t0: [\"load r0 x[0]\"]\n",
            "exists k.t0.r0[0] == 0",
        );
        let l = load(&yaml).unwrap_or_else(|e| panic!("{key}: {e}"));
        assert_eq!(l.tile_words("x"), Some(words), "{key}");
    }
}

/// Loads `yaml`, expecting one error containing `needle` at `line` of
/// `spec/p.yaml`, naming test `t` and `field`.
fn refused(yaml: &str, line: usize, field: &str, needle: &str) {
    let e = load(yaml).expect_err(needle);
    let hit = e.lines().find(|m| m.contains(needle));
    let Some(m) = hit else {
        panic!("no error says `{needle}`:\n{e}");
    };
    let m = m.trim_start_matches("error: ");
    assert!(m.starts_with(&format!("spec/p.yaml:{line}:")), "{m}");
    assert!(m.contains("test `t`"), "{m}");
    assert!(m.contains(&format!("field `{field}`")), "{m}");
}

#[test]
fn bad_declarations_are_located() {
    let at = |key: &str, needle: &str| {
        let yaml = test(
            &format!("      y: 0\n      {key}: 0\n"),
            "",
            "          t0: [load r0 y]\n",
            "exists k.t0.r0 == 0",
        );
        refused(&yaml, 12, "memory", needle);
    };
    at("x[0]", "`x[0]` has no words: a tile holds at least one");
    at("x[0 KiB]", "has no words");
    at(
        "x[6 B]",
        "`x[6 B]` is 6 bytes, not a whole number of 32-bit words",
    );
    at("x[128 KiB]", "a tile holds at most 16384 (64 KiB)");
    at("x[4 MB]", "unknown unit `MB`");
    at("x[many]", "`many` is not a size");
    let starts_high = test(
        "      x[8]: 40\n",
        "",
        "          t0: [\"load r0 x[0]\"]\n",
        "exists k.t0.r0[0] == 0",
    );
    refused(&starts_high, 11, "memory", "a tile's values are 0 to 31");
    let big_shared = test(
        "      y: 0\n",
        "    shared:\n      s[32 KiB]: 0\n      u[32 KiB]: 0\n",
        "          t0: [load r0 y]\n",
        "exists k.t0.r0 == 0",
    );
    refused(&big_shared, 12, "shared", "a block holds at most 48 KiB");
}

#[test]
fn bad_ranges_and_tiles_named_as_words_are_located() {
    let at = |threads: &str, needle: &str| {
        let yaml = test(
            MEMORY,
            SHARED,
            &format!("          t0: [\"{threads}\"]\n"),
            "exists y == 0",
        );
        refused(&yaml, 19, "kernels.k.threads.t0[0]", needle);
    };
    // A range outside the array, an empty one.
    at(
        "store x[1000..1030] 1",
        "`x[1000..1030]` in `store x[1000..1030] 1` is outside tile `x`, whose words are 0 to 1023",
    );
    at("load r0 x[1024]", "is outside tile `x`");
    at("store x[5..5] 1", "`x[5..5]` is an empty range");
    // A word-only operation on a tile, and a range of a word.
    at(
        "store x 1",
        "`store x 1` names tile `x` (1024 words) as a word: name its words, `x[0..1024]`, or one of them, `x[0]`",
    );
    at("load r0 x", "names tile `x` (1024 words) as a word");
    at(
        "bulkstore x s[0..4]",
        "names tile `x` (1024 words) as a word",
    );
    at("load r0 y[0..2]", "`y` is a word, not a tile: name it bare");
    // A store of several words writes a tile's value.
    at("store x[0..8] 32", "a tile's values are 0 to 31");
    // Bulk copies: as long on both sides, whole 16-byte units.
    at(
        "bulkstore x[0..8] s[0..4]",
        "copies 4 words into 8: a bulk copy's sides are as long",
    );
    at("bulkload s[0..6] x[0..6] b", "moves whole 16-byte units");
    at("bulkload s[2..6] x[0..4] b", "from a 16-byte boundary");
    at("bulkstore x[3] s[3]", "copies one word of tile `s`");
    at("bulkload s[3] x[3] b", "copies one word of tile `x`");
    at("bulkstore y s[0]", "copies one word of tile `s`");
    // Sides of their kind, as for words.
    at(
        "bulkload x[0..4] s[0..4] b",
        "`x` is global memory; the destination of `bulkload x[0..4] s[0..4] b` is a shared location",
    );
}

#[test]
fn conditions_read_tile_registers_as_tiles() {
    let at = |condition: &str, needle: &str| {
        let yaml = test(
            MEMORY,
            "",
            "          t0: [\"load r0 x[0..1024]\", load r1 y]\n",
            condition,
        );
        refused(&yaml, 18, "condition", needle);
    };
    at(
        "exists k.t0.r0 == 0",
        "`k.t0.r0` holds a tile (words 0 to 1023): compare `any(k.t0.r0)`, `all(k.t0.r0)` or one word, `k.t0.r0[0]`",
    );
    at(
        "exists any(k.t0.r1) == 0",
        "`any(k.t0.r1)` reads words of a tile register, and `k.t0.r1` is not one",
    );
    at("exists k.t0.r1[0] == 0", "`k.t0.r1` is not one");
    at(
        "exists any(x) == 0",
        "`any(x)` reads words of a tile register, and `x` is not one",
    );
    let part = test(
        MEMORY,
        "",
        "          t0: [\"load r0 x[0..512]\"]\n",
        "exists k.t0.r0[600] == 0",
    );
    refused(
        &part,
        18,
        "condition",
        "`k.t0.r0[600]` names word 600 of `k.t0.r0`, which holds words 0 to 511 only",
    );
    let e = gridcheck_spec::condition::parse("exists any(k.t0.r0 == 0").unwrap_err();
    assert!(e.contains("expected `)` after `any(k.t0.r0`"), "{e}");
    let e = gridcheck_spec::condition::parse("exists k.t0.r0[0..4 == 0").unwrap_err();
    assert!(e.contains("is not closed by `]`"), "{e}");
}

#[test]
fn a_one_word_tile_is_observed_as_its_word() {
    let yaml = test(
        "      x[1]: 0\n",
        "",
        "          t0: [\"store x[0] 5\"]\n          t1: [\"load r0 x[0..1]\"]\n",
        "exists k.t1.r0[0] == 0",
    );
    let l = load(&yaml).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(l.observables(), ["k.t1.r0[0]"]);
    let s: BTreeMap<String, u32> = state(&[("k.t1.r0[0]", 0)]);
    assert!(l.condition.holds(&s).unwrap());
    // Its value is the word's, not a mask: 5 is not a set.
    assert_eq!(
        render_state(&l.observables(), &state(&[("k.t1.r0[0]", 5)])),
        "k.t1.r0[0]=5"
    );
}
