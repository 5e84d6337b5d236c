//! The operators on small programs, what the oracles make of their results,
//! and the names that tie a mutant to its kernel.

use gridcheck_mutate::{Judgement, Operator, candidates, file_stem, find, judge, kills};
use gridcheck_spec::{Litmus, Profile, State, Verdict};

fn litmus(kernels: &str, condition: &str, expect: &str) -> Litmus {
    let yaml = format!(
        "rules:\n  - id: cdp2.t.t\n    source: {{ seed: generated.txt, section: \"1 G\" }}\n    \
         quote: q\n    profile: cdp2\n    tests: [t]\ntests:\n  - name: t\n    kind: litmus\n    \
         memory: {{ x: 0, y: 0 }}\n    kernels:\n{kernels}    condition: '{condition}'\n    expect: {expect}\n"
    );
    gridcheck_spec::render::load_litmus(&yaml).expect("the test loads")
}

/// Each thread's program, `kernel.thread: op, op`.
fn programs(l: &Litmus) -> Vec<String> {
    l.kernels
        .iter()
        .flat_map(|k| {
            k.threads.iter().map(move |t| {
                let ops: Vec<String> = t.ops.iter().map(|o| o.to_string()).collect();
                format!("{}.{}: {}", k.name, t.name, ops.join(", "))
            })
        })
        .collect()
}

fn mp() -> Litmus {
    litmus(
        "      - kernel: parent\n        launch: host\n        threads:\n          \
         t0: [store x 1, syncthreads, launch child tail]\n          t1: [store y 1, syncthreads]\n      \
         - kernel: child\n        launch: device\n        threads:\n          t0: [load r0 x, load r1 y]\n",
        "exists (child.t0.r0 == 0 \\/ child.t0.r1 == 0)",
        "forbidden",
    )
}

#[test]
fn drop_syncthreads_removes_the_barrier_from_every_thread() {
    let m = Operator::DropSyncthreads.apply(&mp());
    assert_eq!(m.len(), 1);
    assert_eq!(
        programs(&m[0].1)[..2],
        [
            "parent.t0: store x 1, launch child tail",
            "parent.t1: store y 1"
        ]
    );
}

#[test]
fn store_after_launch_moves_only_stores_before_a_launch() {
    let m = Operator::StoreAfterLaunch.apply(&mp());
    assert_eq!(m.len(), 1, "t1 has no launch");
    assert_eq!(
        programs(&m[0].1)[0],
        "parent.t0: syncthreads, launch child tail, store x 1"
    );
}

#[test]
fn stream_operators_change_one_launch() {
    let l = mp();
    let faf = Operator::TailToFireAndForget.apply(&l);
    assert_eq!(
        programs(&faf[0].1)[0],
        "parent.t0: store x 1, syncthreads, launch child fire-and-forget"
    );
    let named = Operator::TailToStream.apply(&l);
    assert_eq!(
        programs(&named[0].1)[0],
        "parent.t0: store x 1, syncthreads, launch child sm"
    );
    assert!(Operator::NullToStream.apply(&l).is_empty());
    assert!(Operator::StreamToOtherStream.apply(&l).is_empty());
}

#[test]
fn pdl_operators() {
    let l = litmus(
        "      - kernel: primary\n        launch: host\n        threads:\n          \
         t0: [store x 1, trigger]\n      - kernel: secondary\n        launch: host-pdl\n        \
         threads:\n          t0: [gridsync, load r0 x, load r1 y]\n",
        "exists (secondary.t0.r0 == 0)",
        "forbidden",
    );
    let first = Operator::TriggerFirst.apply(&l);
    assert_eq!(programs(&first[0].1)[0], "primary.t0: trigger, store x 1");
    let before = Operator::LoadsBeforeGridsync.apply(&l);
    assert_eq!(
        programs(&before[0].1)[1],
        "secondary.t0: load r0 x, load r1 y, gridsync"
    );
    let dropped = Operator::DropGridsync.apply(&l);
    assert_eq!(
        programs(&dropped[0].1)[1],
        "secondary.t0: load r0 x, load r1 y"
    );
    assert!(Operator::AddPdl.apply(&l).is_empty(), "already PDL");
}

