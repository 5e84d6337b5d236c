//! User programs: CUDA written the way users write PDL kernels
//! (`kernels/sass/*.cu`), with a manifest (`kernels/sass/programs.toml`)
//! that says, for each, which kernel to look at, which of its loads of the
//! primary's data must stay after the wait and which of its stores before
//! the trigger. Lines are named by a tag at the end of the line,
//! `// sass: <label>`; the wait's line is tagged `wait`, the trigger's
//! `trigger`. A program with `expect = "reordered"` is a negative control:
//! its source already breaks the order the manifest names, and its trial
//! passes only if the check sees that.

use std::path::Path;

use serde::Deserialize;

use crate::ThreadResult;
use crate::order::{Op, OpKind, Verdict, check};
use crate::parse::Function;

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
        let src = dir.join(&p.file);
        let source = std::fs::read_to_string(&src)
            .map_err(|e| format!("{at}: field `file`: cannot read {}: {e}", src.display()))?;
        for l in p.labels() {
            tagged(&source, l).map_err(|e| format!("{at}: {}: {e}", p.file))?;
        }
    }
    Ok(m.program)
}

impl Program {
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

/// Checks a program's kernel and judges the result against its `expect`.
pub fn check_program(
    p: &Program,
    source: &str,
    file: &str,
    functions: &[Function],
) -> Result<(Judgement, String), String> {
    let f = functions
        .iter()
        .find(|f| f.name == p.kernel)
        .ok_or_else(|| format!("{file}: the machine code has no function `{}`", p.kernel))?;
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
}
