//! The steps asked for, expanded: which steps with which arguments
//! ([`invocations`]), and each one's commands with their placeholders
//! filled ([`plan_step`]; the placeholders are in the module docs of
//! `session`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::load::Session;

/// The placeholders a word may hold besides `{1}`, `{2}`, ...
const NAMED: [&str; 7] = ["out", "step", "key", "gridcheck", "each", "slug", "arch"];
/// The longest key, in bytes (a file name of its own, with a suffix).
const MAX_KEY: usize = 64;
/// Words that stand for several arguments.
const SPLICES: [&str; 2] = ["{args}", "{rest}"];

/// A step asked for, with its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub name: String,
    pub args: Vec<String>,
}

impl Invocation {
    /// The step's name and arguments as one file name: `suite-b-shuffle-2`
    /// for `suite b --shuffle 2` (ASCII, at most 64 bytes).
    pub fn key(&self) -> String {
        let mut k = self.name.clone();
        for a in &self.args {
            k.push('-');
            k.extend(a.trim_start_matches('-').chars().map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                    c
                } else {
                    '-'
                }
            }));
        }
        let k = k.trim_end_matches('.');
        if k.len() <= MAX_KEY {
            return k.to_string();
        }
        // A long key (an argument of JSON) is cut, and a hash of the whole
        // keeps it apart from another that starts alike.
        let hash = gridcheck_toolchain::fnv1a64(k.as_bytes());
        format!("{}-{:08x}", &k[..MAX_KEY - 9], hash as u32)
    }
}

/// A step ready to run.
#[derive(Debug, Clone)]
pub struct PlannedStep {
    pub inv: Invocation,
    pub key: String,
    pub limit_s: u64,
    pub tail: usize,
    pub commands: Vec<PlannedCommand>,
    /// Paths (absolute) packed into `<key>.tar.xz` after the step.
    pub pack: Vec<PathBuf>,
}

/// A command ready to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedCommand {
    pub argv: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub stdout: Option<PathBuf>,
    pub stop_on_error: bool,
    pub unfinished_on_exit: Option<i32>,
}

/// What the placeholders stand for, the GPU's values looked up once and
/// only when a word needs them.
pub struct Values {
    pub root: PathBuf,
    pub work: PathBuf,
    /// A dry run: without a GPU, `{slug}` and `{arch}` are shown as such.
    pub dry_run: bool,
    gpu: OnceLock<Result<(String, String), String>>,
}

impl Values {
    pub fn new(root: &Path, work: &Path, dry_run: bool) -> Values {
        Values {
            root: root.to_path_buf(),
            work: work.to_path_buf(),
            dry_run,
            gpu: OnceLock::new(),
        }
    }

