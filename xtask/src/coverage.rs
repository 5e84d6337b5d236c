//! `cargo xtask spec coverage`: what the spec covers, and what it cannot run
//! (the tables are `gridcheck_docs::coverage`, shared with the site's page).

use gridcheck_spec::Spec;

/// The coverage report as text.
pub fn report(spec: &Spec) -> String {
    gridcheck_docs::coverage::Coverage::of(spec).text()
}
