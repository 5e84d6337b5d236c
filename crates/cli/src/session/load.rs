//! A session file read and checked: TOML into [`Session`], every step's
//! name, limit and placeholders checked before anything runs, each error
//! naming the file, the line, and the step and field or word (TOML's line
//! and column where the file is not TOML of this shape).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The most a session file may be: it is read whole.
const MAX_FILE_BYTES: u64 = 1 << 20;
/// The longest a step may be given (a day).
pub const MAX_LIMIT_S: u64 = 24 * 3600;

/// A session file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Session {
    /// Where it was read from (set after reading).
    #[serde(skip)]
    pub file: PathBuf,
    #[serde(default)]
    pub about: String,
    /// The work folder, relative to the checkout.
    pub work: String,
    /// The steps run when none is named, each a step's name and its
    /// arguments (`"run 3"`); every step when absent.
    pub default: Option<Vec<String>>,
    /// Seconds the whole call may take: a step that its own limit would
    /// take past it is not started (it runs in the next call).
    pub limit_s: Option<u64>,
    #[serde(rename = "step")]
    pub steps: Vec<Step>,
}

/// One named step.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub name: String,
    #[serde(default)]
    pub about: String,
    /// What its arguments are, for `--list` and errors.
    pub usage: Option<String>,
    /// The fewest arguments it needs.
    #[serde(default)]
    pub min_args: usize,
    /// Seconds the whole step may take.
    pub limit_s: u64,
    /// Environment for each of its commands.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Lines of each command's output shown after it (12 when absent).
    pub tail: Option<usize>,
    /// What is packed into `$OUT/<key>.tar.xz` after the step, then removed.
    #[serde(default)]
    pub pack: Vec<String>,
    pub run: Vec<CommandSpec>,
}

/// A command: its words, or a table with more.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum CommandSpec {
    Words(Vec<String>),
    Table(CommandTable),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandTable {
    pub argv: Vec<String>,
    /// Run once a value, `{each}` standing for it.
    pub each: Option<Vec<String>>,
    /// A file its standard output goes to (else the step's log).
    pub stdout: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// When it exits other than 0, the step's later commands do not run
    /// (the step still finished: its exit codes say how).
    #[serde(default)]
    pub stop_on_error: bool,
    /// When it exits with this code, the step is left unfinished (its
    /// later commands still run): the next call runs it again, as for a
    /// step cut at its limit. A part of bounded time that says it has
    /// work left (`gridcheck campaign run --part`) exits so.
    pub unfinished_on_exit: Option<i32>,
}

impl CommandSpec {
    pub fn table(&self) -> CommandTable {
        match self {
            CommandSpec::Words(w) => CommandTable {
                argv: w.clone(),
                each: None,
                stdout: None,
                env: BTreeMap::new(),
                stop_on_error: false,
                unfinished_on_exit: None,
            },
            CommandSpec::Table(t) => t.clone(),
        }
    }
}

