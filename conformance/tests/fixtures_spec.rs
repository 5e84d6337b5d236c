//! The fault fixtures are a valid spec whose quotes are verbatim.

use std::path::PathBuf;

#[test]
fn fault_fixtures_load() {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let seeds_dir = std::env::var_os("GRIDCHECK_SEEDS")
        .map(PathBuf::from)
        .unwrap_or_else(|| here.join("../../shared/seeds"));
    let seeds = gridcheck_spec::Seeds::load(&seeds_dir).ok();
    let spec = gridcheck_spec::load_dir(&here.join("fixtures/spec"), seeds.as_ref())
        .unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = spec.tests.iter().map(|t| t.name.as_str()).collect();
    for n in [
        "fault-hang",
        "fault-hang-own-timeout",
        "fault-litmus-hang",
        "fault-illegal-address",
        "fault-load",
        "fixture-ok",
    ] {
        assert!(names.contains(&n), "{names:?}");
    }
    let own = spec.test("fault-hang-own-timeout").map(|t| t.gpu_timeout);
    assert_eq!(
        own,
        Some(Some(3)),
        "fault-check.sh expects a 3 s gpu_timeout"
    );
    // The watch, not a timeout of its own, must end the litmus hang.
    let litmus = spec.test("fault-litmus-hang");
    assert!(
        litmus
            .is_some_and(|t| t.gpu_timeout.is_none()
                && matches!(t.body, gridcheck_spec::TestBody::Litmus(_))),
        "a litmus hang without a gpu_timeout"
    );
}
