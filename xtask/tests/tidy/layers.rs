//! The layers of the records' crates, for the layering check: the record
//! vocabulary (`crates/record`), its storage (`crates/store`), the judging
//! with the known facts (`crates/judge`), the renderers (`crates/report`),
//! each depending only on those below it. Cargo refuses a cycle of normal
//! dependencies, but not one closed through a dev-dependency, so the check
//! reads every section of a manifest.

/// Each crate and the packages above it, which its manifest must not name.
pub const BELOW: &[(&str, &[&str])] = &[
    (
        "crates/record",
        &["gridcheck-store", "gridcheck-judge", "gridcheck-report"],
    ),
    ("crates/store", &["gridcheck-judge", "gridcheck-report"]),
    ("crates/judge", &["gridcheck-report"]),
];

/// Whether a manifest's text names `package` as a dependency, in any
/// section: `name.workspace = true`, `name = { .. }`, a renamed one
/// (`package = "name"`) or a table of its own (`[dependencies.name]`).
pub fn depends_on(manifest: &str, package: &str) -> bool {
    manifest.lines().map(str::trim).any(|l| {
        let key = match l.strip_prefix('[') {
            Some(table) => table.trim_end_matches(']').rsplit('.').next(),
            None => l.split(['.', '=', ' ']).next(),
        };
        key == Some(package)
            || l.replace(' ', "")
                .contains(&format!("package=\"{package}\""))
    })
}

#[test]
fn the_layering_check_sees_what_it_checks() {
    for manifest in [
        "[dev-dependencies]\ngridcheck-report.workspace = true",
        "[dependencies]\ngridcheck-report = { path = \"../report\" }",
        "[dependencies]\nreport = { path = \"../report\", package = \"gridcheck-report\" }",
        "[dependencies.gridcheck-report]\npath = \"../report\"",
    ] {
        assert!(depends_on(manifest, "gridcheck-report"), "{manifest}");
    }
    // A mention, or a package whose name starts alike, is no dependency.
    let mentions = "[package]\nname = \"gridcheck-judge\"\ndescription = \"below gridcheck-report\"\n\
                    [dependencies]\ngridcheck-reporter = \"1\"";
    assert!(!depends_on(mentions, "gridcheck-report"));
    // The crates the check names exist.
    for (krate, _) in BELOW {
        assert!(
            super::root().join(krate).join("Cargo.toml").is_file(),
            "{krate}"
        );
    }
}