/// Reads and checks a session file.
pub fn load(path: &Path) -> Result<Session, String> {
    let size = std::fs::metadata(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?
        .len();
    if size > MAX_FILE_BYTES {
        return Err(format!(
            "{}: {size} bytes, more than a session file may be ({MAX_FILE_BYTES})",
            path.display()
        ));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse(path, &text)
}

/// A session from its text (`path` names it in errors).
pub fn parse(path: &Path, text: &str) -> Result<Session, String> {
    let mut s: Session = toml::from_str(text)
        .map_err(|e| format!("{}: {}", path.display(), e.to_string().trim()))?;
    s.file = path.to_path_buf();
    check(&s).map_err(|bad| match line_of(text, &bad) {
        Some(line) => format!("{}:{line}: {}", path.display(), bad.message),
        None => format!("{}: {}", path.display(), bad.message),
    })?;
    Ok(s)
}

/// What is wrong with a session that TOML read, and where: a key of the
/// file's top level (`step` is `None`) or a key or word of its `step`-th
/// step.
#[derive(Debug)]
struct Bad {
    step: Option<usize>,
    /// The key (`limit_s`) or the word (a command's) it is about.
    key: String,
    message: String,
}

fn bad(step: Option<usize>, key: &str, message: String) -> Bad {
    Bad {
        step,
        key: key.to_string(),
        message,
    }
}

/// The line (from 1) of the file that `bad` is about: the line of its key
/// or word within its step's table (else the table's `[[step]]` line), or
/// within the top level; `None` where the text does not show it.
fn line_of(text: &str, bad: &Bad) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let header = |l: &str| {
        let t = l.trim_start();
        t.starts_with('[')
            && t.trim_start_matches('[')
                .starts_with(|c: char| c.is_ascii_alphabetic())
    };
    let from = match bad.step {
        None => 0,
        Some(n) => {
            lines
                .iter()
                .enumerate()
                .filter(|(_, l)| l.trim() == "[[step]]")
                .nth(n)?
                .0
        }
    };
    let to = (from + 1..lines.len())
        .find(|&i| header(lines[i]))
        .unwrap_or(lines.len());
    // The key set (`key =`, at the line's start or in an inline table) or
    // the word quoted.
    let names_key = |l: &str| {
        l.match_indices(bad.key.as_str()).any(|(i, _)| {
            let before = l[..i].chars().next_back();
            before.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'))
                && l[i + bad.key.len()..].trim_start().starts_with('=')
        }) || l.contains(&format!("\"{}\"", bad.key))
    };
    let from_top = if bad.step.is_none() { 0 } else { from + 1 };
    (from_top..to)
        .find(|&i| names_key(lines[i]))
        .or(bad.step.map(|_| from))
        .map(|i| i + 1)
}

/// What TOML cannot say: names, limits, placeholders, defaults.
fn check(s: &Session) -> Result<(), Bad> {
    if s.steps.is_empty() {
        return Err(bad(None, "step", "no [[step]]".into()));
    }
    if s.work.trim().is_empty() || Path::new(&s.work).is_absolute() || s.work.contains("..") {
        return Err(bad(
            None,
            "work",
            format!(
                "work `{}`: a folder inside the checkout, such as target/sessions/NAME",
                s.work
            ),
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    for (n, st) in s.steps.iter().enumerate() {
        check_step(st, n, &mut seen)?;
    }
    for d in s.default.iter().flatten() {
        let name = d.split_whitespace().next().unwrap_or_default();
        if !s.steps.iter().any(|st| st.name == name) {
            let message = format!("default names `{d}`, which is no step");
            return Err(bad(None, "default", message));
        }
    }
    if s.limit_s.is_some_and(|l| l == 0 || l > MAX_LIMIT_S) {
        let message = format!("limit_s is seconds, 1 to {MAX_LIMIT_S}");
        return Err(bad(None, "limit_s", message));
    }
    Ok(())
}

/// The checks of the `n`-th step; `seen` holds the names of those before.
fn check_step<'a>(
    st: &'a Step,
    n: usize,
    seen: &mut std::collections::BTreeSet<&'a str>,
) -> Result<(), Bad> {
    let at = format!("step `{}`", st.name);
    let wrong = |key: &str, what: String| bad(Some(n), key, format!("{at}: {what}"));
    if st.name.is_empty()
        || !st
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(wrong("name", "a name is letters, digits, - and _".into()));
    }
    if !seen.insert(st.name.as_str()) {
        return Err(wrong("name", "a second step of that name".into()));
    }
    if st.limit_s == 0 || st.limit_s > MAX_LIMIT_S {
        let what = format!(
            "limit_s is seconds, 1 to {MAX_LIMIT_S}; {} is not",
            st.limit_s
        );
        return Err(wrong("limit_s", what));
    }
    if st.run.is_empty() {
        return Err(wrong("run", "run is empty".into()));
    }
    for c in &st.run {
        let t = c.table();
        if t.argv.is_empty() {
            return Err(wrong("run", "a command with no words".into()));
        }
        if t.unfinished_on_exit == Some(0) {
            let what = "unfinished_on_exit = 0 would leave a step that succeeded unfinished";
            return Err(wrong("unfinished_on_exit", what.into()));
        }
        let words = t.argv.iter().chain(&t.stdout).chain(t.env.values());
        for w in words.chain(st.env.values()).chain(&st.pack) {
            crate::session::plan::check_word(w, t.each.is_some()).map_err(|e| wrong(w, e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<Session, String> {
        parse(Path::new("lab/sessions/x.toml"), text)
    }

    const GOOD: &str = "work = \"target/sessions/x\"\n[[step]]\nname = \"a\"\nlimit_s = 5\n\
                        run = [[\"echo\", \"{out}\"]]\n";

    #[test]
    fn a_bad_file_is_named_with_what_is_wrong() {
        assert!(parsed(GOOD).is_ok());
        let e = parsed(&GOOD.replace("limit_s = 5", "limit_s = 0")).unwrap_err();
        assert!(
            e.starts_with("lab/sessions/x.toml:4: step `a`: limit_s"),
            "{e}"
        );
        let e = parsed(&GOOD.replace("{out}", "{nope}")).unwrap_err();
        assert!(
            e.starts_with("lab/sessions/x.toml:5: step `a`: `{nope}`"),
            "{e}"
        );
        // An unknown key: TOML's own error, with its line.
        let e = parsed(&GOOD.replace("limit_s", "limit")).unwrap_err();
        assert!(
            e.contains("x.toml") && e.contains("line 4") && e.contains("`limit`"),
            "{e}"
        );
        let zero = "run = [{ argv = [\"echo\"], unfinished_on_exit = 0 }]";
        let e = parsed(&GOOD.replace("run = [[\"echo\", \"{out}\"]]", zero)).unwrap_err();
        assert!(
            e.starts_with("lab/sessions/x.toml:5: step `a`: unfinished_on_exit = 0"),
            "{e}"
        );
        let e = parsed(&GOOD.replace("{out}", "{each}")).unwrap_err();
        assert!(e.contains("x.toml:5:") && e.contains("{each}"), "{e}");
        let e = parsed(&format!("default = [\"b\"]\n{GOOD}")).unwrap_err();
        assert!(
            e.starts_with("lab/sessions/x.toml:1: default names `b`"),
            "{e}"
        );
        let e = parsed(&GOOD.replace("target/sessions/x", "/tmp")).unwrap_err();
        assert!(e.starts_with("lab/sessions/x.toml:1: work"), "{e}");
        // The second step's error points into the second step.
        let two = format!("{GOOD}[[step]]\nname = \"a\"\nlimit_s = 1\nrun = [[\"x\"]]\n");
        let e = parsed(&two).unwrap_err();
        assert!(
            e.starts_with("lab/sessions/x.toml:7: step `a`: a second step"),
            "{e}"
        );
        let e = parsed("work = \"w\"\n[[step]]\nname = \"a b\"\nlimit_s = 1\nrun = [[\"x\"]]\n")
            .unwrap_err();
        assert!(e.contains("x.toml:3:") && e.contains("a name is"), "{e}");
        assert!(parsed("not toml [").unwrap_err().contains("x.toml"));
    }
}
