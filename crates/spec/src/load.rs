//! Loading: YAML files → raw shapes → validated [`Spec`].
//!
//! Every problem becomes a [`SpecError`] naming the file, the rule or test,
//! the field, and the line and column; loading collects all of them and
//! never panics on any input.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::ast::*;
use crate::condition;
use crate::cuda_errors::cuda_error_value;
use crate::error::{SpecError, SpecErrors};
use crate::locate::{Entry, Text, enclosing};
use crate::ops::{is_ident, parse_op};
use crate::raw::{RawFile, RawKernel, RawRule, RawTest};
use crate::seeds::Seeds;

/// loom runs at most 4 spawned threads besides the main one; every modeled
/// GPU thread is a loom thread.
pub const MAX_THREADS: usize = 4;

/// Every `*.yaml` file under `dir`, recursively, sorted.
pub fn spec_files(dir: &Path) -> Result<Vec<PathBuf>, SpecErrors> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let p = entry?.path();
            if p.is_dir() {
                walk(&p, out)?;
            } else if p.extension().is_some_and(|e| e == "yaml" || e == "yml")
                && !p.ends_with(crate::sentences::LIST_FILE)
            {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, &mut out).map_err(|e| {
        SpecErrors(vec![SpecError::new(
            dir,
            format!("cannot read the spec directory: {e}"),
        )])
    })?;
    out.sort();
    Ok(out)
}

/// Loads and validates every spec file under `dir`. With `seeds`, each rule's
/// seed must exist and its quote must occur in it verbatim.
pub fn load_dir(dir: &Path, seeds: Option<&Seeds>) -> Result<Spec, SpecErrors> {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for path in spec_files(dir)? {
        match std::fs::read_to_string(&path) {
            Ok(text) => files.push((path, text)),
            Err(e) => errors.push(SpecError::new(&path, format!("cannot read: {e}"))),
        }
    }
    match load_sources(&files, seeds) {
        Ok(spec) if errors.is_empty() => Ok(spec),
        Ok(_) => Err(SpecErrors(errors)),
        Err(SpecErrors(mut more)) => {
            errors.append(&mut more);
            Err(SpecErrors(errors))
        }
    }
}

/// Loads and validates spec texts given as (path, contents).
pub fn load_sources(
    files: &[(PathBuf, String)],
    seeds: Option<&Seeds>,
) -> Result<Spec, SpecErrors> {
    let mut cx = Cx::default();
    for (path, text) in files {
        cx.file(path, text);
    }
    cx.cross_checks(seeds);
    if cx.errors.is_empty() {
        Ok(Spec {
            rules: cx.rules,
            tests: cx.tests,
        })
    } else {
        Err(SpecErrors(cx.errors))
    }
}

/// Where each loaded rule and test came from, for located cross-file errors.
struct Located {
    file: PathBuf,
    text: String,
    /// First line of this item and of the next item of the file (if any).
    from: usize,
    until: Option<usize>,
}

#[derive(Default)]
struct Cx {
    rules: Vec<Rule>,
    tests: Vec<Test>,
    rule_at: Vec<Located>,
    test_at: Vec<Located>,
    errors: Vec<SpecError>,
}

/// Builds errors about one item of one file.
struct ItemErr<'a> {
    file: &'a Path,
    text: &'a Text<'a>,
    item: String,
    from: usize,
    until: Option<usize>,
}

impl ItemErr<'_> {
    /// An error at `field`, positioned at the first occurrence of `needle`
    /// (or of the field's key) inside the item.
    fn at(&self, field: &str, needle: Option<&str>, msg: impl Into<String>) -> SpecError {
        let key = field.rsplit('.').next().unwrap_or(field);
        let key = key.split('[').next().unwrap_or(key);
        let pos = needle
            .and_then(|n| self.text.find(n, self.from, self.until))
            .or_else(|| self.text.field(key, self.from, self.until))
            .unwrap_or((self.from, 1));
        SpecError::new(self.file, msg)
            .at(pos.0, pos.1)
            .item(self.item.clone())
            .field(field)
    }
}

