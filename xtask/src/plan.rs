//! `cargo xtask plan [--arch all|sm_XX,..] [--update-readme]`: per GPU
//! architecture, how many of the spec's GPU trials would run there and
//! through which binary, computed from the code alone (no GPU, no nvcc):
//! the build plans (`gridcheck_kernelgen::build_plan`, `ptx_arch`) over the
//! architectures `cargo xtask build` targets, the rule profiles
//! (`profile_runs_on`) and the harness's binary choice
//! (`gridcheck_toolchain::binary::choose`), as built and forced through
//! the PTX (`--binary ptx`). README.md's table is this command's output
//! (`--update-readme` writes it, `--check` fails when it is stale); a test
//! keeps it current.

use std::path::Path;

use gridcheck_spec::{Spec, TestBody};
use gridcheck_toolchain::binary::{Arch, Built, ChoiceKind, FileKind, Mode, choose};

use crate::Result;

/// What `cargo xtask build --arch all` builds for with nvcc 13.0.88 from
/// PyPI: every architecture it targets but sm_87 and sm_88, whose device
/// runtime (`libcudadevrt.a`) it does not carry.
pub const BUILT: [&str; 10] = [
    "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_103", "sm_110", "sm_120", "sm_121",
];

/// The devices of the table: every architecture nvcc 13.0 targets.
pub const DEVICES: [&str; 12] = gridcheck_toolchain::FALLBACK_ARCHS;

/// One device's count.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Count {
    pub trials: usize,
    pub exact: usize,
    pub compatible: usize,
    pub ptx: usize,
    /// Forced through the PTX (`--binary ptx`).
    pub forced_ptx: usize,
}

impl Count {
    pub fn run(&self) -> usize {
        self.exact + self.compatible + self.ptx
    }
}

/// The GPU trials of the spec on a device of architecture `device`, with
/// the test binaries built for `built` and each test's PTX for the lowest
/// of `BUILT` its plan allows (as `cargo xtask build --arch <built>` makes
/// them).
pub fn count(spec: &Spec, device: Arch, built: &[String]) -> Count {
    let all: Vec<String> = BUILT.map(String::from).to_vec();
    let mut c = Count::default();
    for (rule, test) in spec.pairs() {
        if !matches!(
            test.body,
            TestBody::Litmus(_) | TestBody::Runtime(_) | TestBody::Host(_)
        ) {
            continue;
        }
        c.trials += 1;
        if gridcheck_kernelgen::profile_runs_on(rule.profile, device.major).is_err() {
            continue;
        }
        let executable = gridcheck_kernelgen::builds_executable(test);
        let mut files: Vec<Built> = built
            .iter()
            .filter(|a| matches!(gridcheck_kernelgen::build_plan(test, a), Ok(Some(_))))
            .filter_map(|a| Arch::parse(a))
            .map(|arch| Built {
                arch,
                kind: if executable {
                    FileKind::Executable
                } else {
                    FileKind::Cubin
                },
                file: Default::default(),
            })
            .collect();
        if let Some(a) = gridcheck_kernelgen::ptx_arch(test, &all).and_then(Arch::parse) {
            files.push(Built {
                arch: a,
                kind: FileKind::Ptx,
                file: Default::default(),
            });
        }
        match choose(device, &files, Mode::Auto).map(|c| c.kind) {
            Ok(ChoiceKind::Exact) => c.exact += 1,
            Ok(ChoiceKind::Compatible) => c.compatible += 1,
            Ok(ChoiceKind::PtxJit) => c.ptx += 1,
            Err(_) => {}
        }
        if choose(device, &files, Mode::Ptx).is_ok() {
            c.forced_ptx += 1;
        }
    }
    c
}

/// The Markdown table, a row a device architecture, for the binaries of
/// `cargo xtask build --arch all`.
pub fn table(spec: &Spec, devices: &[&str]) -> String {
    table_for(spec, devices, &BUILT.map(String::from))
}

/// The Markdown table for cubins built for `built` only (a bundle of
/// `--arch <built>`), each test's PTX as ever.
pub fn table_for(spec: &Spec, devices: &[&str], built: &[String]) -> String {
    let mut out = String::from(
        "| device | tiers | GPU trials run | own cubin | compatible cubin | PTX JIT | not supported | forced through PTX (`--binary ptx`) |\n\
         |---|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for d in devices {
        let Some(arch) = Arch::parse(d) else { continue };
        let c = count(spec, arch, built);
        out.push_str(&format!(
            "| {d} | model, static, gpu | {} of {} | {} | {} | {} | {} | {} |\n",
            c.run(),
            c.trials,
            c.exact,
            c.compatible,
            c.ptx,
            c.trials - c.run(),
            c.forced_ptx
        ));
    }
    out
}

const BEGIN: &str = "<!-- cargo xtask plan --update-readme: begin -->\n";
const END: &str = "<!-- cargo xtask plan --update-readme: end -->";

