//! The fuzz run `cargo test` makes: a fixed budget (200 spec inputs and 200
//! damaged results files),
//! the same inputs every time. A bigger run:
//!
//! ```text
//! GRIDCHECK_FUZZ_CASES=100000 GRIDCHECK_FUZZ_SEED=7 \
//!     cargo test --release -p gridcheck-fuzz -- --nocapture
//! ```
//!
//! (`GRIDCHECK_FUZZ_CASES` spec inputs and as many damaged results files.)
//! One test in this binary, so that the peak memory measured per input is
//! this run's alone.

use std::path::Path;
use std::time::Duration;

use gridcheck_fuzz::{Corpus, run};

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

#[test]
fn no_input_panics_passes_a_limit_or_takes_long() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let corpus = Corpus::load(&root);
    assert!(corpus.spec_files.len() > 10);
    let cases = env_u64("GRIDCHECK_FUZZ_CASES").unwrap_or(200) as u32;
    let seed = env_u64("GRIDCHECK_FUZZ_SEED").unwrap_or(0);
    let stats = run(&corpus, cases, cases, seed);
    println!("fuzz, seed {seed}:\n{stats}");
    for f in &stats.failures {
        println!("  {f}");
    }
    assert_eq!(stats.spec_inputs, u64::from(cases));
    assert!(stats.spec_accepted > 0, "no mutant was accepted: {stats}");
    assert!(stats.errors > 0, "no mutant was refused: {stats}");
    assert_eq!(stats.panics, 0, "{stats}");
    assert_eq!(stats.over_limit, 0, "{stats}");
    assert_eq!(stats.errors_without_line, 0, "{stats}");
    // CPU time, so that a busy machine does not count; generous for an
    // unoptimized build (the release run reports its own figure). Where
    // the thread's CPU time cannot be read, the wall-clock time.
    let worst = stats.max_cpu.unwrap_or(stats.max_time);
    assert!(worst < Duration::from_secs(3), "{stats}");
    if let Some(kib) = stats.max_rss_kib {
        assert!(kib < 512 * 1024, "{stats}");
    }
}