impl Cx {
    fn file(&mut self, path: &Path, src: &str) {
        let text = Text::new(src);
        let rule_entries = text.entries("id");
        let test_entries = text.entries("name");
        let raw: RawFile = match serde_yaml::from_str(src) {
            Ok(r) => r,
            Err(e) => {
                let full = e.to_string();
                let msg = match full.rfind(" at line ") {
                    Some(i) => &full[..i],
                    None => &full,
                };
                // The YAML path (`rules[0].source: ...`) repeats what the
                // item and the position already say.
                let msg = match msg.split_once(": ") {
                    Some((yaml_path, rest)) if !yaml_path.contains(' ') => rest,
                    _ => msg,
                };
                let mut err = SpecError::new(path, msg);
                if let Some(f) = msg
                    .split("unknown field `")
                    .nth(1)
                    .and_then(|r| r.split('`').next())
                {
                    err = err.field(f);
                }
                if let Some(loc) = e.location() {
                    err = err.at(loc.line(), loc.column());
                    let mut all: Vec<(Entry, String)> = rule_entries
                        .iter()
                        .map(|e| (e.clone(), format!("rule `{}`", e.value)))
                        .chain(
                            test_entries
                                .iter()
                                .map(|e| (e.clone(), format!("test `{}`", e.value))),
                        )
                        .collect();
                    all.sort_by_key(|(e, _)| e.line);
                    if let Some((_, item)) = enclosing(&all, loc.line()) {
                        err = err.item(item.clone());
                    }
                }
                self.errors.push(err);
                return;
            }
        };
        let mut starts: Vec<usize> = rule_entries
            .iter()
            .chain(test_entries.iter())
            .map(|e| e.line)
            .collect();
        starts.sort();
        let span = |entries: &[Entry], i: usize| -> (usize, Option<usize>) {
            match entries.get(i) {
                Some(e) if entries.len() > i => {
                    (e.line, starts.iter().copied().find(|&l| l > e.line))
                }
                _ => (1, None),
            }
        };
        let aligned_rules = rule_entries.len() == raw.rules.len();
        for (i, r) in raw.rules.into_iter().enumerate() {
            let (from, until) = if aligned_rules {
                span(&rule_entries, i)
            } else {
                (1, None)
            };
            let ie = ItemErr {
                file: path,
                text: &text,
                item: format!("rule `{}`", r.id),
                from,
                until,
            };
            if let Some(rule) = self.rule(r, &ie) {
                self.rules.push(rule);
                self.rule_at.push(Located {
                    file: path.to_path_buf(),
                    text: src.to_string(),
                    from,
                    until,
                });
            }
        }
        let aligned_tests = test_entries.len() == raw.tests.len();
        for (i, t) in raw.tests.into_iter().enumerate() {
            let (from, until) = if aligned_tests {
                span(&test_entries, i)
            } else {
                (1, None)
            };
            let ie = ItemErr {
                file: path,
                text: &text,
                item: format!("test `{}`", t.name),
                from,
                until,
            };
            if let Some(test) = self.test(t, &ie) {
                self.tests.push(test);
                self.test_at.push(Located {
                    file: path.to_path_buf(),
                    text: src.to_string(),
                    from,
                    until,
                });
            }
        }
    }

    fn rule(&mut self, r: RawRule, ie: &ItemErr) -> Option<Rule> {
        let before = self.errors.len();
        let profile = Profile::parse(&r.profile);
        if profile.is_none() {
            self.errors.push(ie.at(
                "profile",
                None,
                format!(
                    "unknown profile `{}`: expected cdp2, cdp1 or pdl",
                    r.profile
                ),
            ));
        }
        let parts: Vec<&str> = r.id.split('.').collect();
        let well_formed = parts.len() >= 3
            && parts.iter().all(|p| {
                !p.is_empty()
                    && p.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            });
        if !well_formed {
            self.errors.push(ie.at(
                "id",
                None,
                "an id reads `<profile>.<area>.<claim>`: lowercase words, digits and `-`, separated by dots",
            ));
        } else if let Some(p) = profile
            && parts[0] != p.as_str()
        {
            self.errors.push(ie.at(
                "id",
                None,
                format!("the id starts with `{}` but the profile is `{p}`", parts[0]),
            ));
        }
        if r.quote.trim().is_empty() {
            self.errors.push(ie.at("quote", None, "the quote is empty"));
        }
        let untested = match (&r.status, &r.reason) {
            (None, None) => None,
            (Some(s), Some(reason)) => match UntestedStatus::parse(s) {
                Some(status) if !reason.trim().is_empty() => Some(Untested {
                    status,
                    reason: reason.clone(),
                }),
                Some(_) => {
                    self.errors
                        .push(ie.at("reason", None, "the reason is empty"));
                    None
                }
                None => {
                    self.errors.push(ie.at(
                        "status",
                        None,
                        format!(
                            "unknown status `{s}`: expected one of {}",
                            UntestedStatus::ALL.map(UntestedStatus::as_str).join(", ")
                        ),
                    ));
                    None
                }
            },
            (Some(_), None) => {
                self.errors
                    .push(ie.at("status", None, "a status needs a `reason`"));
                None
            }
            (None, Some(_)) => {
                self.errors
                    .push(ie.at("reason", None, "a reason goes with a `status`"));
                None
            }
        };
        if r.tests.is_empty() && untested.is_none() && r.status.is_none() {
            self.errors.push(ie.at(
                "tests",
                None,
                "the rule has no test: list its tests, or give a `status` and a `reason`",
            ));
        }
        let mut seen = BTreeSet::new();
        for t in &r.tests {
            if !seen.insert(t) {
                self.errors
                    .push(ie.at("tests", Some(t), format!("test `{t}` is listed twice")));
            }
        }
        if self.errors.len() > before {
            return None;
        }
        Some(Rule {
            id: r.id,
            source: Source {
                seed: r.source.seed,
                section: r.source.section,
            },
            quote: r.quote,
            profile: profile?,
            tests: r.tests,
            untested,
            decision: r.decision,
            origin: Origin {
                file: ie.file.to_path_buf(),
                line: ie.from,
            },
        })
    }

