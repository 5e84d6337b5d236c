//! The testing environment of a GPU (`conformance/tuning/<gpu-slug>.toml`,
//! else its architecture's, `conformance/tuning/sm_90.toml`):
//! how many instances a launch, how many launches, the incantations (random
//! delays, stress warps, slot permutation) and the GPU time a mutant may
//! take, chosen by the search of `--tune` over the points of
//! `conformance/tuning/search.toml`. The conformance run uses it, with the
//! further environments it names (`[[extra]]`): a litmus trial runs the
//! launches of each as well (none for one with 0 launches), and a mutant that survives the first
//! environment's budget goes on under each extra one with its own budget.
//! One environment cannot provoke everything: the random delays most
//! mutants need keep the blocks of a PDL primary from exiting together,
//! which the late-write mutants need.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// Where the tuned environments and the search points live.
pub const TUNING_DIR: &str = "conformance/tuning";

/// The most reductions a line burst may issue on one line.
pub const MAX_LINE_BURST: u32 = 1 << 16;

/// The most launches a budgeted run may make from one module load
/// (`budget_launches`).
pub const MAX_BUDGET_LAUNCHES: u32 = 4096;

/// One testing environment: the one type the tuned files, the harness's
/// flags (`conformance/src/flags.rs`), the GPU runner (`crates/gpu`, as
/// `Environment`) and the records share. A new incantation is a field here
/// (with its bound in `check`, its default and its flag) and its use in
/// the generated code; nothing copies the fields one by one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tuning {
    /// Litmus instances (blocks) per launch.
    pub instances: u32,
    /// Launches per litmus test in a conformance run.
    pub launches: u32,
    /// Upper bound of the random delay before each operation, in cycles.
    pub max_delay_cycles: u32,
    /// Words the stress warps hammer (0: no stress).
    pub stress_words: u32,
    /// A stress warp's iterations per phase.
    pub stress_iters: u32,
    /// Instances permuted over memory slots.
    pub permute: bool,
    /// The stress warps contend the test's own location lines (padding
    /// words) instead of `stress_words` of a separate buffer.
    #[serde(default)]
    pub stress_lines: bool,
    /// Reductions the block issues on the line of each location a phase
    /// stores to, before the phase's barrier (the line burst; 0: none).
    #[serde(default)]
    pub line_burst: u32,
    /// GPU seconds a mutant may run before it survives.
    pub mutant_budget_s: f64,
    /// Launches a mutant's or an escalation's run makes from one load of
    /// its module, between its budget checks ([`Tuning::budget_chunk`]):
    /// 0 (the default), `launches`, as a litmus trial's run makes them; 1,
    /// the module loaded again for every launch, which hides the PDL
    /// secondary's early start (lab/experiments/budget-launches/).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub budget_launches: u32,
    /// Further environments, run after this one (`[[extra]]`; none in an
    /// extra environment itself or in a search point).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra: Vec<SearchPoint>,
}

