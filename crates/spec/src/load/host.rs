//! A host test: a whole CUDA program and its output checks.

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
}