    fn test(&mut self, t: RawTest, ie: &ItemErr) -> Option<Test> {
        let before = self.errors.len();
        if !t
            .name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            || t.name.is_empty()
        {
            self.errors.push(ie.at(
                "name",
                None,
                "a test name is lowercase words, digits and `-`",
            ));
        }
        let fields: [(&str, bool, &[&str]); 13] = [
            ("memory", t.memory.is_some(), &["litmus"]),
            ("kernels", t.kernels.is_some(), &["litmus"]),
            ("condition", t.condition.is_some(), &["litmus"]),
            ("arch", t.arch.is_some(), &["compile", "runtime", "host"]),
            ("flags", t.flags.is_some(), &["compile", "runtime", "host"]),
            (
                "source",
                t.source.is_some(),
                &["compile", "runtime", "host"],
            ),
            ("diagnostic", t.diagnostic.is_some(), &["compile"]),
            ("entry", t.entry.is_some(), &["runtime"]),
            ("grid", t.grid.is_some(), &["runtime"]),
            ("block", t.block.is_some(), &["runtime"]),
            ("limits", t.limits.is_some(), &["runtime", "litmus"]),
            ("outputs", t.outputs.is_some(), &["runtime", "host"]),
            ("load_error", t.load_error.is_some(), &["runtime"]),
        ];
        if !["litmus", "compile", "runtime", "host"].contains(&t.kind.as_str()) {
            self.errors.push(ie.at(
                "kind",
                None,
                format!(
                    "unknown kind `{}`: expected litmus, compile, runtime or host",
                    t.kind
                ),
            ));
            return None;
        }
        for (f, present, kinds) in fields {
            if present && !kinds.contains(&t.kind.as_str()) {
                self.errors.push(ie.at(
                    f,
                    None,
                    format!("`{f}` is not a field of a {} test", t.kind),
                ));
            }
        }
        let body = match t.kind.as_str() {
            "litmus" => self.litmus(&t, ie).map(TestBody::Litmus),
            "compile" => self.compile(&t, ie).map(TestBody::Compile),
            "host" => self.host(&t, ie).map(TestBody::Host),
            _ => self.runtime(&t, ie).map(TestBody::Runtime),
        };
        if self.errors.len() > before {
            return None;
        }
        Some(Test {
            name: t.name,
            description: t.description,
            body: body?,
            origin: Origin {
                file: ie.file.to_path_buf(),
                line: ie.from,
            },
            source_line: ie.text.source_start(ie.from, ie.until),
        })
    }

    /// The `expect` of a litmus or compile test: a plain word.
    fn expect_word(&mut self, t: &RawTest, ie: &ItemErr) -> Option<String> {
        match &t.expect {
            Some(serde_yaml::Value::String(s)) => Some(s.clone()),
            Some(_) => {
                self.errors.push(ie.at(
                    "expect",
                    None,
                    format!("a {} test's `expect` is a word", t.kind),
                ));
                None
            }
            None => {
                self.errors.push(ie.at(
                    "expect",
                    Some("name:"),
                    format!("a {} test needs `expect`", t.kind),
                ));
                None
            }
        }
    }