/// README.md with its plan table replaced by `table`, or an error when the
/// markers are missing.
pub fn with_table(readme: &str, table: &str) -> Result<String> {
    let a = readme.find(BEGIN).ok_or(
        "README.md has no plan table marker (`<!-- cargo xtask plan --update-readme: begin -->`)",
    )?;
    let b = readme[a..]
        .find(END)
        .map(|b| a + b)
        .ok_or("README.md's plan table has no end marker")?;
    Ok(format!("{}{BEGIN}{table}{}", &readme[..a], &readme[b..]))
}

pub fn run(args: &[String]) -> Result<()> {
    let mut devices: Vec<String> = DEVICES.map(String::from).to_vec();
    let (mut update, mut check) = (false, false);
    let mut built: Vec<String> = BUILT.map(String::from).to_vec();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match (a.as_str(), it.next()) {
            ("--arch", Some(v)) if v == "all" => {}
            ("--arch", Some(v)) => {
                devices = v.split(',').map(|s| s.trim().to_string()).collect();
                if let Some(bad) = devices.iter().find(|d| Arch::parse(d).is_none()) {
                    return Err(format!(
                        "--arch: `{bad}` is not an architecture (sm_90, ...)"
                    ));
                }
            }
            ("--built", Some(v)) => {
                built = v.split(',').map(|s| s.trim().to_string()).collect();
            }
            ("--update-readme", None) => update = true,
            ("--check", None) => check = true,
            _ => {
                return Err(
                    "usage: cargo xtask plan [--arch all|sm_XX[,..]] [--update-readme]".into(),
                );
            }
        }
    }
    let root = crate::root();
    let spec = crate::load_spec(&root)?;
    let names: Vec<&str> = devices.iter().map(String::as_str).collect();
    print!("{}", table_for(&spec, &names, &built));
    println!(
        "(cubins as `cargo xtask build --arch {}` makes them with nvcc 13.0; each test's PTX for the lowest of {} its plan allows)",
        built.join(","),
        BUILT.join(" ")
    );
    if check {
        readme_is_current(&root, &spec)?;
        println!("README.md's table is current");
    }
    if update {
        let path = root.join("README.md");
        let readme = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let all = table(&spec, &DEVICES);
        std::fs::write(&path, with_table(&readme, &all)?)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("{} updated", path.display());
    }
    Ok(())
}

/// README.md's table as it should be: the current one.
pub fn readme_is_current(root: &Path, spec: &Spec) -> Result<()> {
    let readme = std::fs::read_to_string(root.join("README.md"))
        .map_err(|e| format!("cannot read README.md: {e}"))?;
    let want = with_table(&readme, &table(spec, &DEVICES))?;
    if want == readme {
        Ok(())
    } else {
        Err("README.md's table of GPU trials per architecture is stale: run `cargo xtask plan --update-readme`".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> Spec {
        gridcheck_spec::load_dir(&crate::root().join("spec"), None).unwrap()
    }

    #[test]
    fn the_readme_table_is_current() {
        if let Err(e) = readme_is_current(&crate::root(), &spec()) {
            panic!("{e}");
        }
    }

    #[test]
    fn a_stale_table_is_found_and_replaced() {
        let readme = format!("intro\n{BEGIN}| old |\n{END}\nafter\n");
        let fresh = with_table(&readme, "| new |\n").unwrap();
        assert_eq!(fresh, format!("intro\n{BEGIN}| new |\n{END}\nafter\n"));
        assert_ne!(fresh, readme);
        assert!(with_table("no markers", "t").is_err());
    }

    /// The counts follow the profiles and the binaries: no PDL trial below
    /// 9.0 and no CDP1 trial from 9.0, every trial somewhere, and sm_86
    /// runs what sm_80 runs, through compatible cubins where it has none.
    #[test]
    fn the_counts_follow_profiles_and_binaries() {
        let spec = spec();
        let built: Vec<String> = BUILT.map(String::from).to_vec();
        let c = |a: &str| count(&spec, Arch::parse(a).unwrap(), &built);
        let (a80, a87, a90, a120) = (c("sm_80"), c("sm_87"), c("sm_90"), c("sm_120"));
        assert_eq!(a80.exact, a80.run());
        assert_eq!(a87.run(), a80.run(), "sm_87 runs sm_86's cubins");
        assert_eq!(a87.compatible, a87.run());
        assert!(a90.run() > 0 && a120.run() > 0);
        // Every trial but those of no binary runs on sm_80 or sm_90.
        assert!(a80.run() + a90.run() >= a80.trials, "{a80:?} {a90:?}");
        let only = |name: &str| count(&spec, Arch::parse(name).unwrap(), &["sm_90".to_string()]);
        // With sm_90 cubins only, an sm_80 device runs the PTX of what is
        // not a host test, and the sm_90 device what it ran before.
        let o80 = only("sm_80");
        assert_eq!((o80.exact, o80.compatible), (0, 0));
        assert!(o80.ptx > 0 && o80.ptx < a80.run(), "{o80:?}");
        assert_eq!(only("sm_90").exact, a90.exact);
    }
}