#[test]
fn the_oracles_decide_which_candidates_are_mutants() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec");
    let spec = gridcheck_spec::load_dir(&root, None).expect("the spec loads");
    let mutant = find(&spec, "mp-parent-child-syncthreads~drop-syncthreads").expect("a candidate");
    assert_eq!(mutant.original, Verdict::Forbidden);
    // Listed by CDP2 and CDP1 rules since the programs were merged.
    assert!(mutant.profiles.contains(&Profile::Cdp2));
    match judge(&mutant).expect("judged") {
        Judgement::Mutant(v) => {
            assert_eq!(v.verdict, Verdict::Allowed);
            assert!(!v.kill_states.is_empty());
            for s in &v.kill_states {
                assert!(kills(Verdict::Forbidden, &mutant.litmus.condition, s).expect("terms"));
            }
        }
        other => panic!("dropping the barrier must make a mutant: {other:?}"),
    }
    // The child of the launching thread sees that thread's write through
    // any stream: the test does not rest on the NULL stream.
    let not = find(&spec, "mp-parent-child-syncthreads~null-to-stream").expect("a candidate");
    assert!(matches!(judge(&not), Ok(Judgement::NotAMutant(_))));
    assert!(find(&spec, "mp-parent-child-syncthreads~no-such-operator").is_err());
    assert!(find(&spec, "no-such-test~drop-syncthreads").is_err());
}

#[test]
fn names_are_unique_and_resolve_and_stems_are_file_names() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec");
    let spec = gridcheck_spec::load_dir(&root, None).expect("the spec loads");
    let (all, rejected) = candidates(&spec);
    let mut names = std::collections::BTreeSet::new();
    for c in &all {
        assert!(names.insert(c.name.clone()), "{} twice", c.name);
        assert_ne!(
            c.original,
            Verdict::Allowed,
            "allowed tests guarantee nothing"
        );
        let stem = file_stem(&c.name);
        assert!(
            stem.chars()
                .all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '.'),
            "{stem}"
        );
        assert!(symbol_safe(&c.name));
    }
    for r in &rejected {
        assert!(!r.reason.is_empty());
    }
    // Every operator applies somewhere in the spec.
    for op in Operator::ALL {
        assert!(
            all.iter().any(|c| c.operator == op),
            "{} applies nowhere",
            op.name()
        );
    }
    let some = &all[all.len() / 2];
    assert_eq!(find(&spec, &some.name).expect("resolves").name, some.name);
}

/// A mutant's name becomes a C identifier once `-` and `~` are spelled `_`.
fn symbol_safe(name: &str) -> bool {
    name.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '~')
}

#[test]
fn a_kill_is_what_the_original_test_would_fail_on() {
    let l = mp();
    let state = |r0: u32, r1: u32| -> State {
        [
            ("child.t0.r0".to_string(), r0),
            ("child.t0.r1".to_string(), r1),
        ]
        .into_iter()
        .chain([("x".to_string(), 1), ("y".to_string(), 1)])
        .collect()
    };
    let c = &l.condition;
    assert!(kills(Verdict::Forbidden, c, &state(0, 1)).expect("terms"));
    assert!(!kills(Verdict::Forbidden, c, &state(1, 1)).expect("terms"));
    assert!(kills(Verdict::Required, c, &state(1, 1)).expect("terms"));
    assert!(!kills(Verdict::Required, c, &state(0, 0)).expect("terms"));
    assert!(!kills(Verdict::Allowed, c, &state(0, 0)).expect("terms"));
}

#[test]
fn the_asynchronous_proxy_operators_and_the_oracles_on_the_spec() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec");
    let spec = gridcheck_spec::load_dir(&root, None).expect("the spec loads");
    let judged = |name: &str| judge(&find(&spec, name).expect("a candidate")).expect("judged");
    // A bulk load moved before the wait, a dropped proxy fence before a
    // bulk store, a dropped mbarrier or group wait: each loses its test.
    for name in [
        "pdl-async-load-after-wait-sees-primary~loads-before-gridsync",
        "pdl-async-store-before-trigger-wait-sees~drop-proxy-fence",
        "pdl-async-consumer-warp-after-mbarrier-sees-primary~drop-mbarwait",
        "pdl-async-store-wait-own-read-sees~drop-bulkwait",
    ] {
        let m = find(&spec, name).expect("a candidate");
        let got = programs(&m.litmus).join("; ");
        assert!(
            matches!(judged(name), Judgement::Mutant(_)),
            "{name} ({got}) must lose its test"
        );
    }
    // The decision that a wait is a proxy fence: after it, the fence before
    // the bulk load adds nothing.
    assert!(matches!(
        judged("pdl-async-load-after-wait-and-proxy-fence-sees-primary~drop-proxy-fence"),
        Judgement::NotAMutant(_)
    ));
    let moved = find(
        &spec,
        "pdl-async-load-after-wait-sees-primary~loads-before-gridsync",
    )
    .expect("a candidate");
    assert_eq!(
        programs(&moved.litmus)[1],
        "secondary.t0: bulkload s x b, gridsync, mbarwait b, load r0 s"
    );
}