    fn arch(&mut self, t: &RawTest, ie: &ItemErr) -> String {
        let arch = t.arch.clone().unwrap_or_else(|| "sm_90".into());
        if !arch
            .strip_prefix("sm_")
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric()))
        {
            self.errors.push(ie.at(
                "arch",
                None,
                format!("`{arch}` is not an architecture like `sm_90`"),
            ));
        }
        arch
    }

    fn runtime(&mut self, t: &RawTest, ie: &ItemErr) -> Option<RuntimeTest> {
        let before = self.errors.len();
        let arch = self.arch(t, ie);
        let Some(source) = &t.source else {
            self.errors
                .push(ie.at("source", Some("name:"), "a runtime test needs `source`"));
            return None;
        };
        let entry = t.entry.clone().unwrap_or_else(|| "entry".into());
        if !is_ident(&entry) {
            self.errors
                .push(ie.at("entry", None, format!("`{entry}` is not a kernel name")));
        } else if !source.contains(&format!("extern \"C\" __global__ void {entry}(")) {
            self.errors.push(ie.at(
                "source",
                None,
                format!(
                    "the source has no `extern \"C\" __global__ void {entry}(unsigned int *out)`"
                ),
            ));
        }
        let (grid, block) = (t.grid.unwrap_or(1), t.block.unwrap_or(1));
        if grid == 0 || block == 0 || block > 1024 {
            self.errors.push(ie.at(
                if grid == 0 { "grid" } else { "block" },
                None,
                "grid is at least 1, block 1 to 1024",
            ));
        }
        let mut limits = Vec::new();
        for (name, v) in t.limits.iter().flatten() {
            match Limit::parse(name) {
                Some(l) => limits.push((l, *v)),
                None => self.errors.push(ie.at(
                    &format!("limits.{name}"),
                    Some(name),
                    format!(
                        "unknown limit `{name}`: expected one of {}",
                        Limit::ALL.map(Limit::as_str).join(", ")
                    ),
                )),
            }
        }
        let outputs = self.outputs(t, ie);
        let expect = match (&t.load_error, &t.expect) {
            (Some(name), None) => match cuda_error_value(name) {
                Some(value) => Some(RuntimeExpect::LoadError {
                    name: name.clone(),
                    value,
                }),
                None => {
                    self.errors.push(ie.at(
                        "load_error",
                        None,
                        format!("`{name}` is not a cudaError_t name"),
                    ));
                    None
                }
            },
            (Some(_), Some(_)) => {
                self.errors.push(ie.at(
                    "load_error",
                    None,
                    "a test expects either a load error or output values, not both",
                ));
                None
            }
            (None, Some(serde_yaml::Value::Mapping(m))) => {
                Some(RuntimeExpect::Values(self.value_checks(m, &outputs, ie)))
            }
            (None, Some(_)) => {
                self.errors.push(ie.at(
                    "expect",
                    None,
                    "a runtime test's `expect` maps output names to values",
                ));
                None
            }
            (None, None) => {
                self.errors.push(ie.at(
                    "expect",
                    Some("name:"),
                    "a runtime test needs `expect` (output values) or `load_error`",
                ));
                None
            }
        };
        if self.errors.len() > before {
            return None;
        }
        Some(RuntimeTest {
            arch,
            flags: t.flags.clone().unwrap_or_default(),
            source: source.clone(),
            entry,
            grid,
            block,
            limits,
            outputs,
            expect: expect?,
        })
    }

    /// The `outputs` of a runtime or host test: unique names, at most 64.
    fn outputs(&mut self, t: &RawTest, ie: &ItemErr) -> Vec<String> {
        let outputs = t.outputs.clone().unwrap_or_default();
        let mut seen = BTreeSet::new();
        for o in &outputs {
            if !is_ident(o) || !seen.insert(o) {
                self.errors.push(ie.at(
                    "outputs",
                    Some(o),
                    format!("output `{o}` is not a unique name"),
                ));
            }
        }
        if outputs.len() > 64 {
            self.errors
                .push(ie.at("outputs", None, "at most 64 outputs"));
        }
        outputs
    }

    /// The `expect` mapping of a runtime or host test: output name to check.
    fn value_checks(
        &mut self,
        m: &serde_yaml::Mapping,
        outputs: &[String],
        ie: &ItemErr,
    ) -> Vec<(String, Check)> {
        let mut checks = Vec::new();
        for (k, v) in m {
            let Some(k) = k.as_str() else {
                self.errors
                    .push(ie.at("expect", None, "output names are strings"));
                continue;
            };
            if !outputs.iter().any(|o| o == k) {
                self.errors.push(ie.at(
                    &format!("expect.{k}"),
                    Some(&format!("{k}:")),
                    format!("`{k}` is not one of the `outputs`"),
                ));
                continue;
            }
            match parse_check(v) {
                Ok(c) => checks.push((k.to_string(), c)),
                Err(m) => {
                    self.errors
                        .push(ie.at(&format!("expect.{k}"), Some(&format!("{k}:")), m))
                }
            }
        }
        if checks.is_empty() {
            self.errors
                .push(ie.at("expect", None, "a test checks at least one output"));
        }
        checks
    }

    fn host(&mut self, t: &RawTest, ie: &ItemErr) -> Option<HostTest> {
        let before = self.errors.len();
        let arch = self.arch(t, ie);
        let Some(source) = &t.source else {
            self.errors
                .push(ie.at("source", Some("name:"), "a host test needs `source`"));
            return None;
        };
        if !source.contains("int main(") {
            self.errors.push(ie.at(
                "source",
                None,
                "a host test's source is a whole program with `int main(`",
            ));
        }
        let outputs = self.outputs(t, ie);
        let expect = match &t.expect {
            Some(serde_yaml::Value::Mapping(m)) => self.value_checks(m, &outputs, ie),
            Some(_) => {
                self.errors.push(ie.at(
                    "expect",
                    None,
                    "a host test's `expect` maps output names to values",
                ));
                Vec::new()
            }
            None => {
                self.errors.push(ie.at(
                    "expect",
                    Some("name:"),
                    "a host test needs `expect` (output values)",
                ));
                Vec::new()
            }
        };
        if self.errors.len() > before {
            return None;
        }
        Some(HostTest {
            arch,
            flags: t.flags.clone().unwrap_or_default(),
            source: source.clone(),
            outputs,
            expect,
        })
    }

    fn compile(&mut self, t: &RawTest, ie: &ItemErr) -> Option<CompileTest> {
        let Some(source) = &t.source else {
            self.errors
                .push(ie.at("source", Some("name:"), "a compile test needs `source`"));
            return None;
        };
        let arch = self.arch(t, ie);
        let word = self.expect_word(t, ie)?;
        let expect = match (word.as_str(), &t.diagnostic) {
            ("accept", None) => CompileExpect::Accept,
            ("accept", Some(_)) => {
                self.errors.push(ie.at(
                    "diagnostic",
                    None,
                    "an accepted snippet has no diagnostic",
                ));
                return None;
            }
            ("reject", Some(d)) => CompileExpect::Reject {
                diagnostic: d.clone(),
            },
            ("warn", Some(d)) => CompileExpect::Warn {
                diagnostic: d.clone(),
            },
            ("reject" | "warn", None) => {
                self.errors.push(ie.at(
                    "diagnostic",
                    Some("expect:"),
                    format!("`expect: {word}` needs a `diagnostic` substring"),
                ));
                return None;
            }
            (e, _) => {
                self.errors.push(ie.at("expect", None, format!("unknown expectation `{e}` for a compile test: expected accept, reject or warn")));
                return None;
            }
        };
        Some(CompileTest {
            arch,
            flags: t.flags.clone().unwrap_or_default(),
            source: source.clone(),
            expect,
        })
    }

    fn litmus(&mut self, t: &RawTest, ie: &ItemErr) -> Option<Litmus> {
        let before = self.errors.len();
        let word = self.expect_word(t, ie).unwrap_or_default();
        let expect = Verdict::parse(&word);
        if expect.is_none() && t.expect.is_some() {
            self.errors.push(ie.at("expect", None, format!("unknown verdict `{word}` for a litmus test: expected forbidden, allowed or required")));
        }
        let memory: Vec<(String, u32)> = t.memory.clone().unwrap_or_default().into_iter().collect();
        if memory.is_empty() {
            self.errors.push(ie.at(
                "memory",
                Some("name:"),
                "a litmus test declares its memory locations",
            ));
        }
        for (loc, _) in &memory {
            if !is_ident(loc) {
                self.errors.push(ie.at(
                    "memory",
                    Some(loc),
                    format!("`{loc}` is not a valid location name"),
                ));
            }
        }
        let locs: BTreeSet<&str> = memory.iter().map(|(l, _)| l.as_str()).collect();
        let raw_kernels: &[RawKernel] = t.kernels.as_deref().unwrap_or_default();
        if raw_kernels.is_empty() {
            self.errors.push(ie.at(
                "kernels",
                Some("name:"),
                "a litmus test has at least one kernel",
            ));
        }
        let mut kernels = Vec::new();
        let mut names = BTreeSet::new();
        for rk in raw_kernels {
            let kfield = format!("kernels.{}", rk.kernel);
            let kneedle = format!("kernel: {}", rk.kernel);
            if !is_ident(&rk.kernel) {
                self.errors.push(ie.at(
                    &kfield,
                    Some(&kneedle),
                    format!("`{}` is not a valid kernel name", rk.kernel),
                ));
            }
            if !names.insert(rk.kernel.clone()) {
                self.errors.push(ie.at(
                    &kfield,
                    Some(&kneedle),
                    format!("kernel `{}` is declared twice", rk.kernel),
                ));
            }
            let launch = match rk.launch.as_str() {
                "host" => KernelLaunch::Host { pdl: false },
                "host-pdl" => KernelLaunch::Host { pdl: true },
                "device" => KernelLaunch::Device,
                l => {
                    self.errors.push(ie.at(
                        &format!("{kfield}.launch"),
                        Some(&format!("launch: {l}")),
                        format!("unknown launch `{l}`: expected host, host-pdl or device"),
                    ));
                    KernelLaunch::Device
                }
            };
            if rk.threads.is_empty() {
                self.errors.push(ie.at(
                    &format!("{kfield}.threads"),
                    Some(&kneedle),
                    "a kernel has at least one thread",
                ));
            }
            let mut threads = Vec::new();
            for (tname, ops) in &rk.threads {
                let tfield = format!("{kfield}.threads.{tname}");
                let valid_name = tname.strip_prefix('t').is_some_and(|n| {
                    !n.is_empty() && n.len() < 5 && n.chars().all(|c| c.is_ascii_digit())
                });
                if !valid_name {
                    self.errors.push(ie.at(
                        &tfield,
                        Some(&format!("{tname}:")),
                        format!("thread `{tname}` is not named `t<index>`"),
                    ));
                }
                let mut parsed = Vec::new();
                let mut regs = BTreeSet::new();
                for (i, text) in ops.iter().enumerate() {
                    let ofield = format!("{tfield}[{i}]");
                    match parse_op(text) {
                        Ok(op) => {
                            let bad_loc = match &op {
                                Op::Store { loc, .. } | Op::Load { loc, .. }
                                    if !locs.contains(loc.as_str()) =>
                                {
                                    Some(loc.clone())
                                }
                                _ => None,
                            };
                            if let Some(loc) = bad_loc {
                                self.errors.push(ie.at(
                                    &ofield,
                                    Some(text),
                                    format!("location `{loc}` is not declared in `memory`"),
                                ));
                            }
                            if let Some(reg) = op.register()
                                && !regs.insert(reg.to_string())
                            {
                                self.errors.push(ie.at(
                                    &ofield,
                                    Some(text),
                                    format!(
                                        "register `{reg}` is written twice in thread `{tname}`"
                                    ),
                                ));
                            }
                            parsed.push(op);
                        }
                        Err(msg) => self.errors.push(ie.at(&ofield, Some(text), msg)),
                    }
                }
                threads.push(Thread {
                    name: tname.clone(),
                    ops: parsed,
                });
            }
            kernels.push(Kernel {
                name: rk.kernel.clone(),
                launch,
                threads,
            });
        }
        // Launch structure: each device kernel launched exactly once, host
        // kernels never; no kernel launches itself or an ancestor.
        let mut launched: HashMap<String, usize> = HashMap::new();
        let mut parent_of: BTreeMap<String, String> = BTreeMap::new();
        for k in &kernels {
            for th in &k.threads {
                for op in &th.ops {
                    if let Op::Launch { kernel, .. } = op {
                        let needle = format!("launch {kernel}");
                        match kernels.iter().find(|c| &c.name == kernel) {
                            None => self.errors.push(ie.at(&format!("kernels.{}.threads.{}", k.name, th.name), Some(&needle), format!("`{op}` launches kernel `{kernel}`, which this test does not declare"))),
                            Some(c) if c.launch != KernelLaunch::Device => self.errors.push(ie.at(&format!("kernels.{}.threads.{}", k.name, th.name), Some(&needle), format!("kernel `{kernel}` is launched from the host (`launch: host`) and cannot also be launched from device code"))),
                            Some(_) => {
                                *launched.entry(kernel.clone()).or_default() += 1;
                                parent_of.insert(kernel.clone(), k.name.clone());
                            }
                        }
                    }
                }
            }
        }
        for k in &kernels {
            if k.launch == KernelLaunch::Device {
                match launched.get(&k.name).copied().unwrap_or(0) {
                    1 => {}
                    0 => self.errors.push(ie.at(
                        &format!("kernels.{}.launch", k.name),
                        Some(&format!("kernel: {}", k.name)),
                        format!(
                            "kernel `{}` is `launch: device` but no operation launches it",
                            k.name
                        ),
                    )),
                    n => self.errors.push(ie.at(
                        &format!("kernels.{}.launch", k.name),
                        Some(&format!("kernel: {}", k.name)),
                        format!(
                            "kernel `{}` is launched {n} times; each test kernel is launched once",
                            k.name
                        ),
                    )),
                }
            }
            let mut cur = k.name.as_str();
            let mut steps = 0;
            while let Some(p) = parent_of.get(cur) {
                steps += 1;
                if p == &k.name || steps > kernels.len() {
                    self.errors.push(ie.at(
                        &format!("kernels.{}", k.name),
                        Some(&format!("kernel: {}", k.name)),
                        format!(
                            "kernel `{}` launches itself, directly or through its children",
                            k.name
                        ),
                    ));
                    break;
                }
                cur = p;
            }
        }
        // Events are block-scoped objects: a wait names an event some
        // thread of the same kernel records.
        for k in &kernels {
            let recorded: BTreeSet<&str> = k
                .threads
                .iter()
                .flat_map(|t| &t.ops)
                .filter_map(|op| match op {
                    Op::EventRecord { event, .. } => Some(event.as_str()),
                    _ => None,
                })
                .collect();
            for th in &k.threads {
                for op in &th.ops {
                    if let Op::StreamWaitEvent { event, .. } = op
                        && !recorded.contains(event.as_str())
                    {
                        self.errors.push(ie.at(
                            &format!("kernels.{}.threads.{}", k.name, th.name),
                            Some(&op.to_string()),
                            format!("`{op}` waits on event `{event}`, which no thread of kernel `{}` records", k.name),
                        ));
                    }
                }
            }
        }
        let host: Vec<&Kernel> = kernels
            .iter()
            .filter(|k| matches!(k.launch, KernelLaunch::Host { .. }))
            .collect();
        if !kernels.is_empty() && host.is_empty() {
            self.errors
                .push(ie.at("kernels", None, "no kernel is launched from the host"));
        }
        if let Some(first) = host.first()
            && first.launch == (KernelLaunch::Host { pdl: true })
        {
            self.errors.push(ie.at(&format!("kernels.{}.launch", first.name), Some("host-pdl"), "the first host kernel has no primary to overlap: `host-pdl` needs a kernel before it"));
        }
        let n_threads: usize = kernels.iter().map(|k| k.threads.len()).sum();
        if n_threads > MAX_THREADS {
            self.errors.push(ie.at("kernels", None, format!("{n_threads} threads in all; the model (loom) explores at most {MAX_THREADS}: use representative threads")));
        }
        let mut limits = Vec::new();
        for (name, v) in t.limits.iter().flatten() {
            let field = format!("limits.{name}");
            match Limit::parse(name) {
                Some(l) if l.applies_to_litmus() && *v >= 1 => limits.push((l, *v)),
                Some(l) if l.applies_to_litmus() => {
                    self.errors
                        .push(ie.at(&field, Some(name), format!("`{name}` is at least 1")))
                }
                _ => self.errors.push(ie.at(
                    &field,
                    Some(name),
                    format!(
                        "`{name}` is not a litmus test limit: expected {}",
                        Limit::ALL
                            .into_iter()
                            .filter(|l| l.applies_to_litmus())
                            .map(Limit::as_str)
                            .collect::<Vec<_>>()
                            .join(" or ")
                    ),
                )),
            }
        }
        let cond = match &t.condition {
            None => {
                self.errors.push(ie.at(
                    "condition",
                    Some("name:"),
                    "a litmus test needs a `condition`",
                ));
                None
            }
            Some(c) => match condition::parse(c) {
                Ok(c) => Some(c),
                Err(m) => {
                    self.errors.push(ie.at("condition", None, m));
                    None
                }
            },
        };
        if self.errors.len() > before {
            return None;
        }
        let lit = Litmus {
            memory,
            kernels,
            condition: cond?,
            expect: expect?,
            limits,
        };
        let obs: BTreeSet<String> = lit.observables().into_iter().collect();
        for term in lit.condition.terms() {
            if !obs.contains(term) {
                self.errors.push(ie.at(
                    "condition",
                    Some(term),
                    format!(
                        "`{term}` is neither a register (`kernel.thread.reg`) nor a memory location"
                    ),
                ));
            }
        }
        (self.errors.len() == before).then_some(lit)
    }

    fn cross_checks(&mut self, seeds: Option<&Seeds>) {
        let err_at =
            |at: &Located, item: String, field: &str, needle: Option<&str>, msg: String| {
                let text = Text::new(&at.text);
                ItemErr {
                    file: &at.file,
                    text: &text,
                    item,
                    from: at.from,
                    until: at.until,
                }
                .at(field, needle, msg)
            };
        let mut ids: HashMap<&str, usize> = HashMap::new();
        for (i, r) in self.rules.iter().enumerate() {
            if let Some(&first) = ids.get(r.id.as_str()) {
                let prev = &self.rules[first].origin;
                self.errors.push(err_at(
                    &self.rule_at[i],
                    format!("rule `{}`", r.id),
                    "id",
                    None,
                    format!("duplicate id: also defined at {prev}"),
                ));
            } else {
                ids.insert(&r.id, i);
            }
        }
        let mut names: HashMap<&str, usize> = HashMap::new();
        for (i, t) in self.tests.iter().enumerate() {
            if let Some(&first) = names.get(t.name.as_str()) {
                let prev = &self.tests[first].origin;
                self.errors.push(err_at(
                    &self.test_at[i],
                    format!("test `{}`", t.name),
                    "name",
                    None,
                    format!("duplicate test name: also defined at {prev}"),
                ));
            } else {
                names.insert(&t.name, i);
            }
        }
        let mut referenced = BTreeSet::new();
        for (i, r) in self.rules.iter().enumerate() {
            for name in &r.tests {
                referenced.insert(name.as_str());
                if !names.contains_key(name.as_str()) {
                    self.errors.push(err_at(
                        &self.rule_at[i],
                        format!("rule `{}`", r.id),
                        "tests",
                        Some(name),
                        format!("test `{name}` is not defined in any spec file"),
                    ));
                }
            }
            if let Some(seeds) = seeds {
                if !seeds.has(&r.source.seed) {
                    let known: Vec<&str> = seeds.names().collect();
                    self.errors.push(err_at(
                        &self.rule_at[i],
                        format!("rule `{}`", r.id),
                        "source.seed",
                        Some(&r.source.seed),
                        format!(
                            "no seed `{}` in {} (have: {})",
                            r.source.seed,
                            seeds.dir.display(),
                            known.join(", ")
                        ),
                    ));
                } else if !seeds.contains(&r.source.seed, &r.quote) {
                    let prefix = seeds.matching_prefix(&r.source.seed, &r.quote);
                    self.errors.push(err_at(&self.rule_at[i], format!("rule `{}`", r.id), "quote", None, format!("the quote is not verbatim in {}: it matches up to \"{}\" and then differs", r.source.seed, prefix)));
                } else {
                    let title = r
                        .source
                        .section
                        .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ' ');
                    if !seeds.contains(&r.source.seed, title) {
                        self.errors.push(err_at(
                            &self.rule_at[i],
                            format!("rule `{}`", r.id),
                            "source.section",
                            None,
                            format!(
                                "section title `{title}` does not occur in {}",
                                r.source.seed
                            ),
                        ));
                    }
                }
            }
        }
        for (i, r) in self.rules.iter().enumerate() {
            if let Some(u) = r.untested.as_ref().filter(|u| u.status.names_rules()) {
                let named = crate::sentences::rule_ids_in(&u.reason);
                let msg = match named.iter().find(|id| !ids.contains_key(id.as_str())) {
                    Some(id) => Some(format!("the reason names `{id}`, which is no rule")),
                    None if named.is_empty() => Some(format!(
                        "a `{}` names the rules it concerns by id in its reason",
                        u.status.as_str()
                    )),
                    None => None,
                };
                if let Some(msg) = msg {
                    self.errors.push(err_at(
                        &self.rule_at[i],
                        format!("rule `{}`", r.id),
                        "reason",
                        None,
                        msg,
                    ));
                }
            }
        }
        for (i, t) in self.tests.iter().enumerate() {
            if !referenced.contains(t.name.as_str()) {
                self.errors.push(err_at(
                    &self.test_at[i],
                    format!("test `{}`", t.name),
                    "name",
                    None,
                    "no rule lists this test in its `tests`".into(),
                ));
            }
        }
    }
}

