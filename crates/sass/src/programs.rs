//! User programs: CUDA written the way users write PDL kernels
//! (`kernels/sass/*.cu`), with a manifest (`kernels/sass/programs.toml`)
//! that says, for each, which kernel to look at, which of its loads of the
//! primary's data must stay after the wait and which of its stores before
//! the trigger. Lines are named by a tag at the end of the line,
//! `// sass: <label>`; the wait's line is tagged `wait`, the trigger's
//! `trigger`. A program with `expect = "reordered"` is a negative control:
//! its source already breaks the order the manifest names, and its trial
//! passes only if the check sees that.
//!
//! A program that names `after_wait` is a PDL secondary: the host launches
//! its kernel with the PDL attribute, so its code for every target must hold
//! the wait (`presence.rs`); a target where it has none is a failed trial
//! naming the missing wait, unless the manifest lists the target in
//! `no_wait` (a guard that compiles the wait out there on purpose: the trial
//! passes only if the tier flags the missing wait). `targets` replaces
//! `--sass-arch` for a program whose point is a set of targets, virtual
//! architectures (`compute_80`: the PTX, where only the wait's presence is
//! checked) included.

use std::path::Path;

use serde::Deserialize;

use crate::ThreadResult;
use crate::order::{Op, OpKind, Verdict, check};
use crate::parse::Function;
use crate::presence::{Waits, ptx_waits, sass_waits};

/// The manifest's file name in the programs' directory.
pub const MANIFEST: &str = "programs.toml";

/// Where the user programs and their manifest are, relative to the
/// repository root.
pub const PROGRAMS_DIR: &str = "kernels/sass";

/// What a program's order check must find.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Expect {
    /// Every named access keeps its side of the primitive.
    #[default]
    Ordered,
    /// The source itself puts a named access on the wrong side: the check
    /// must report the violation.
    Reordered,
}

/// A trial's conclusion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judgement {
    Pass,
    Fail,
    NotChecked,
}

/// One program of the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Program {
    pub name: String,
    /// The `.cu` file, in the programs' directory.
    pub file: String,
    /// The kernel's symbol (`extern "C"`).
    pub kernel: String,
    /// What the program is, in a sentence.
    pub summary: String,
    /// Labels of loads that must stay after the line tagged `wait`.
    #[serde(default)]
    pub after_wait: Vec<String>,
    /// Labels of stores that must stay before the line tagged `trigger`.
    #[serde(default)]
    pub before_trigger: Vec<String>,
    #[serde(default)]
    pub expect: Expect,
    /// The oldest architecture with the program's instructions (90: PDL).
    #[serde(default = "pdl_arch")]
    pub min_arch: u32,
    /// Extra nvcc flags.
    #[serde(default)]
    pub flags: Vec<String>,
    /// The targets to compile for, instead of `--sass-arch` and `min_arch`:
    /// real architectures (`sm_90`, `sm_90a`) and virtual ones
    /// (`compute_80`: the PTX, checked for the wait's presence only).
    #[serde(default)]
    pub targets: Vec<String>,
    /// Targets of `targets` whose code must have no wait: the program's
    /// guard compiles it out there, and the tier must flag that.
    #[serde(default)]
    pub no_wait: Vec<String>,
}

fn pdl_arch() -> u32 {
    90
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    program: Vec<Program>,
}

/// Reads `dir/programs.toml` and checks it against the files: every
/// program's file exists, names are unique and each names something to
/// check.
pub fn load(dir: &Path) -> Result<Vec<Program>, String> {
    let path = dir.join(MANIFEST);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let m: Manifest = toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut seen = std::collections::HashSet::new();
    for p in &m.program {
        let at = format!("{}: program `{}`", path.display(), p.name);
        if !seen.insert(p.name.clone()) {
            return Err(format!("{at}: the name is used twice"));
        }
        if p.name.is_empty() || p.name.contains(['/', ' ']) {
            return Err(format!("{at}: a name is one word without `/`"));
        }
        if p.after_wait.is_empty() && p.before_trigger.is_empty() {
            return Err(format!(
                "{at}: names nothing to check (after_wait, before_trigger)"
            ));
        }
        p.check_targets().map_err(|e| format!("{at}: {e}"))?;
        let src = dir.join(&p.file);
        let source = std::fs::read_to_string(&src)
            .map_err(|e| format!("{at}: field `file`: cannot read {}: {e}", src.display()))?;
        for l in p.labels() {
            tagged(&source, l).map_err(|e| format!("{at}: {}: {e}", p.file))?;
        }
    }
    Ok(m.program)
}

