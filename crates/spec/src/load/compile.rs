//! A compile test: a snippet nvcc accepts, rejects or warns about.

use super::{Cx, ItemErr};
use crate::ast::*;
use crate::raw::RawTest;

impl Cx {
    pub(super) fn compile(&mut self, t: &RawTest, ie: &ItemErr) -> Option<CompileTest> {
        let Some(source) = &t.source else {
            self.errors.push(ie.at(
                "source",
                Some("name:"),
                "a compile test needs `source` or `source_file`",
            ));
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
}
