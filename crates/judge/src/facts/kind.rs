//! What a fact says happened ([`FactKind`]), as its `kind` field names it.

use serde::Deserialize;

/// What a fact says happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FactKind {
    /// The trial fails: the hardware, driver or compiler did something the
    /// guide rules out (or did not do what it requires).
    Discrepancy,
    /// The trial does not finish: it times out.
    Hang,
    /// Stronger than the guide: an outcome the guide allows was never
    /// observed, in an experiment that would have shown it (more instances,
    /// other environments, a control that shows the mechanism works). The
    /// trial is a quality warning; if the outcome ever shows, the fact has
    /// `changed`.
    Unobserved,
    /// A device-runtime call with valid arguments returns an error in some
    /// instances: the suite's trial loses those instances (its status
    /// stands), a campaign's program is a launch error. Its shape says
    /// which calls (a campaign's launch-error finding of it ends `known`).
    LaunchError,
}

impl FactKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FactKind::Discrepancy => "discrepancy",
            FactKind::Hang => "hang",
            FactKind::Unobserved => "unobserved",
            FactKind::LaunchError => "launch-error",
        }
    }
}
