//! The plan of a run: which trials and with what. The options, the spec,
//! the facts that judge the results, the toolchain found, the testing
//! environment a GPU gets and the commit the records name; the trials of
//! each tier are made from it (`tiers.rs`, `sass.rs`, `mutants.rs`).

use gridcheck_gpu::DeviceInfo;
use gridcheck_report::{Facts, Tier, ToolchainRecord};
use gridcheck_spec::{Seeds, Spec};
use gridcheck_toolchain::{Nvcc, Toolchain};

use crate::facts;
use crate::options::Options;
use crate::tuning::Tuned;

/// What runs, and with what (see the module docs).
pub struct Plan {
    pub opts: Options,
    pub spec: Spec,
    /// The known facts (`conformance/facts/`), every one: where each
    /// applies is decided trial by trial.
    pub facts: Facts,
    /// The toolchain (`--toolchain`'s, else the default nvcc's), found when
    /// a tier needs it: the static and sass tiers compile with its nvcc, and
    /// the GPU records name its version ([`Plan::toolkit`]).
    pub toolchain: Result<Toolchain, String>,
    /// The testing environment of the GPU runs, and where it came from.
    pub tuned: Tuned,
    /// The checkout's commit, which every record carries.
    pub commit: Option<String>,
    /// The environments a quality warning's escalation tries, in order
    /// (`escalate.rs`); none when escalation is off or no GPU runs.
    pub escalation: Vec<gridcheck_report::SearchPoint>,
}

/// The spec of the options (with the seeds' quote check when the seeds are
/// there). Spec errors are returned, located.
pub fn load_spec(opts: &Options) -> Result<Spec, String> {
    let seeds = match &opts.seeds {
        Some(dir) => Some(
            Seeds::load(dir)
                .map_err(|e| format!("cannot read the seeds in {}: {e}", dir.display()))?,
        ),
        None => None,
    };
    gridcheck_spec::load_dir(&opts.spec, seeds.as_ref()).map_err(|e| e.to_string())
}

impl Plan {
    /// The plan of the options for the spec, on `device` (the GPU tier's
    /// first device, if it can run): its environment, the toolchain when a
    /// tier needs nvcc, and the facts.
    pub fn new(opts: Options, spec: Spec, device: Option<&DeviceInfo>) -> Result<Plan, String> {
        if opts.toolchains.len() > 1 {
            return Err(format!(
                "--toolchain names {}: the harness runs one toolchain at a time (`cargo xtask \
                 conformance` runs it once a toolchain)",
                opts.toolchains.join(", ")
            ));
        }
        let tuned = opts.tuning.choose(&opts.root, device)?;
        let toolchain = if opts.runs(Tier::Static) || opts.runs(Tier::Sass) || device.is_some() {
            match opts.toolchain() {
                Some(name) => gridcheck_toolchain::find_toolchain(&opts.root, name),
                None => gridcheck_toolchain::find_nvcc(&opts.root).map(Toolchain::of_nvcc),
            }
        } else {
            Err("no tier that needs nvcc is on".into())
        };
        // Every fact, whatever this machine can run; they name trials of
        // the checkout's own spec.
        let own_spec = std::fs::canonicalize(&opts.spec).ok()
            == std::fs::canonicalize(opts.root.join("spec")).ok();
        let facts = facts::load_checked(
            &opts.root.join(gridcheck_report::FACTS_DIR),
            &opts.root,
            own_spec.then_some(&spec),
        )?;
        let commit = gridcheck_toolchain::run_commit(&opts.root);
        let escalation = if opts.escalate.on && device.is_some() {
            let search = crate::escalate::search_points(&opts.root, &opts.escalate)?;
            crate::escalate::steps(&tuned.tuning, &search, opts.escalate.budget_s)
        } else {
            Vec::new()
        };
        Ok(Plan {
            opts,
            spec,
            facts,
            toolchain,
            tuned,
            commit,
            escalation,
        })
    }

    /// The toolchain's nvcc, or why there is none.
    pub fn nvcc(&self) -> Result<&Nvcc, &String> {
        self.toolchain.as_ref().map(|t| &t.nvcc)
    }

    /// nvcc's version for the GPU records: the device runtime the facts
    /// judge by (the kernels link the `libcudadevrt` of the toolkit that
    /// built them, the same release as the harness's nvcc on a bundle's
    /// GPU machine).
    pub fn toolkit(&self) -> Option<String> {
        self.nvcc().ok().map(|n| n.version.clone())
    }

    /// The run's toolchain as records name it (`dis`: the disassembler the
    /// machine-code tier used).
    pub fn toolchain_record(&self, dis: Option<&std::path::Path>) -> ToolchainRecord {
        match &self.toolchain {
            Ok(t) => ToolchainRecord {
                release: t.name.clone(),
                nvcc: t.nvcc.version.clone(),
                devrt: t.devrt_identity(),
                source: format!("{} ({})", t.dir.display(), t.nvcc.found_via),
                disassembler: dis.map(|d| d.display().to_string()),
            },
            Err(e) => ToolchainRecord {
                release: String::new(),
                nvcc: String::new(),
                devrt: String::new(),
                source: format!("none: {e}"),
                disassembler: None,
            },
        }
    }

    /// The status and message of a trial whose tier cannot run here:
    /// not-supported, or a failure when the tier is required.
    pub fn unavailable(&self, tier: Tier, reason: &str) -> (gridcheck_report::Status, String) {
        let status = if self.required(tier) {
            gridcheck_report::Status::Fail
        } else {
            gridcheck_report::Status::NotSupported
        };
        (status, format!("not run: {reason}"))
    }

    /// Whether a tier that cannot run here is an error rather than ignored:
    /// `--tier` named it, or `GRIDCHECK_REQUIRE_TIERS` (comma-separated
    /// tiers) lists it (CI sets it for the static and sass tiers so that a
    /// broken toolkit install cannot pass silently).
    pub fn required(&self, tier: Tier) -> bool {
        (self.opts.tiers_given && self.opts.runs(tier))
            || std::env::var("GRIDCHECK_REQUIRE_TIERS")
                .is_ok_and(|v| v.split(',').any(|t| t.trim() == tier.as_str()))
    }
}
