//! The litmus7-style text block of a hardware litmus trial.

use std::fmt::Write as _;

use gridcheck_spec::{Litmus, render_state};

use crate::{HardwareResult, Row};

/// The litmus7-style block for a hardware litmus trial: as litmus7's, it
/// starts with the test's name and the verdict the spec expects
/// (`Test mp-parent-child forbidden`).
pub fn litmus_block(test: &str, litmus: &Litmus, hw: &HardwareResult) -> String {
    let order = litmus.observables();
    let mut s = String::new();
    let _ = writeln!(s, "Test {test} {}", litmus.expect);
    let _ = writeln!(
        s,
        "  Histogram ({} states, {} instances, seed {:#x})",
        hw.rows.len(),
        hw.instances,
        hw.seed
    );
    let mut rows: Vec<&Row> = hw.rows.iter().collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r.count));
    for r in rows {
        let mark = match (r.satisfies, r.modeled) {
            (true, true) => "*>",
            (false, true) => ":>",
            (true, false) => "*!",
            (false, false) => ":!",
        };
        let _ = writeln!(
            s,
            "  {:>12} {mark} {}",
            r.count,
            render_state(&order, &r.state)
        );
    }
    let _ = writeln!(
        s,
        "  Condition {} | Positive: {}, Negative: {} | Observation {} | {:.0} instances/s, {:.0} positive/s",
        litmus.condition,
        hw.positive,
        hw.negative,
        hw.observation,
        hw.rate(),
        hw.positive_rate()
    );
    s
}
