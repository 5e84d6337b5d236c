//! The CI budget of the differential test: a fixed seed, a few hundred
//! random programs, no conflict between the two oracles and no program the
//! loader rejects. `cargo xtask fuzz model --count N --seed S` runs more.

use gridcheck_litgen::{GenConfig, differential};

#[test]
fn the_oracles_agree_on_random_programs() {
    let r = differential::run(300, 1, GenConfig::default(), 2, |_| {});
    eprintln!("{:?}\n{:?}\n{:?}", r.classes, r.both_failed, r.coverage);
    assert!(
        r.generator_errors.is_empty(),
        "{}",
        r.generator_errors.join("\n")
    );
    let conflicts: Vec<String> = r
        .conflicts
        .iter()
        .map(|f| format!("program {}: {}\n{}", f.index, f.detail, f.yaml))
        .collect();
    assert!(conflicts.is_empty(), "{}", conflicts.join("\n"));
    // The generator covers the DSL: every construct appears.
    for k in [
        "store",
        "load",
        "trigger",
        "gridsync",
        "devicesync",
        "geterror",
        "peekerror",
        "record",
        "waitevent",
        "syncthreads",
        "several blocks",
        "launch null",
        "launch named",
        "launch tail",
        "launch fire-and-forget",
        "host-pdl kernel",
        "pool limit",
        "sync-depth limit",
    ] {
        assert!(
            r.coverage.get(k).copied().unwrap_or(0) > 0,
            "no `{k}` in 300 programs"
        );
    }
}
