//! A runtime test, and the `outputs` and `expect` checks it shares with
//! host tests.

use std::collections::BTreeSet;

use super::{Cx, ItemErr};
use crate::ast::*;
use crate::cuda_errors::cuda_error_value;
use crate::ops::is_ident;
use crate::raw::RawTest;

impl Cx {
    pub(super) fn runtime(&mut self, t: &RawTest, ie: &ItemErr) -> Option<RuntimeTest> {
        let before = self.errors.len();
        let arch = self.arch(t, ie);
        let Some(source) = &t.source else {
            self.errors.push(ie.at(
                "source",
                Some("name:"),
                "a runtime test needs `source` or `source_file`",
            ));
            return None;
        };
        let entry = t.entry.clone().unwrap_or_else(|| "entry".into());
        if !is_ident(&entry) {
            self.errors
                .push(ie.at("entry", None, format!("`{entry}` is not a kernel name")));
        } else if !source.contains(&format!("extern \"C\" __global__ void {entry}(")) {
            self.errors.push(ie.at(
                t.source_field(),
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
    pub(super) fn outputs(&mut self, t: &RawTest, ie: &ItemErr) -> Vec<String> {
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
    pub(super) fn value_checks(
        &mut self,
        m: &serde_yaml::Mapping,
        outputs: &[String],
        ie: &ItemErr,
    ) -> Vec<(String, Check)> {
        let checks = self.checks_of("expect", m, outputs, ie);
        if checks.is_empty() {
            self.errors
                .push(ie.at("expect", None, "a test checks at least one output"));
        }
        checks
    }

    /// A mapping of `field` (`expect`, `may`): output name to check.
    pub(super) fn checks_of(
        &mut self,
        field: &str,
        m: &serde_yaml::Mapping,
        outputs: &[String],
        ie: &ItemErr,
    ) -> Vec<(String, Check)> {
        let mut checks = Vec::new();
        for (k, v) in m {
            let Some(k) = k.as_str() else {
                self.errors
                    .push(ie.at(field, None, "output names are strings"));
                continue;
            };
            if !outputs.iter().any(|o| o == k) {
                self.errors.push(ie.at(
                    &format!("{field}.{k}"),
                    Some(&format!("{k}:")),
                    format!("`{k}` is not one of the `outputs`"),
                ));
                continue;
            }
            match parse_check(v) {
                Ok(c) => checks.push((k.to_string(), c)),
                Err(m) => {
                    self.errors
                        .push(ie.at(&format!("{field}.{k}"), Some(&format!("{k}:")), m))
                }
            }
        }
        checks
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