/// The built-in environment (no tuned file, `--tuning none`). Its
/// incantations were measured on an H100 (2026-11-22,
/// `crates/gpu/examples/litmus_smoke`): the allowed weak outcomes of the
/// CDP and PDL tests need long delays (up to 2^20 cycles, about 0.6 ms) and
/// launches that do not fill the GPU: with 256 instances per launch 7% of
/// the instances of mp-parent-child-no-syncthreads and 1.2% of
/// pdl-read-before-wait-may-be-stale showed them, with 1024 0.7% and 1%,
/// with 65536 none (the children and the PDL secondary only start once the
/// parent or primary grid is mostly done).
impl Default for Tuning {
    fn default() -> Tuning {
        Tuning {
            instances: 1024,
            launches: 32,
            max_delay_cycles: 1 << 20,
            stress_words: 1 << 16,
            stress_iters: 1 << 16,
            permute: true,
            stress_lines: false,
            line_burst: 0,
            mutant_budget_s: 1.0,
            budget_launches: 0,
            extra: Vec::new(),
        }
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A point of the search: a named environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchPoint {
    pub name: String,
    #[serde(flatten)]
    pub tuning: Tuning,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchFile {
    environment: Vec<SearchPoint>,
}

impl Tuning {
    /// The bounds a file must keep, with the field that breaks one. An
    /// extra environment may have 0 launches: it then runs for the mutants
    /// only, not in the litmus trials.
    fn check(&self, extra: bool) -> Result<(), String> {
        let bad = |field: &str, why: &str| Err(format!("field `{field}`: {why}"));
        if !(1..=1 << 16).contains(&self.instances) {
            return bad("instances", "must be 1 to 65536");
        }
        let least = u32::from(!extra);
        if !(least..=4096).contains(&self.launches) {
            return bad("launches", &format!("must be {least} to 4096"));
        }
        if self.max_delay_cycles > 1 << 24 {
            return bad("max_delay_cycles", "must be at most 16777216");
        }
        if self.stress_words > 1 << 24 {
            return bad("stress_words", "must be at most 16777216");
        }
        if self.stress_iters > 1 << 24 {
            return bad("stress_iters", "must be at most 16777216");
        }
        if self.line_burst > MAX_LINE_BURST {
            return bad("line_burst", &format!("must be at most {MAX_LINE_BURST}"));
        }
        if !(self.mutant_budget_s > 0.0 && self.mutant_budget_s <= 60.0) {
            return bad("mutant_budget_s", "must be more than 0 and at most 60");
        }
        if self.budget_launches > MAX_BUDGET_LAUNCHES {
            return bad(
                "budget_launches",
                &format!("must be at most {MAX_BUDGET_LAUNCHES}"),
            );
        }
        check_points(&self.extra, true).map_err(|e| format!("field `extra`: {e}"))?;
        if self.extra.iter().any(|p| !p.tuning.extra.is_empty()) {
            return bad(
                "extra",
                "an extra environment has no extra environments of its own",
            );
        }
        Ok(())
    }

    /// The launches a budgeted run (a mutant's, an escalation's) makes
    /// from one load of its module: `budget_launches`, else `launches`, at
    /// least 1.
    pub fn budget_chunk(&self) -> u32 {
        match self.budget_launches {
            0 => self.launches.max(1),
            n => n,
        }
    }

    /// Parses a tuned environment; errors name the file and the line.
    pub fn parse(text: &str, file: &Path) -> Result<Tuning, String> {
        let t: Tuning = toml::from_str(text).map_err(|e| located(file, text, &e))?;
        t.check(false)
            .map_err(|e| format!("{}: {e}", file.display()))?;
        Ok(t)
    }

    /// Reads `path`.
    pub fn load(path: &Path) -> Result<Tuning, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Tuning::parse(&text, path)
    }

    /// The tuned environment of the GPU named `gpu`, if one was stored,
    /// else its architecture's (`sm_90.toml`), if one was: the file used
    /// and what it holds.
    pub fn for_device(
        root: &Path,
        gpu: &str,
        sm: &str,
    ) -> Result<Option<(std::path::PathBuf, Tuning)>, String> {
        let dir = root.join(TUNING_DIR);
        for name in [crate::slug(gpu), crate::slug(sm).replace('-', "_")] {
            let path = dir.join(format!("{name}.toml"));
            if !name.is_empty() && path.is_file() {
                return Tuning::load(&path).map(|t| Some((path, t)));
            }
        }
        Ok(None)
    }
}

/// Parses the search points; errors name the file, the line and the point.
pub fn parse_search(text: &str, file: &Path) -> Result<Vec<SearchPoint>, String> {
    let s: SearchFile = toml::from_str(text).map_err(|e| located(file, text, &e))?;
    if s.environment.is_empty() {
        return Err(format!("{}: no [[environment]]", file.display()));
    }
    check_points(&s.environment, false).map_err(|e| format!("{}: {e}", file.display()))?;
    if let Some(p) = s.environment.iter().find(|p| !p.tuning.extra.is_empty()) {
        return Err(format!(
            "{}: environment `{}`: field `extra`: a search point has no extra environments",
            file.display(),
            p.name
        ));
    }
    Ok(s.environment)
}

/// Each point within bounds, named with letters, digits, `-` and `_`, once.
fn check_points(points: &[SearchPoint], extra: bool) -> Result<(), String> {
    let mut names = std::collections::BTreeSet::new();
    for p in points {
        p.tuning
            .check(extra)
            .map_err(|e| format!("environment `{}`: {e}", p.name))?;
        if p.name.is_empty()
            || !p
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(format!(
                "environment `{}`: field `name`: letters, digits, `-` and `_` only",
                p.name
            ));
        }
        if !names.insert(p.name.clone()) {
            return Err(format!("environment `{}` is named twice", p.name));
        }
    }
    Ok(())
}

fn located(file: &Path, text: &str, e: &toml::de::Error) -> String {
    let line = e.span().map(|s| {
        1 + text.as_bytes()[..s.start.min(text.len())]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
    });
    match line {
        Some(l) => format!("{}:{l}: {}", file.display(), e.message()),
        None => format!("{}: {}", file.display(), e.message()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every environment file the project keeps parses: the tuned files
    /// and the search's points (`conformance/tuning/`), and the points of
    /// the lab's experiments (`lab/experiments/*/*.toml`).
    #[test]
    fn every_kept_environment_file_parses() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut seen = 0;
        let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(root.join("conformance/tuning"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        for e in std::fs::read_dir(root.join("lab/experiments")).unwrap() {
            let dir = e.unwrap().path();
            if dir.is_dir() {
                files.extend(std::fs::read_dir(dir).unwrap().map(|f| f.unwrap().path()));
            }
        }
        for f in files
            .iter()
            .filter(|f| f.extension().is_some_and(|x| x == "toml"))
        {
            let text = std::fs::read_to_string(f).unwrap();
            if text.contains("[[environment]]") {
                let points = parse_search(&text, f).unwrap_or_else(|e| panic!("{e}"));
                assert!(!points.is_empty(), "{}", f.display());
            } else {
                Tuning::load(f).unwrap_or_else(|e| panic!("{e}"));
            }
            seen += 1;
        }
        assert!(seen >= 4, "the tuned files and the search: {files:?}");
    }

    const GOOD: &str = "instances = 256\nlaunches = 32\nmax_delay_cycles = 1048576\n\
        stress_words = 65536\nstress_iters = 65536\npermute = true\nmutant_budget_s = 1.0\n";

    #[test]
    fn a_tuned_environment_parses_and_its_bounds_are_named() {
        let p = Path::new("t.toml");
        let t = Tuning::parse(GOOD, p).expect("parses");
        assert_eq!(t.instances, 256);
        let e = Tuning::parse(&GOOD.replace("256", "0"), p).unwrap_err();
        assert!(e.contains("t.toml") && e.contains("`instances`"), "{e}");
        let e = Tuning::parse(&GOOD.replace("1.0", "-1.0"), p).unwrap_err();
        assert!(e.contains("`mutant_budget_s`"), "{e}");
        let e = Tuning::parse(&format!("{GOOD}colour = 1\n"), p).unwrap_err();
        assert!(e.starts_with("t.toml:8:") && e.contains("colour"), "{e}");
        assert_eq!(t.line_burst, 0, "no burst unless the file asks for one");
        let t = Tuning::parse(&format!("{GOOD}line_burst = 1024\n"), p).expect("parses");
        assert_eq!(t.line_burst, 1024);
        let e = Tuning::parse(&format!("{GOOD}line_burst = 65537\n"), p).unwrap_err();
        assert!(e.contains("`line_burst`"), "{e}");
        assert_eq!(
            t.budget_chunk(),
            t.launches,
            "a budgeted run is shaped as the trial's"
        );
        let t = Tuning::parse(&format!("{GOOD}budget_launches = 1\n"), p).expect("parses");
        assert_eq!(t.budget_chunk(), 1);
        let mutants_only = Tuning {
            launches: 0,
            budget_launches: 0,
            ..t.clone()
        };
        assert_eq!(mutants_only.budget_chunk(), 1, "a mutants-only environment");
        let e = Tuning::parse(&format!("{GOOD}budget_launches = 4097\n"), p).unwrap_err();
        assert!(e.contains("`budget_launches`"), "{e}");
        let e = Tuning::parse("instances = \"many\"\n", p).unwrap_err();
        assert!(e.starts_with("t.toml:1:"), "{e}");
    }

    #[test]
    fn extra_environments_parse_and_their_errors_name_them() {
        let p = Path::new("t.toml");
        let extra = format!(
            "{GOOD}\n[[extra]]\nname = \"late\"\n{}",
            GOOD.replace("256", "64")
        );
        let t = Tuning::parse(&extra, p).expect("parses");
        assert_eq!(t.extra.len(), 1);
        assert_eq!(
            (t.extra[0].name.as_str(), t.extra[0].tuning.instances),
            ("late", 64)
        );
        // Round trip through the records' JSON keeps them; none: no field.
        let back: Tuning = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(back, t);
        let plain = Tuning::parse(GOOD, p).unwrap();
        assert!(!serde_json::to_string(&plain).unwrap().contains("extra"));
        let e = Tuning::parse(&extra.replace("= 64", "= 0"), p).unwrap_err();
        assert!(
            e.contains("t.toml")
                && e.contains("field `extra`: environment `late`: field `instances`"),
            "{e}"
        );
        // 0 launches: mutants only, allowed for an extra environment alone.
        let (head, tail) = extra.split_at(extra.find("[[extra]]").unwrap());
        let zero = format!("{head}{}", tail.replace("launches = 32", "launches = 0"));
        assert_eq!(
            Tuning::parse(&zero, p).expect("parses").extra[0]
                .tuning
                .launches,
            0
        );
        let e = Tuning::parse(&GOOD.replace("launches = 32", "launches = 0"), p).unwrap_err();
        assert!(e.contains("field `launches`: must be 1 to 4096"), "{e}");
        let nested = format!("{extra}\n[[extra.extra]]\nname = \"n\"\n{GOOD}");
        let e = Tuning::parse(&nested, p).unwrap_err();
        assert!(e.contains("no extra environments of its own"), "{e}");
        let twice = format!("{extra}\n[[extra]]\nname = \"late\"\n{GOOD}");
        assert!(
            Tuning::parse(&twice, p)
                .unwrap_err()
                .contains("named twice")
        );
        let point = format!(
            "[[environment]]\nname = \"a\"\n{GOOD}\n[[environment.extra]]\nname = \"b\"\n{GOOD}"
        );
        let e = parse_search(&point, Path::new("s.toml")).unwrap_err();
        assert!(e.contains("environment `a`: field `extra`"), "{e}");
    }

    #[test]
    fn a_gpu_without_its_own_file_takes_its_architectures() {
        let root = std::env::temp_dir().join(format!("gridcheck-tuning-{}", std::process::id()));
        let dir = root.join(TUNING_DIR);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("sm_90.toml"), GOOD).unwrap();
        std::fs::write(dir.join("gpu-a.toml"), GOOD.replace("256", "64")).unwrap();
        let (path, t) = Tuning::for_device(&root, "GPU A", "sm_90")
            .unwrap()
            .unwrap();
        assert_eq!(
            (path.file_name().unwrap(), t.instances),
            ("gpu-a.toml".as_ref(), 64)
        );
        let (path, t) = Tuning::for_device(&root, "GPU B", "sm_90")
            .unwrap()
            .unwrap();
        assert_eq!(
            (path.file_name().unwrap(), t.instances),
            ("sm_90.toml".as_ref(), 256)
        );
        assert!(
            Tuning::for_device(&root, "GPU B", "sm_100")
                .unwrap()
                .is_none()
        );
        std::fs::write(dir.join("sm_90.toml"), "instances = 0\n").unwrap();
        let e = Tuning::for_device(&root, "GPU B", "sm_90").unwrap_err();
        assert!(e.contains("sm_90.toml"), "{e}");
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// The architecture's file is the H100's environment: the H200 runs
    /// as the H100 does until it is tuned.
    #[test]
    fn each_gpu_has_its_file_and_another_sm_90_gpu_gets_the_one_good_on_both() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let file = |gpu: &str| Tuning::for_device(&root, gpu, "sm_90").unwrap().unwrap();
        let (path, arch) = file("NVIDIA GH200");
        assert!(
            path.ends_with("conformance/tuning/sm_90.toml"),
            "{}",
            path.display()
        );
        let (path, h100) = file("NVIDIA H100 80GB HBM3");
        assert!(
            path.ends_with("nvidia-h100-80gb-hbm3.toml"),
            "{}",
            path.display()
        );
        let (path, h200) = file("NVIDIA H200");
        assert!(path.ends_with("nvidia-h200.toml"), "{}", path.display());
        // The fallback is the H100's environment, which the H200's search
        // found as good as any on the tests it held out.
        assert_eq!(arch, h100);
        // The H200's litmus trials run as the fallback's: its search's
        // point runs for the mutants only.
        let litmus = |t: &Tuning| Tuning {
            extra: t
                .extra
                .iter()
                .filter(|e| e.tuning.launches > 0)
                .cloned()
                .collect(),
            ..t.clone()
        };
        assert_eq!(litmus(&h200), litmus(&arch));
        assert!(h200.extra.iter().any(|e| e.tuning.launches == 0));
    }

    #[test]
    fn search_points_are_named_once() {
        let p = Path::new("s.toml");
        let one = format!("[[environment]]\nname = \"a\"\n{GOOD}");
        assert_eq!(parse_search(&one, p).expect("parses").len(), 1);
        let e = parse_search(&format!("{one}{one}"), p).unwrap_err();
        assert!(e.contains("named twice"), "{e}");
        let e = parse_search(&one.replace("\"a\"", "\"a b\""), p).unwrap_err();
        assert!(e.contains("field `name`"), "{e}");
        let e = parse_search("", p).unwrap_err();
        assert!(e.contains("s.toml"), "{e}");
    }
}