/// Whether `t` names a target nvcc compiles for: `sm_90`, `sm_90a`,
/// `sm_100f`, `compute_80`.
fn is_target(t: &str) -> bool {
    let Some(rest) = t.strip_prefix("sm_").or_else(|| t.strip_prefix("compute_")) else {
        return false;
    };
    let digits = rest.trim_end_matches(['a', 'f']);
    rest.len() <= digits.len() + 1
        && digits.len() >= 2
        && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Whether a target is a virtual architecture: its code is PTX.
pub fn is_ptx_target(t: &str) -> bool {
    t.starts_with("compute_")
}

impl Program {
    /// `targets` and `no_wait` are well-formed and agree.
    fn check_targets(&self) -> Result<(), String> {
        let mut seen = std::collections::HashSet::new();
        for t in &self.targets {
            if !is_target(t) {
                return Err(format!(
                    "field `targets`: `{t}` is not a target (sm_90, sm_90a, sm_100f, compute_80)"
                ));
            }
            if !seen.insert(t) {
                return Err(format!("field `targets`: `{t}` is named twice"));
            }
            if is_ptx_target(t) && self.after_wait.is_empty() {
                return Err(format!(
                    "field `targets`: `{t}` is PTX, where only the wait's presence is checked, and the program names no wait (after_wait)"
                ));
            }
        }
        if !self.no_wait.is_empty() && self.after_wait.is_empty() {
            return Err("field `no_wait`: the program names no wait (after_wait)".into());
        }
        for t in &self.no_wait {
            if !self.targets.contains(t) {
                return Err(format!(
                    "field `no_wait`: `{t}` is not one of the program's `targets`"
                ));
            }
        }
        if self.expect == Expect::Reordered && !self.no_wait.is_empty() {
            return Err(
                "fields `expect` and `no_wait`: a negative control of the order has its wait"
                    .into(),
            );
        }
        Ok(())
    }

    /// The targets of the program's trials: its own `targets`, else those
    /// of `asked` (the tier's architectures) from `min_arch` on.
    pub fn trial_targets(&self, asked: &[String]) -> Vec<String> {
        if !self.targets.is_empty() {
            return self.targets.clone();
        }
        asked
            .iter()
            .filter(|a| arch_number(a) >= self.min_arch)
            .cloned()
            .collect()
    }

    /// Every label the check needs, the primitives' included.
    fn labels(&self) -> Vec<&str> {
        let mut v: Vec<&str> = Vec::new();
        if !self.after_wait.is_empty() {
            v.push("wait");
        }
        if !self.before_trigger.is_empty() {
            v.push("trigger");
        }
        v.extend(self.after_wait.iter().map(String::as_str));
        v.extend(self.before_trigger.iter().map(String::as_str));
        v
    }
}

/// The one line (1-based) tagged `// sass: <label>`, and its text.
pub fn tagged<'a>(source: &'a str, label: &str) -> Result<(u32, &'a str), String> {
    let hits: Vec<(u32, &str)> = source
        .lines()
        .enumerate()
        .filter(|(_, l)| {
            l.rsplit_once("// sass:")
                .is_some_and(|(_, tag)| tag.trim() == label)
        })
        .map(|(n, l)| (u32::try_from(n + 1).unwrap_or(u32::MAX), l))
        .collect();
    match hits.as_slice() {
        [one] => Ok(*one),
        [] => Err(format!("no line is tagged `// sass: {label}`")),
        more => Err(format!(
            "lines {:?} are all tagged `// sass: {label}`: a label names one line",
            more.iter().map(|(n, _)| n).collect::<Vec<_>>()
        )),
    }
}

fn op(source: &str, label: &str, kind: OpKind) -> Result<Op, String> {
    let (line, text) = tagged(source, label)?;
    let kind =
        if kind == OpKind::Load && (text.contains("cp.async") || text.contains("memcpy_async")) {
            OpKind::AsyncLoad
        } else {
            kind
        };
    Ok(Op {
        label: label.to_string(),
        kind,
        lines: vec![line],
    })
}

/// The architecture's number: 90 for `sm_90` and `sm_90a`, 80 for
/// `compute_80`; 0 for a name that is neither.
pub fn arch_number(arch: &str) -> u32 {
    arch.trim_start_matches("sm_")
        .trim_start_matches("compute_")
        .trim_end_matches(|c: char| c.is_ascii_alphabetic())
        .parse()
        .unwrap_or(0)
}