/// `3`, `">= 16"`, `cudaErrorLaunchPendingCountExceeded`, `"!= cudaSuccess"`.
fn parse_check(v: &serde_yaml::Value) -> Result<Check, String> {
    if let Some(n) = v.as_u64() {
        let value = u32::try_from(n).map_err(|_| format!("{n} does not fit in 32 bits"))?;
        return Ok(Check {
            op: CmpOp::Eq,
            value,
            text: n.to_string(),
        });
    }
    let Some(s) = v.as_str() else {
        return Err(
            "a value is a number, a cudaError_t name, or a comparison such as \">= 16\"".into(),
        );
    };
    let t = s.trim();
    let (op, rest) = [
        ("==", CmpOp::Eq),
        ("!=", CmpOp::Ne),
        (">=", CmpOp::Ge),
        ("<=", CmpOp::Le),
        (">", CmpOp::Gt),
        ("<", CmpOp::Lt),
    ]
    .into_iter()
    .find_map(|(p, op)| t.strip_prefix(p).map(|r| (op, r.trim())))
    .unwrap_or((CmpOp::Eq, t));
    let value = match rest.parse::<u32>() {
        Ok(n) => n,
        Err(_) => cuda_error_value(rest)
            .ok_or_else(|| format!("`{rest}` is neither a 32-bit number nor a cudaError_t name"))?,
    };
    Ok(Check {
        op,
        value,
        text: t.to_string(),
    })
}
