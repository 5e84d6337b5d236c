//! Every litmus test of the spec fits the GPU histogram: its final states
//! have bins (so the common case never goes through the record buffer), and
//! each state round-trips through its bin.

use std::path::Path;

use gridcheck_gpu::histogram::{MAX_BINS, Plan};
use gridcheck_spec::TestBody;

#[test]
fn every_spec_litmus_test_has_a_bounded_histogram() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec");
    let spec = gridcheck_spec::load_dir(&dir, None).unwrap_or_else(|e| panic!("{e}"));
    let mut checked = 0;
    for t in &spec.tests {
        let TestBody::Litmus(l) = &t.body else {
            continue;
        };
        let plan = Plan::new(l, &gridcheck_kernelgen::layout(l));
        assert!(
            plan.bins > 0 && plan.bins <= MAX_BINS,
            "{}: {} observables over {} values do not fit in {MAX_BINS} bins",
            t.name,
            plan.names.len(),
            plan.domain.len()
        );
        assert_eq!(plan.names, l.observables(), "{}", t.name);
        for key in [0, plan.bins - 1, plan.bins / 2] {
            assert_eq!(plan.key(&plan.state(key)), Some(key), "{}", t.name);
        }
        checked += 1;
    }
    assert!(checked > 50, "only {checked} litmus tests");
}