/// The wait-presence judgement of a PDL secondary's code for `target`
/// (`waits` as `presence.rs` found them in `code`, "its sm_90 SASS"):
/// `None` when the wait is there and should be (the order check goes on).
pub fn judge_presence(
    p: &Program,
    target: &str,
    code: &str,
    waits: &Waits,
) -> Option<(Judgement, String)> {
    if p.after_wait.is_empty() {
        return None;
    }
    let expected_missing = p.no_wait.iter().any(|t| t == target);
    let k = &p.kernel;
    match waits {
        Waits::Undecided(why) => Some((Judgement::NotChecked, format!("{code}: {why}"))),
        Waits::Found(w) if w.is_empty() && expected_missing => Some((
            Judgement::Pass,
            format!(
                "MISSING WAIT flagged, as the manifest expects (no_wait: the program's guard compiles the wait out for {target}): `{k}` is launched with the PDL attribute and {code} has no PDL wait, so it may read its primary's data before the primary completes"
            ),
        )),
        Waits::Found(w) if w.is_empty() => Some((
            Judgement::Fail,
            format!(
                "MISSING WAIT: `{k}` is launched with the PDL attribute (its manifest names loads after the wait) and {code} has no PDL wait (no ACQBULK, no griddepcontrol.wait): it may read its primary's data before the primary completes"
            ),
        )),
        Waits::Found(w) if expected_missing => Some((
            Judgement::Fail,
            format!(
                "the manifest says the guard compiles the wait out for {target} (no_wait), but {code} has it: {}",
                w.join(", ")
            ),
        )),
        Waits::Found(_) => None,
    }
}

/// Checks a program's PTX for a virtual architecture (`compute_80`): only
/// whether its kernel's entry holds the wait.
pub fn check_program_ptx(
    p: &Program,
    target: &str,
    ptx: &str,
) -> Result<(Judgement, String), String> {
    let waits = ptx_waits(ptx, &p.kernel)?;
    let code = format!("its {target} PTX");
    if let Some(j) = judge_presence(p, target, &code, &waits) {
        return Ok(j);
    }
    let found = match &waits {
        Waits::Found(w) => w.join(", "),
        Waits::Undecided(why) => why.clone(),
    };
    Ok((
        Judgement::Pass,
        format!(
            "{code} holds the PDL wait ({found}); the order around it is checked on the real architectures' SASS"
        ),
    ))
}

/// Checks a program's kernel in its SASS for `target` (`sm_90`): the wait's
/// presence, then the order, judged against its `expect`.
pub fn check_program(
    p: &Program,
    target: &str,
    source: &str,
    file: &str,
    functions: &[Function],
) -> Result<(Judgement, String), String> {
    let f = functions
        .iter()
        .find(|f| f.name == p.kernel)
        .ok_or_else(|| format!("{file}: the machine code has no function `{}`", p.kernel))?;
    if let Some(j) = judge_presence(p, target, &format!("its {target} SASS"), &sass_waits(f)) {
        return Ok(j);
    }
    let mut v = Verdict {
        ordered: 0,
        violations: Vec::new(),
        not_checked: Vec::new(),
    };
    if !p.after_wait.is_empty() {
        let mut prog = vec![op(source, "wait", OpKind::Wait)?];
        for l in &p.after_wait {
            prog.push(op(source, l, OpKind::Load)?);
        }
        v.merge(check(f, file, &prog));
    }
    if !p.before_trigger.is_empty() {
        let mut prog = Vec::new();
        for l in &p.before_trigger {
            prog.push(op(source, l, OpKind::Store)?);
        }
        prog.push(op(source, "trigger", OpKind::Trigger)?);
        v.merge(check(f, file, &prog));
    }
    let r = [ThreadResult {
        kernel: p.kernel.clone(),
        thread: "every thread".into(),
        verdict: v,
    }];
    let (j, msg) = summarize(&r);
    Ok(match (p.expect, j) {
        (Expect::Ordered, _) => (j, msg),
        (Expect::Reordered, Judgement::Fail) => (
            Judgement::Pass,
            format!("negative control: the reordering its source makes is seen: {msg}"),
        ),
        (Expect::Reordered, Judgement::Pass) => (
            Judgement::Fail,
            format!(
                "negative control: its source puts an access on the wrong side, but the check found every pair ordered: {msg}"
            ),
        ),
        (Expect::Reordered, Judgement::NotChecked) => (j, msg),
    })
}