    /// The GPU's slug and architecture, or why there are none.
    fn gpu(&self) -> Result<&(String, String), String> {
        self.gpu
            .get_or_init(|| match gridcheck_gpu::probe() {
                Ok(d) => Ok((gridcheck_report::slug(&d.name), d.sm)),
                Err(e) if self.dry_run => Ok((format!("{{slug: {e}}}"), "{arch}".into())),
                Err(e) => Err(format!("no GPU: {e}")),
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// The steps `words` ask for (`STEP [ARG...] [-- STEP [ARG...]]...`), or
/// the file's default ones.
pub fn invocations(s: &Session, words: &[String]) -> Result<Vec<Invocation>, String> {
    let mut out = Vec::new();
    for group in words.split(|w| w == "--").filter(|g| !g.is_empty()) {
        out.push(Invocation {
            name: group[0].clone(),
            args: group[1..].to_vec(),
        });
    }
    if out.is_empty() {
        let names: Vec<String> = match &s.default {
            Some(d) => d.clone(),
            None => s.steps.iter().map(|st| st.name.clone()).collect(),
        };
        out = names
            .iter()
            .map(|entry| {
                let mut words = entry.split_whitespace().map(str::to_string);
                Invocation {
                    name: words.next().unwrap_or_default(),
                    args: words.collect(),
                }
            })
            .collect();
    }
    for i in &out {
        let Some(st) = s.steps.iter().find(|st| st.name == i.name) else {
            let names: Vec<&str> = s.steps.iter().map(|st| st.name.as_str()).collect();
            return Err(format!(
                "no step `{}` (the steps: {})",
                i.name,
                names.join(", ")
            ));
        };
        if i.args.len() < st.min_args {
            return Err(format!(
                "step `{}` needs {} argument(s): {} {}",
                st.name,
                st.min_args,
                st.name,
                st.usage.as_deref().unwrap_or("")
            ));
        }
    }
    Ok(out)
}

/// The step `inv` asks for with every placeholder filled.
pub fn plan_step(s: &Session, inv: &Invocation, v: &Values) -> Result<PlannedStep, String> {
    let st = s
        .steps
        .iter()
        .find(|st| st.name == inv.name)
        .ok_or_else(|| format!("no step `{}`", inv.name))?;
    let key = inv.key();
    let at = |e: String| format!("step `{}`: {e}", st.name);
    let mut commands = Vec::new();
    for c in &st.run {
        let t = c.table();
        let eaches: Vec<Option<&str>> = match &t.each {
            Some(list) => list.iter().map(|e| Some(e.as_str())).collect(),
            None => vec![None],
        };
        for each in eaches {
            let fill = |w: &str| fill(w, inv, &key, each, v).map_err(at);
            let mut argv = Vec::new();
            for w in &t.argv {
                match w.as_str() {
                    "{args}" => argv.extend(inv.args.iter().cloned()),
                    "{rest}" => argv.extend(inv.args.iter().skip(1).cloned()),
                    _ => argv.push(fill(w)?),
                }
            }
            let mut env = BTreeMap::new();
            for (k, val) in st.env.iter().chain(&t.env) {
                env.insert(k.clone(), fill(val)?);
            }
            let stdout = t.stdout.as_deref().map(&fill).transpose()?;
            commands.push(PlannedCommand {
                argv,
                env,
                stdout: stdout.map(|p| v.root.join(p)),
                stop_on_error: t.stop_on_error,
                unfinished_on_exit: t.unfinished_on_exit,
            });
        }
    }
    let pack = st
        .pack
        .iter()
        .map(|p| fill(p, inv, &key, None, v).map(|p| v.work.join(p)))
        .collect::<Result<Vec<_>, String>>()
        .map_err(at)?;
    Ok(PlannedStep {
        inv: inv.clone(),
        key,
        limit_s: st.limit_s,
        tail: st.tail.unwrap_or(12),
        commands,
        pack,
    })
}

/// Checks a word's placeholders (`each`: whether `{each}` has a value).
pub fn check_word(w: &str, each: bool) -> Result<(), String> {
    if SPLICES.contains(&w) {
        return Ok(());
    }
    for name in placeholders(w)? {
        let known = NAMED.contains(&name) || name.parse::<usize>().is_ok_and(|n| n >= 1);
        if !known || (name == "each" && !each) {
            return Err(format!(
                "`{w}`: no placeholder {{{name}}} here (the placeholders: {{out}} {{step}} \
                 {{key}} {{gridcheck}} {{slug}} {{arch}} {{1}} {{2}}..., {{each}} with `each`, \
                 and the words {{args}} and {{rest}})"
            ));
        }
    }
    Ok(())
}

/// The placeholders of `w`, in order: a name of lowercase letters, digits
/// and `_` between braces (other braces are the word's own, such as a
/// program's text).
fn placeholders(w: &str) -> Result<Vec<&str>, String> {
    let mut out = Vec::new();
    let mut rest = w;
    while let Some(i) = rest.find('{') {
        let after = &rest[i + 1..];
        match after.find('}') {
            Some(j)
                if j > 0
                    && after[..j]
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') =>
            {
                out.push(&after[..j]);
                rest = &after[j + 1..];
            }
            _ => rest = after,
        }
    }
    Ok(out)
}

/// `w` with its placeholders filled.
fn fill(
    w: &str,
    inv: &Invocation,
    key: &str,
    each: Option<&str>,
    v: &Values,
) -> Result<String, String> {
    let mut s = w.to_string();
    for name in placeholders(w)? {
        let value = match name {
            "out" => v.work.display().to_string(),
            "step" => v.work.join(key).display().to_string(),
            "key" => key.to_string(),
            "gridcheck" => std::env::current_exe()
                .map_err(|e| format!("cannot find this program: {e}"))?
                .display()
                .to_string(),
            "each" => each.ok_or("{each} outside a command with `each`")?.into(),
            "slug" => v.gpu().map_err(|e| format!("`{w}`: {e}"))?.0.clone(),
            "arch" => v.gpu().map_err(|e| format!("`{w}`: {e}"))?.1.clone(),
            n => {
                let i: usize = n.parse().map_err(|_| format!("`{w}`: no {{{n}}}"))?;
                inv.args.get(i.wrapping_sub(1)).cloned().ok_or_else(|| {
                    format!("`{w}`: no argument {i} (given: {})", inv.args.join(" "))
                })?
            }
        };
        s = s.replacen(&format!("{{{name}}}"), &value, 1);
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str, args: &[&str]) -> String {
        Invocation {
            name: name.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
        }
        .key()
    }

    #[test]
    fn a_key_is_a_short_file_name_apart_from_others() {
        assert_eq!(key("suite", &["b", "--shuffle", "2"]), "suite-b-shuffle-2");
        assert_eq!(key("points", &["a/b.toml", "x y"]), "points-a-b.toml-x-y");
        let json =
            "{\"name\":\"late-write\",\"instances\":64,\"launches\":32,\"max_delay_cycles\":0}";
        let long = key("suite", &["c", "--extra-environment", json]);
        assert_eq!(long.len(), MAX_KEY, "{long}");
        assert!(long.starts_with("suite-c-extra-environment"), "{long}");
        assert_ne!(
            long,
            key(
                "suite",
                &["c", "--extra-environment", &json.replace("64", "65")]
            )
        );
    }
}
