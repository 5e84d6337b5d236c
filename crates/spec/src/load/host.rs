//! A host test: a whole CUDA program, its output checks (`expect`) and
//! the outcomes it allows and should show (`may`).

use super::{Cx, ItemErr};
use crate::ast::*;
use crate::raw::RawTest;

impl Cx {
    pub(super) fn host(&mut self, t: &RawTest, ie: &ItemErr) -> Option<HostTest> {
        let before = self.errors.len();
        let arch = self.arch(t, ie);
        let Some(source) = &t.source else {
            self.errors.push(ie.at(
                "source",
                Some("name:"),
                "a host test needs `source` or `source_file`",
            ));
            return None;
        };
        if !source.contains("int main(") {
            self.errors.push(ie.at(
                t.source_field(),
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
        let may = self.may(t, &outputs, &expect, ie);
        if self.errors.len() > before {
            return None;
        }
        Some(HostTest {
            arch,
            flags: t.flags.clone().unwrap_or_default(),
            source: source.clone(),
            outputs,
            expect,
            may,
        })
    }

    /// A host test's `may`: checks of outputs that `expect` does not check.
    fn may(
        &mut self,
        t: &RawTest,
        outputs: &[String],
        expect: &[(String, Check)],
        ie: &ItemErr,
    ) -> Vec<(String, Check)> {
        let m = match &t.may {
            None => return Vec::new(),
            Some(serde_yaml::Value::Mapping(m)) => m,
            Some(_) => {
                self.errors.push(ie.at(
                    "may",
                    None,
                    "a host test's `may` maps output names to values",
                ));
                return Vec::new();
            }
        };
        let may = self.checks_of("may", m, outputs, ie);
        for (name, _) in &may {
            if expect.iter().any(|(e, _)| e == name) {
                self.errors.push(ie.at(
                    &format!("may.{name}"),
                    Some(&format!("{name}:")),
                    format!("`{name}` is checked by `expect` already: an output is expected or allowed, not both"),
                ));
            }
        }
        may
    }
}
