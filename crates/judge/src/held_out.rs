//! The tests a tuning search holds out (`conformance --mutants --tune`): a
//! fixed share of the spec's tests, by a hash of their names. Their
//! mutants run under each search point like the rest, but the point is
//! chosen on the others' kills; the mutation score counts the held-out
//! kills apart ([`crate::Score`]'s `held_out`), so whether a tuned
//! environment generalizes shows on tests it was not chosen on.

/// The share of the tests a search holds out, in percent.
pub const HOLD_OUT_PERCENT: u64 = 25;

/// Whether a search holds `test` out: FNV-1a of its name, modulo 100,
/// under [`HOLD_OUT_PERCENT`] (a test keeps its side across runs and
/// machines, and a new test falls on either side by its name alone).
pub fn held_out(test: &str) -> bool {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in test.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h % 100 < HOLD_OUT_PERCENT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn about_a_quarter_of_the_spec_is_held_out_by_name() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec");
        let spec = gridcheck_spec::load_dir(&root, None).unwrap();
        let n = spec.tests.len();
        let held = spec.tests.iter().filter(|t| held_out(&t.name)).count();
        // 25 % of a few hundred names, within a wide margin of chance.
        assert!(held * 100 > n * 15 && held * 100 < n * 35, "{held} of {n}");
        // A name keeps its side.
        assert_eq!(
            held_out("pdl-no-wait-may-be-stale"),
            held_out("pdl-no-wait-may-be-stale")
        );
    }
}
