//! A test: name and kind-specific fields, then the kind's own loader;
//! the fields several kinds share (`expect` as a word, `arch`).

use super::{Cx, ItemErr};
use crate::ast::*;
use crate::ops::is_name;
use crate::raw::RawTest;

impl Cx {
    pub(super) fn test(&mut self, mut t: RawTest, ie: &ItemErr) -> Option<Test> {
        let before = self.errors.len();
        if !is_name(&t.name) {
            // It becomes part of C symbols (`-` as `_`): a letter first.
            self.errors.push(ie.at(
                "name",
                None,
                "a test name is lowercase words, digits and `-`, starting with a letter",
            ));
        }
        let fields: [(&str, bool, &[&str]); 17] = [
            ("memory", t.memory.is_some(), &["litmus"]),
            ("shared", t.shared.is_some(), &["litmus"]),
            ("kernels", t.kernels.is_some(), &["litmus"]),
            ("condition", t.condition.is_some(), &["litmus"]),
            ("arch", t.arch.is_some(), &["compile", "runtime", "host"]),
            ("flags", t.flags.is_some(), &["compile", "runtime", "host"]),
            (
                "source",
                t.source.is_some(),
                &["compile", "runtime", "host"],
            ),
            (
                "source_file",
                t.source_file.is_some(),
                &["compile", "runtime", "host"],
            ),
            ("diagnostic", t.diagnostic.is_some(), &["compile"]),
            ("entry", t.entry.is_some(), &["runtime"]),
            ("grid", t.grid.is_some(), &["runtime"]),
            ("block", t.block.is_some(), &["runtime"]),
            ("limits", t.limits.is_some(), &["runtime", "litmus"]),
            ("outputs", t.outputs.is_some(), &["runtime", "host"]),
            ("load_error", t.load_error.is_some(), &["runtime"]),
            (
                "gpu_timeout",
                t.gpu_timeout.is_some(),
                &["litmus", "runtime", "host"],
            ),
            ("may", t.may.is_some(), &["host"]),
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
        let source_file = self.source_file(&mut t, ie);
        if t.source_file.is_some() && source_file.is_none() {
            // The file could not be read (the error says why): the test's
            // other checks would only add that it has no program.
            return None;
        }
        let body = match t.kind.as_str() {
            "litmus" => self.litmus(&t, ie).map(TestBody::Litmus),
            "compile" => self.compile(&t, ie).map(TestBody::Compile),
            "host" => self.host(&t, ie).map(TestBody::Host),
            _ => self.runtime(&t, ie).map(TestBody::Runtime),
        };
        if let Some(s) = t.gpu_timeout
            && !(1..=MAX_GPU_TIMEOUT).contains(&s)
        {
            self.errors.push(ie.at(
                "gpu_timeout",
                None,
                format!("`gpu_timeout` is seconds, 1 to {MAX_GPU_TIMEOUT}; {s} is not"),
            ));
        }
        if self.errors.len() > before {
            return None;
        }
        // A bad former name is an error of its own: the test still loads,
        // so that rules listing it are not told it is missing. (One that is
        // a test's name, this one's too, is found across items.)
        let formerly = t.formerly.clone().unwrap_or_default();
        for (i, f) in formerly.iter().enumerate() {
            if !is_name(f) {
                self.errors.push(ie.at(
                    "formerly",
                    Some(f),
                    format!("`{f}` is not a test name: lowercase words, digits and `-`, starting with a letter"),
                ));
            } else if formerly[..i].contains(f) {
                self.errors
                    .push(ie.at("formerly", Some(f), format!("`{f}` is listed twice")));
            }
        }
        Some(Test {
            name: t.name,
            description: t.description,
            formerly,
            body: body?,
            origin: Origin {
                file: ie.file.to_path_buf(),
                line: ie.from,
            },
            // A program in its own file starts on the file's first line.
            source_line: match source_file {
                Some(_) => Some(1),
                None => ie.text.source_start(ie.from, ie.until),
            },
            source_file,
            gpu_timeout: t.gpu_timeout,
        })
    }

    /// The `expect` of a litmus or compile test: a plain word.
    pub(super) fn expect_word(&mut self, t: &RawTest, ie: &ItemErr) -> Option<String> {
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

    pub(super) fn arch(&mut self, t: &RawTest, ie: &ItemErr) -> String {
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
}

/// The longest `gpu_timeout` (an hour): it only ever shortens `--timeout`.
const MAX_GPU_TIMEOUT: u64 = 3600;
