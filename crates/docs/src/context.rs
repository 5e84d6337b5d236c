//! What every page is rendered from: the [`Inputs`] read from a checkout
//! (spec, recorded runs, known facts, baselines, shapes, user programs) and the [`Ctx`] derived
//! from them (the newest run of each GPU, the rules grouped by seed and
//! section), and the paths pages link to.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gridcheck_report::{FACTS_DIR, Fact, Facts, RecordedFinding};
use gridcheck_sass::programs::Program;
use gridcheck_spec::shapes::Shape;
use gridcheck_spec::{Litmus, Spec};

use crate::Result;
use crate::bench::{self, Baseline};
use crate::results::{self, Run};
use crate::sections::{SeedGroup, group};
use crate::text::slug;

/// Everything a site is made from.
#[derive(Debug)]
pub struct Inputs {
    /// The repository root (paths on pages are shown relative to it).
    pub root: PathBuf,
    pub spec: Spec,
    /// The seed documents, for section order (see [`crate::sections`]).
    pub seeds_dir: Option<PathBuf>,
    /// Every recorded run.
    pub runs: Vec<Run>,
    /// The known facts (`conformance/facts/`).
    pub facts: Vec<Fact>,
    pub baselines: Vec<Baseline>,
    /// `spec/shapes.yaml`, checked against the spec.
    pub shapes: Vec<Shape>,
    /// The machine-code tier's user programs (`kernels/sass/programs.toml`).
    pub programs: Vec<Program>,
    /// Every mutant's program, by name, as the spec makes it now
    /// (`gridcheck_mutate::programs`): what a fact's shape is matched against.
    pub mutant_programs: BTreeMap<String, Litmus>,
    /// The recorded campaigns' findings (`records/<gpu>/campaigns/`).
    pub findings: Vec<RecordedFinding>,
}

impl Inputs {
    /// Reads the recorded runs, the known facts, the baselines, the shapes
    /// and the machine-code tier's user programs of the checkout at `root`
    /// (`records`, `conformance/facts`, `conformance/bench/baselines`,
    /// `spec/shapes.yaml`, `kernels/sass/programs.toml`), the campaigns'
    /// findings under `records`, and every mutant's program. A record written under a test's
    /// former name is shown as the test's (see
    /// [`TrialRecord::under_current_name`](gridcheck_report::TrialRecord::under_current_name)).
    pub fn load(root: &Path, spec: Spec, seeds_dir: Option<PathBuf>) -> Result<Inputs> {
        let mut runs = results::load_runs(&root.join("records"))?;
        for run in &mut runs {
            gridcheck_report::under_current_names(&mut run.records, &spec);
            for v in &mut run.variants {
                gridcheck_report::under_current_names(&mut v.records, &spec);
            }
        }
        let shapes = gridcheck_spec::shapes::load_shapes_file(&root.join("spec"), &spec)
            .map_err(|e| e.to_string())?;
        let programs =
            gridcheck_sass::programs::load(&root.join(gridcheck_sass::programs::PROGRAMS_DIR))?;
        Ok(Inputs {
            runs,
            shapes,
            programs,
            mutant_programs: gridcheck_mutate::programs(&spec),
            findings: gridcheck_report::recorded_findings(root)?,
            facts: Facts::load_all(&root.join(FACTS_DIR), root)?.entries,
            baselines: bench::load_dir(&root.join("conformance/bench/baselines"))?,
            root: root.to_path_buf(),
            spec,
            seeds_dir,
        })
    }
}

/// What the pages are rendered from: the inputs, the newest run of each GPU
/// and the rules grouped by seed and section.
pub(crate) struct Ctx<'a> {
    pub inputs: &'a Inputs,
    pub latest: Vec<&'a Run>,
    pub groups: Vec<SeedGroup<'a>>,
    /// `gridcheck_kernelgen::test_hash` of every test of the spec, by name,
    /// and by each of its former names the hash it had under that name
    /// (`test_hash_as`): what a record written under the name carries if
    /// the test has not changed since.
    pub test_hashes: BTreeMap<&'a str, String>,
}

impl<'a> Ctx<'a> {
    pub fn new(inputs: &'a Inputs) -> Ctx<'a> {
        Ctx {
            inputs,
            latest: results::latest(&inputs.runs),
            groups: group(&inputs.spec, &inputs.root, inputs.seeds_dir.as_deref()),
            test_hashes: inputs
                .spec
                .tests
                .iter()
                .flat_map(|t| {
                    std::iter::once((t.name.as_str(), gridcheck_kernelgen::test_hash(t))).chain(
                        t.formerly
                            .iter()
                            .map(|f| (f.as_str(), gridcheck_kernelgen::test_hash_as(t, f))),
                    )
                })
                .collect(),
        }
    }
}

/// The seed page's path under `src/`.
pub fn seed_path(seed: &str) -> String {
    format!("seeds/{}.md", slug(seed.trim_end_matches(".txt")))
}
