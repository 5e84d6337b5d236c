//! `cargo xtask spec coverage`: what the spec covers, and what it cannot run
//! (the tables are `gridcheck_docs::coverage`, shared with the site's page);
//! `--sentences`: every sentence of the seeds, quoted by a rule or listed as
//! not a claim (`gridcheck_spec::sentences`); `--sentences --all`: every sentence with
//! its standing.

use std::path::Path;

use gridcheck_spec::Spec;
use gridcheck_spec::sentences::{self, LIST_FILE};

/// The coverage report as text.
pub fn report(spec: &Spec) -> String {
    gridcheck_docs::coverage::Coverage::of(spec).text()
}

/// The list of sentences that are not claims, validated.
pub fn non_claims(root: &Path) -> crate::Result<Vec<sentences::ListedNonClaim>> {
    let path = root.join("spec").join(LIST_FILE);
    let src = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    sentences::load_list(Path::new(&format!("spec/{LIST_FILE}")), &src).map_err(|e| e.to_string())
}

/// The sentence coverage report; without the seeds, a line saying so (the
/// list is still validated).
pub fn sentences(root: &Path, spec: &Spec, every: bool) -> crate::Result<String> {
    let list = non_claims(root)?;
    let Some(dir) = crate::seeds_dir(root) else {
        return Ok(format!(
            "sentence coverage not computed: no seeds (set GRIDCHECK_SEEDS or put them in ../shared/seeds); spec/{LIST_FILE}: {} entries\n",
            list.len()
        ));
    };
    let seeds = gridcheck_spec::Seeds::load(&dir)
        .map_err(|e| format!("cannot read the seeds in {}: {e}", dir.display()))?;
    let cov = sentences::coverage(
        &seeds.raw(),
        &spec.rules,
        &list,
        Path::new(&format!("spec/{LIST_FILE}")),
    )
    .map_err(|e| e.to_string())?;
    Ok(if every {
        cov.every_sentence()
    } else {
        cov.text()
    })
}
