//! What the spec covers and what it cannot run: rules and tests per seed,
//! section, profile, test kind and status. `cargo xtask spec coverage`
//! prints [`Coverage::text`]; the site's coverage page is
//! [`Coverage::markdown`].

use std::collections::BTreeMap;

use gridcheck_spec::{Profile, Rule, Spec, TestBody};

use crate::text::{cell, rule_path};

/// A table: key to (rules, second count).
pub type Table = BTreeMap<String, [usize; 2]>;

/// The coverage of a spec.
#[derive(Debug, Clone)]
pub struct Coverage {
    pub rules: usize,
    pub tests: usize,
    pub pairs: usize,
    /// Rules and rule-test pairs per seed file.
    pub by_seed: Table,
    /// Rules and pairs per profile.
    pub by_profile: Table,
    /// Per test kind: rules listing a test of it, tests.
    pub by_kind: Table,
    /// Rules and pairs per status (`tested` or the untested status).
    pub by_status: Table,
    /// Rules and pairs per `<seed number> <section>`.
    pub by_section: Table,
    /// (status, rule id, reason) of every rule without a runnable test.
    pub untested: Vec<(String, String, String)>,
    /// CDP1 rules whose only tests are runtime tests (need a GPU below 9.0).
    pub cdp1_gpu_only: Vec<String>,
    pub litmus_tests: usize,
}

/// The kinds of a rule's tests.
fn kinds(spec: &Spec, rule: &Rule) -> Vec<&'static str> {
    rule.tests
        .iter()
        .filter_map(|t| spec.test(t))
        .map(|t| t.body.kind())
        .collect()
}

impl Coverage {
    pub fn of(spec: &Spec) -> Coverage {
        let mut by_seed = Table::new();
        let mut by_section = Table::new();
        let mut by_profile = Table::new();
        let mut by_status = Table::new();
        for r in &spec.rules {
            let n = r.tests.len();
            // A seed by its number (`000`), another document by its name.
            let doc: String = match r.source.seed() {
                Some(seed) => seed.chars().take(3).collect(),
                None => r.source.file.trim_end_matches(".txt").to_string(),
            };
            for (map, key) in [
                (&mut by_seed, r.source.file.clone()),
                (&mut by_section, format!("{doc} {}", r.source.section)),
                (&mut by_profile, r.profile.to_string()),
                (
                    &mut by_status,
                    r.untested
                        .as_ref()
                        .map_or("tested".to_string(), |u| u.status.as_str().to_string()),
                ),
            ] {
                let e = map.entry(key).or_default();
                e[0] += 1;
                e[1] += n;
            }
        }
        let mut by_kind = Table::new();
        for t in &spec.tests {
            let rules = spec
                .rules
                .iter()
                .filter(|r| r.tests.contains(&t.name))
                .count();
            let e = by_kind.entry(t.body.kind().to_string()).or_default();
            e[0] += rules;
            e[1] += 1;
        }
        let untested = spec
            .rules
            .iter()
            .filter_map(|r| {
                r.untested.as_ref().map(|u| {
                    (
                        u.status.as_str().to_string(),
                        r.id.clone(),
                        u.reason.trim().to_string(),
                    )
                })
            })
            .collect();
        let cdp1_gpu_only = spec
            .rules
            .iter()
            .filter(|r| r.profile == Profile::Cdp1)
            .filter(|r| !r.tests.is_empty() && kinds(spec, r).iter().all(|k| *k == "runtime"))
            .map(|r| r.id.clone())
            .collect();
        Coverage {
            rules: spec.rules.len(),
            tests: spec.tests.len(),
            pairs: spec.pairs().count(),
            by_seed,
            by_profile,
            by_kind,
            by_status,
            by_section,
            untested,
            cdp1_gpu_only,
            litmus_tests: spec
                .tests
                .iter()
                .filter(|t| matches!(t.body, TestBody::Litmus(_)))
                .count(),
        }
    }

    fn tables(&self) -> [(&'static str, &'static str, &Table); 5] {
        [
            ("by seed", "pairs", &self.by_seed),
            ("by profile", "pairs", &self.by_profile),
            (
                "by test kind (rules listing one, tests)",
                "tests",
                &self.by_kind,
            ),
            ("by status", "pairs", &self.by_status),
            ("by seed section", "pairs", &self.by_section),
        ]
    }

