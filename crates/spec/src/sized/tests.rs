//! `resized` and `bulk_reads` on a tile test: ranges, terms and tiles
//! scaled by one ratio, a range that is not whole words an error, a bulk
//! reader into the shared tile that holds its range or a new one.

use super::*;
use crate::ast::Profile;
use crate::render::{litmus_spec_yaml, load_litmus};

/// A PDL primary that bulk-stores a tile and triggers, and a secondary
/// that reads it without waiting (spec/pdl/tiles.yaml's first test).
const STORE: &str = r#"
rules:
  - id: pdl.generated.t
    source: { seed: generated.txt, section: "1 Generated" }
    quote: generated
    profile: pdl
    tests: [t]
tests:
  - name: t
    description: 'generated'
    kind: litmus
    memory: { "x[1024]": 0, y: 0 }
    shared: { "s[1024]": 0 }
    kernels:
      - kernel: primary
        launch: host
        threads:
          t0: ["store s[0..512] 1", "store s[512..1024] 1", fence.proxy.async, "bulkstore x[0..1024] s[0..1024]", bulkcommit, bulkwait 0, trigger]
      - kernel: secondary
        launch: host-pdl
        threads:
          t0: ["load r0 x[0..1024]", load r1 y]
    condition: 'exists any(secondary.t0.r0[512..1024]) == 0 \/ secondary.t0.r0[256] == 0'
    expect: allowed
"#;

fn reload(l: &Litmus) -> Litmus {
    load_litmus(&litmus_spec_yaml(Profile::Pdl, "t", l)).expect("the sized test loads")
}

fn ops(l: &Litmus, k: usize) -> Vec<String> {
    l.kernels[k].threads[0]
        .ops
        .iter()
        .map(|o| o.to_string())
        .collect()
}

#[test]
fn a_resized_test_scales_every_tile_range_and_term_by_one_ratio() {
    let l = load_litmus(STORE).unwrap();
    for (words, half) in [(4u32, 2u32), (8192, 4096)] {
        let r = reload(&resized(&l, words).unwrap());
        assert_eq!(r.tile_words("x"), Some(words));
        assert_eq!(r.tile_words("s"), Some(words));
        assert_eq!(r.tile_words("y"), None, "a word location stays a word");
        assert_eq!(ops(&r, 0)[1], format!("store s[{half}..{words}] 1"));
        assert_eq!(
            ops(&r, 0)[3],
            format!("bulkstore x[0..{words}] s[0..{words}]")
        );
        let cond = r.condition.to_string();
        assert!(
            cond.contains(&format!("any(secondary.t0.r0[{half}..{words}]) == 0")),
            "{cond}"
        );
        assert!(
            cond.contains(&format!("secondary.t0.r0[{}] == 0", 256 * words / 1024)),
            "{cond}"
        );
    }
}

#[test]
fn a_range_that_is_not_whole_words_at_the_size_is_an_error_naming_it() {
    let l = load_litmus(STORE).unwrap();
    let e = resized(&l, 2).unwrap_err();
    assert!(e.contains("`secondary.t0.r0[256]`"), "{e}");
    assert!(resized(&l, 0).is_err());
}

#[test]
fn a_bulk_reader_copies_into_the_shared_tile_that_holds_the_range_and_waits() {
    let l = load_litmus(STORE).unwrap();
    let r = reload(&bulk_reads(&l).unwrap().unwrap());
    assert_eq!(
        ops(&r, 1),
        [
            "bulkload s[0..1024] x[0..1024] rb0",
            "mbarwait rb0",
            "load r0 s[0..1024]",
            "load r1 y",
        ]
    );
    assert_eq!(
        r.observables(),
        l.observables(),
        "the same registers are observed"
    );
}

#[test]
fn a_bulk_reader_without_a_shared_tile_to_hold_its_range_gets_one() {
    let text = STORE
        .replace(r#"shared: { "s[1024]": 0 }"#, r#"shared: { "s[8]": 0 }"#)
        .replace(
            r#"t0: ["store s[0..512] 1", "store s[512..1024] 1", fence.proxy.async, "bulkstore x[0..1024] s[0..1024]", bulkcommit, bulkwait 0, trigger]"#,
            r#"t0: ["store x[0..1024] 1", trigger]"#,
        );
    let l = load_litmus(&text).unwrap();
    let r = reload(&bulk_reads(&l).unwrap().unwrap());
    assert_eq!(r.tile_words(READER_TILE), Some(1024));
    assert_eq!(ops(&r, 1)[0], "bulkload rd[0..1024] x[0..1024] rb0");
    // A test without a generic read of a global tile has no bulk reader.
    assert!(bulk_reads(&r).unwrap().is_none());
}