/// One verdict for the threads of a test: a violation fails, a pair not
/// checked makes the whole not checked, else every pair is ordered.
pub fn summarize(results: &[ThreadResult]) -> (Judgement, String) {
    let ordered: usize = results.iter().map(|r| r.verdict.ordered).sum();
    let mut lines = Vec::new();
    for r in results {
        for m in &r.verdict.violations {
            lines.push(format!("VIOLATION {} {}: {m}", r.kernel, r.thread));
        }
    }
    let violations = lines.len();
    for r in results {
        for m in &r.verdict.not_checked {
            lines.push(format!("not checked {} {}: {m}", r.kernel, r.thread));
        }
    }
    let threads = results.len();
    if threads == 0 {
        return (
            Judgement::NotChecked,
            "no thread runs a PDL or launch primitive".into(),
        );
    }
    let head = format!(
        "{ordered} pairs ordered, {violations} violations, {} not checked, in {threads} threads",
        lines.len() - violations
    );
    let j = if violations > 0 {
        Judgement::Fail
    } else if lines.len() > violations || ordered == 0 {
        Judgement::NotChecked
    } else {
        Judgement::Pass
    };
    if lines.is_empty() && ordered == 0 {
        (
            j,
            format!(
                "{head}: nothing to order (each thread's primitive has no operation of the test before or after it)"
            ),
        )
    } else if lines.is_empty() {
        (j, head)
    } else {
        (j, format!("{head}\n{}", lines.join("\n")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_name_one_line() {
        let src = "a;\nx = in[0]; // sass: load\ncudaGridDependencySynchronize(); // sass: wait\n";
        assert_eq!(tagged(src, "load").unwrap().0, 2);
        assert!(
            tagged(src, "store")
                .unwrap_err()
                .contains("no line is tagged")
        );
        let twice = format!("{src}y = in[1]; // sass: load\n");
        assert!(tagged(&twice, "load").unwrap_err().contains("[2, 4]"));
    }

    #[test]
    fn a_bad_manifest_names_the_file_and_program() {
        let dir = std::env::temp_dir().join(format!("gc-sass-m-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.cu"), "x = in[0]; // sass: load\n").unwrap();
        let write = |t: &str| std::fs::write(dir.join(MANIFEST), t).unwrap();
        write(
            "[[program]]\nname = \"a\"\nfile = \"a.cu\"\nkernel = \"k\"\nsummary = \"s\"\nafter_wait = [\"load\"]\n",
        );
        let e = load(&dir).unwrap_err();
        assert!(e.contains("program `a`") && e.contains("sass: wait"), "{e}");
        write(
            "[[program]]\nname = \"a\"\nfile = \"a.cu\"\nkernel = \"k\"\nsummary = \"s\"\nbogus = 1\n",
        );
        assert!(load(&dir).unwrap_err().contains("bogus"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn targets_and_no_wait_must_agree() {
        let dir = std::env::temp_dir().join(format!("gc-sass-t-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("a.cu"),
            "w(); // sass: wait
x = in[0]; // sass: load
",
        )
        .unwrap();
        let with = |extra: &str| {
            std::fs::write(
                dir.join(MANIFEST),
                format!("[[program]]\nname = \"a\"\nfile = \"a.cu\"\nkernel = \"k\"\nsummary = \"s\"\nafter_wait = [\"load\"]\n{extra}"),
            )
            .unwrap();
            load(&dir)
        };
        let ok = with(
            "targets = [\"sm_90\", \"sm_100a\", \"compute_80\"]\nno_wait = [\"compute_80\"]\n",
        )
        .unwrap();
        assert_eq!(
            ok[0].trial_targets(&["sm_120".into()]),
            ["sm_90", "sm_100a", "compute_80"]
        );
        for (extra, says) in [
            (
                "targets = [\"sm_90\"]\nno_wait = [\"sm_100\"]\n",
                "`sm_100` is not one of the program's `targets`",
            ),
            (
                "no_wait = [\"sm_90\"]\n",
                "not one of the program's `targets`",
            ),
            ("targets = [\"sm90\"]\n", "`sm90` is not a target"),
            ("targets = [\"sm_90ab\"]\n", "`sm_90ab` is not a target"),
            ("targets = [\"sm_90\", \"sm_90\"]\n", "named twice"),
            (
                "targets = [\"sm_90\"]\nno_wait = [\"sm_90\"]\nexpect = \"reordered\"\n",
                "a negative control",
            ),
        ] {
            let e = with(extra).unwrap_err();
            assert!(
                e.contains("program `a`") && e.contains(says),
                "{extra}: {e}"
            );
        }
        // Without its own targets a program takes the tier's from min_arch on.
        let plain = with("").unwrap();
        assert_eq!(
            plain[0].trial_targets(&["sm_80".into(), "sm_90".into(), "sm_120".into()]),
            ["sm_90", "sm_120"]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