    /// The report as terminal text.
    pub fn text(&self) -> String {
        let mut s = format!(
            "spec coverage: {} rules, {} tests ({} rule-test pairs)\n",
            self.rules, self.tests, self.pairs
        );
        for (title, second, rows) in self.tables() {
            s += &format!("\n{title:<44} {:>6} {:>6}\n", "rules", second);
            for (k, [r, t]) in rows {
                s.push_str(&format!("  {k:<42} {r:>6} {t:>6}\n"));
            }
        }
        s += "\nrules with no test runnable on this suite's machines (status and reason):\n";
        for (status, id, reason) in &self.untested {
            s += &format!("  {status:<16} {id}: {reason}\n");
        }
        if !self.cdp1_gpu_only.is_empty() {
            s += &format!(
                "\ncdp1 rules whose tests need a GPU below compute capability 9.0 (not-supported on 9.0): {}\n",
                self.cdp1_gpu_only.len()
            );
        }
        s += &format!(
            "\nlitmus tests: {} (each has a model verdict and a GPU histogram)\n",
            self.litmus_tests
        );
        s
    }

    /// The report as a Markdown page; rule ids link to their pages, which
    /// sit beside this page's directory (`../rules/`) when `prefix` is `../`.
    pub fn markdown(&self, prefix: &str) -> String {
        let mut s = format!(
            "# Coverage\n\nThe spec has **{} rules** and **{} tests** ({} rule-test pairs; {} litmus tests, \
             each with a model verdict and a GPU histogram). `cargo xtask spec coverage` prints the same tables.\n",
            self.rules, self.tests, self.pairs, self.litmus_tests
        );
        for (title, second, rows) in self.tables() {
            s += &format!(
                "\n## {}\n\n| | rules | {second} |\n|---|---:|---:|\n",
                capital(title)
            );
            for (k, [r, t]) in rows {
                s += &format!("| {} | {r} | {t} |\n", cell(k));
            }
        }
        s += "\n## Rules without a runnable test\n\n";
        if self.untested.is_empty() {
            s += "Every rule has a runnable test.\n";
        } else {
            s += "| status | rule | reason |\n|---|---|---|\n";
            for (status, id, reason) in &self.untested {
                s += &format!(
                    "| {status} | [{id}]({prefix}{}) | {} |\n",
                    rule_path(id),
                    cell(reason)
                );
            }
        }
        if !self.cdp1_gpu_only.is_empty() {
            s += &format!(
                "\n{} CDP1 rules have only runtime tests, which need a GPU below compute capability 9.0 \
                 (on 9.0 and newer they are `not-supported`).\n",
                self.cdp1_gpu_only.len()
            );
        }
        s
    }
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> Spec {
        let yaml = "rules:
  - id: cdp2.a.b
    source: { seed: 000_x.txt, section: \"1.2 Sec\" }
    quote: q
    profile: cdp2
    tests: [t]
  - id: cdp1.a.c
    source: { seed: 001_y.txt, section: \"Other\" }
    quote: q
    profile: cdp1
    status: needs-older-gpu
    reason: only below 9.0
tests:
  - name: t
    kind: litmus
    memory: { x: 0 }
    kernels:
      - kernel: k
        launch: host
        threads:
          t0: [load r0 x]
    condition: exists k.t0.r0 == 1
    expect: forbidden
";
        gridcheck_spec::load_sources(&[("a.yaml".into(), yaml.into())], None).unwrap()
    }

    #[test]
    fn counts_and_renders() {
        let c = Coverage::of(&spec());
        assert_eq!((c.rules, c.tests, c.pairs, c.litmus_tests), (2, 1, 1, 1));
        assert_eq!(c.by_status["tested"], [1, 1]);
        assert_eq!(c.by_status["needs-older-gpu"], [1, 0]);
        assert_eq!(c.by_section["000 1.2 Sec"], [1, 1]);
        let t = c.text();
        assert!(
            t.starts_with("spec coverage: 2 rules, 1 tests (1 rule-test pairs)"),
            "{t}"
        );
        assert!(
            t.contains("needs-older-gpu  cdp1.a.c: only below 9.0"),
            "{t}"
        );
        let m = c.markdown("../");
        assert!(
            m.contains("| needs-older-gpu | [cdp1.a.c](../rules/cdp1.a.c.md) | only below 9.0 |"),
            "{m}"
        );
        assert!(m.contains("| litmus | 1 | 1 |"), "{m}");
    }
}
