//! The pattern language and its matcher on small programs: variables bind
//! names, order and adjacency, what must not appear, launch kinds, and the
//! errors of a bad shape.

use gridcheck_spec::Litmus;

use crate::Pattern;

/// A program of `kernels` (the YAML of a litmus test's `kernels:` list,
/// indented six spaces), memory x, y, z, w, under `profile`.
fn prog(profile: &str, kernels: &str) -> Litmus {
    let yaml = format!(
        "rules:\n  - id: {profile}.t.r\n    source: {{ seed: s.txt, section: \"1\" }}\n    quote: q\n    profile: {profile}\n    tests: [t]\ntests:\n  - name: t\n    kind: litmus\n    memory: {{ x: 0, y: 0, z: 0, w: 0 }}\n    kernels:\n{kernels}    condition: exists x == 0\n    expect: allowed\n"
    );
    gridcheck_spec::render::load_litmus(&yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"))
}

/// A host kernel `p` with `threads` (`t0: [...]` lines) and, when one of
/// them launches it, a device kernel `c` loading y and x.
fn parent(threads: &[&str]) -> Litmus {
    let mut k = String::from("      - kernel: p\n        launch: host\n        threads:\n");
    for t in threads {
        k.push_str(&format!("          {t}\n"));
    }
    if !threads.iter().any(|t| t.contains("launch c")) {
        return prog("cdp2", &k);
    }
    k.push_str("      - kernel: c\n        launch: device\n        threads:\n          t0: [load r0 y, load r1 x]\n");
    prog("cdp2", &k)
}

fn pat(text: &str) -> Pattern {
    Pattern::parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

const EARLY_TAIL: &str = "P: host, launch C tail\nP.a: trigger, store x\nC: device\nC.b: load x\n";

#[test]
fn variables_bind_kernels_and_locations_whatever_their_names() {
    let p = pat(EARLY_TAIL);
    assert!(p.matches(&parent(&[
        "t0: [launch c tail]",
        "t1: [trigger, store y 1]"
    ])));
    // Same thread, other operations between, another location.
    assert!(p.matches(&parent(&[
        "t0: [store z 3, launch c tail, trigger, syncthreads, store x 2]"
    ])));
    // The store must be to a location the tail loads.
    let k = "      - kernel: p\n        launch: host\n        threads:\n          t0: [launch c tail, trigger, store z 1]\n      - kernel: c\n        launch: device\n        threads:\n          t0: [load r0 x]\n";
    assert!(!p.matches(&prog("cdp2", k)));
    // The launch must be a tail launch of the kernel that loads.
    assert!(!p.matches(&parent(&["t0: [launch c, trigger, store x 1]"])));
    // The store must come after the trigger.
    assert!(!p.matches(&parent(&["t0: [launch c tail, store x 1, trigger]"])));
}

#[test]
fn distinct_variables_bind_distinct_names_and_threads() {
    let p = pat("P: host\nP.a: store x\nP.b: store y\n");
    assert!(p.matches(&parent(&["t0: [store x 1]", "t1: [store y 1]"])));
    assert!(!p.matches(&parent(&["t0: [store x 1]", "t1: [store x 2]"])));
    assert!(!p.matches(&parent(&["t0: [store x 1, store y 1]"])));
    let any = pat("P: host\nP.a: store _, store _\n");
    assert!(any.matches(&parent(&["t0: [store x 1, store x 2]"])));
}

#[test]
fn forbidden_operations_hold_in_their_gap_or_their_kernel() {
    let p = pat("P: host\nP.a: !gridsync, load x\n");
    assert!(!p.matches(&prog(
        "pdl",
        "      - kernel: q\n        launch: host\n        threads:\n          t0: [store x 1]\n      - kernel: p\n        launch: host-pdl\n        threads:\n          t0: [load r0 x, gridsync]\n"
    )), "p is host-pdl, not host");
    let s = pat("Q: host\nS: host-pdl after Q\nS.a: !gridsync, load x\n");
    let pdl = |ops: &str| {
        prog(
            "pdl",
            &format!(
                "      - kernel: q\n        launch: host\n        threads:\n          t0: [store x 1]\n      - kernel: s\n        launch: host-pdl\n        threads:\n          t0: [{ops}]\n"
            ),
        )
    };
    assert!(s.matches(&pdl("load r0 x, gridsync")));
    assert!(s.matches(&pdl("store y 1, load r0 y, load r1 x")));
    assert!(!s.matches(&pdl("gridsync, load r0 x")));
    // The load after the gap may follow a gridsync elsewhere: one load
    // before it is enough.
    assert!(s.matches(&pdl("load r0 x, gridsync, load r1 x")));
    let k = pat("P: host, !trigger, launch _ _\n");
    assert!(k.matches(&parent(&["t0: [launch c]"])));
    assert!(!k.matches(&parent(&["t0: [launch c]", "t1: [trigger]"])));
    assert!(!k.matches(&parent(&["t0: [store x 1]"])));
}

#[test]
fn adjacent_asks_for_nothing_between() {
    let p = pat("P: host\nP.a adjacent: trigger, launch C tail\nC: tail\n");
    assert!(p.matches(&parent(&[
        "t0: [store x 1, trigger, launch c tail, store x 2]"
    ])));
    assert!(!p.matches(&parent(&["t0: [trigger, store x 1, launch c tail]"])));
    let loose = pat("P: host\nP.a: trigger, launch C tail\nC: tail\n");
    assert!(loose.matches(&parent(&["t0: [trigger, store x 1, launch c tail]"])));
}

#[test]
fn host_kernels_keep_their_order_and_after_names_the_primary() {
    let p = pat("A: host\nA.t: store x\nB: host-pdl after A\nB.t: load x\n");
    let k = |first: &str, second: &str| {
        prog(
            "pdl",
            &format!(
                "      - kernel: a\n        launch: host\n        threads:\n          t0: [{first}]\n      - kernel: m\n        launch: host\n        threads:\n          t0: [store y 1]\n      - kernel: b\n        launch: host-pdl\n        threads:\n          t0: [{second}]\n"
            ),
        )
    };
    // m, not a, is right before b.
    assert!(!p.matches(&k("store x 1", "load r0 x")));
    let q = pat("A: host\nA.t: store x\nB: host-pdl\nB.t: load x\n");
    assert!(q.matches(&k("store x 1", "load r0 x")));
    let r = pat("B: host-pdl\nA: host\nB.t: load x\nA.t: store y\n");
    assert!(
        !r.matches(&k("store x 1", "load r0 x")),
        "a pattern's host order is the program's"
    );
}

#[test]
fn streams_events_and_bulk_copies_bind_too() {
    let p = pat("P: host\nP.a: record E, record E s\n");
    assert!(p.matches(&parent(&[
        "t0: [record e1, store x 1, record e1 s1, launch c]"
    ])));
    assert!(!p.matches(&parent(&["t0: [record e1, record e2 s1, launch c]"])));
    assert!(!p.matches(&parent(&["t0: [record e1, record e1, launch c]"])));
    let any = pat("P: host\nP.a: record E, record E _\n");
    assert!(any.matches(&parent(&["t0: [record e1, record e1, launch c]"])));
}

#[test]
fn a_bad_shape_is_an_error_naming_its_line() {
    for (text, want) in [
        (
            "P: host\nP.a: stor x\n",
            "line 2: `stor x`: unknown operation `stor`",
        ),
        ("P: hosted\n", "line 1: `hosted` is not a launch"),
        ("P.a: store x\n", "thread `P.a` of a kernel not given"),
        (
            "P: host\nP.a: !trigger\n",
            "line 2: thread `P.a` has no operation it must make",
        ),
        ("P: host\nP: device\n", "line 2: kernel `P` is given twice"),
        ("P: host\nP.a: store x 1 2\n", "unexpected `2`"),
        ("", "at least one kernel"),
        (
            "P: device after Q\n",
            "`after` orders host-launched kernels only",
        ),
        ("P: host\nP.a: launch\n", "missing kernel"),
        ("P: host\nP.a: store x,, load y\n", "an empty operation"),
    ] {
        let e = Pattern::parse(text).unwrap_err();
        assert!(e.contains(want), "{text:?}: {e}");
    }
}

#[test]
fn a_shape_shows_on_one_line() {
    assert_eq!(
        pat(EARLY_TAIL).to_string(),
        "P: host, launch C tail; P.a: trigger, store x; C: device; C.b: load x"
    );
}

#[test]
fn a_location_variable_binds_a_tile_whichever_words_an_operation_names() {
    let yaml = "rules:\n  - id: pdl.t.r\n    source: { seed: s.txt, section: \"1\" }\n    quote: q\n    profile: pdl\n    tests: [t]\ntests:\n  - name: t\n    kind: litmus\n    memory: { \"x[1024]\": 0 }\n    shared: { \"s[1024]\": 0 }\n    kernels:\n      - kernel: p\n        launch: host\n        threads:\n          t0: [\"store s[0..512] 1\", fence.proxy.async, syncthreads, \"bulkstore x[0..1024] s[0..1024]\"]\n          t1: [\"store s[512..1024] 1\", syncthreads, fence.proxy.async]\n          t2: [\"load r0 x[0..1024]\"]\n    condition: exists any(p.t2.r0) == 0\n    expect: allowed\n";
    let l = gridcheck_spec::render::load_litmus(yaml).unwrap_or_else(|e| panic!("{e}"));
    let shape = "P: any\nP.w: store s, !fence.proxy.async, syncthreads\nP.i: syncthreads, !fence.proxy.async, bulkstore x s\n";
    assert!(
        pat(shape).matches(&l),
        "t1 writes words of s, t0 bulk-stores all of s"
    );
    // The writer that fences before the barrier is not the shape.
    let fenced = yaml.replace(
        "\"store s[512..1024] 1\", syncthreads, fence.proxy.async",
        "\"store s[512..1024] 1\", fence.proxy.async, syncthreads",
    );
    let l = gridcheck_spec::render::load_litmus(&fenced).unwrap();
    assert!(!pat(shape).matches(&l));
}
