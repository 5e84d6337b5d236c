//! A litmus test's final state (every observable's value) and how it is
//! written; shared by the test types and the condition language.

use std::collections::BTreeMap;

/// A final state: every observable's value, keyed as in
/// [`Litmus::observables`].
pub type State = BTreeMap<String, u32>;

/// Renders a state as `child.t0.r0=1; x=1` in the given observable order
/// (a segment of several words of a tile register as its set of values,
/// `k.t0.r0[0..8]={0,1}`).
pub fn render_state(order: &[String], state: &State) -> String {
    order
        .iter()
        .map(|k| match state.get(k) {
            Some(v) => format!("{k}={}", crate::place::show_value(k, *v)),
            None => format!("{k}=?"),
        })
        .collect::<Vec<_>>()
        .join("; ")
}
