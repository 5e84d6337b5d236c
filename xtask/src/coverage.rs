//! `cargo xtask spec coverage`: what the spec covers, and what it cannot run.

use std::collections::BTreeMap;

use gridcheck_spec::{Spec, TestBody};

/// The kinds of a rule's tests.
fn kinds(spec: &Spec, rule: &gridcheck_spec::Rule) -> Vec<&'static str> {
    rule.tests
        .iter()
        .filter_map(|t| spec.test(t))
        .map(|t| t.body.kind())
        .collect()
}

fn table(title: &str, second: &str, rows: &BTreeMap<String, [usize; 2]>) -> String {
    let mut s = format!("\n{title:<44} {:>6} {:>6}\n", "rules", second);
    for (k, [r, t]) in rows {
        s.push_str(&format!("  {k:<42} {r:>6} {t:>6}\n"));
    }
    s
}

/// The coverage report as text.
pub fn report(spec: &Spec) -> String {
    let mut by_seed: BTreeMap<String, [usize; 2]> = BTreeMap::new();
    let mut by_section: BTreeMap<String, [usize; 2]> = BTreeMap::new();
    let mut by_profile: BTreeMap<String, [usize; 2]> = BTreeMap::new();
    let mut by_status: BTreeMap<String, [usize; 2]> = BTreeMap::new();
    for r in &spec.rules {
        let n = r.tests.len();
        for (map, key) in [
            (&mut by_seed, r.source.seed.clone()),
            (
                &mut by_section,
                format!("{} {}", &r.source.seed[..3], r.source.section),
            ),
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
    let mut by_kind: BTreeMap<String, [usize; 2]> = BTreeMap::new();
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
    let mut s = format!(
        "spec coverage: {} rules, {} tests ({} rule-test pairs)\n",
        spec.rules.len(),
        spec.tests.len(),
        spec.pairs().count()
    );
    s += &table("by seed", "pairs", &by_seed);
    s += &table("by profile", "pairs", &by_profile);
    s += &table("by test kind (rules listing one, tests)", "tests", &by_kind);
    s += &table("by status", "pairs", &by_status);
    s += &table("by seed section", "pairs", &by_section);
    let gpu_only_cdp1: Vec<&str> = spec
        .rules
        .iter()
        .filter(|r| r.profile == gridcheck_spec::Profile::Cdp1)
        .filter(|r| !r.tests.is_empty() && kinds(spec, r).iter().all(|k| *k == "runtime"))
        .map(|r| r.id.as_str())
        .collect();
    s += "\nrules with no test runnable on this suite's machines (status and reason):\n";
    for r in spec.rules.iter().filter(|r| r.untested.is_some()) {
        let u = r.untested.as_ref().expect("filtered");
        s += &format!(
            "  {:<16} {}: {}\n",
            u.status.as_str(),
            r.id,
            u.reason.trim()
        );
    }
    if !gpu_only_cdp1.is_empty() {
        s += &format!(
            "\ncdp1 rules whose tests need a GPU below compute capability 9.0 (not-supported on 9.0): {}\n",
            gpu_only_cdp1.len()
        );
    }
    let litmus = spec
        .tests
        .iter()
        .filter(|t| matches!(t.body, TestBody::Litmus(_)))
        .count();
    s += &format!("\nlitmus tests: {litmus} (each has a model verdict and a GPU histogram)\n");
    s
}
