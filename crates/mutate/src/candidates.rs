//! The candidates: every application of an operator to a guarantee of the
//! spec ([`Candidate`]), named `<test>~<operator>[-<k>]`, the ones the
//! loader rejects with why; and whether an observed state kills one.

use gridcheck_spec::{Condition, Litmus, Profile, Spec, State, TestBody, Verdict};

use crate::operators::Operator;

/// The separator between a test's name and its operator in a mutant's name.
pub const SEPARATOR: char = '~';

/// One application of an operator to a test: a mutant if the oracles agree.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Candidate {
    /// `<test>~<operator>` or `<test>~<operator>-<k>`.
    pub name: String,
    /// The test it was made from.
    pub test: String,
    pub operator: Operator,
    /// Where the operator applied, e.g. `parent.t0 op 2 `syncthreads``.
    pub site: String,
    /// The original test's verdict: what a kill contradicts.
    pub original: Verdict,
    /// The profiles of the rules that list the test (a GPU that can run
    /// one of them runs the mutant).
    pub profiles: Vec<Profile>,
    /// The mutated test; its `expect` is `allowed`, which [`judge`] checks.
    pub litmus: Litmus,
}

/// An application of an operator that is not a candidate, with why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    pub name: String,
    pub reason: String,
}

/// Every candidate of the spec, in test order then operator order, and the
/// applications the loader rejects. Only tests whose verdict is a guarantee
/// (`forbidden` or `required`) are mutated.
pub fn candidates(spec: &Spec) -> (Vec<Candidate>, Vec<Rejected>) {
    let mut out = Vec::new();
    let mut rejected = Vec::new();
    for test in &spec.tests {
        let TestBody::Litmus(l) = &test.body else {
            continue;
        };
        if l.expect == Verdict::Allowed {
            continue;
        }
        let profiles = profiles_of(spec, &test.name);
        for op in Operator::ALL {
            let sites = op.apply(l);
            let several = sites.len() > 1;
            for (k, (site, mut m)) in sites.into_iter().enumerate() {
                let name = if several {
                    format!("{}{SEPARATOR}{}-{}", test.name, op.name(), k + 1)
                } else {
                    format!("{}{SEPARATOR}{}", test.name, op.name())
                };
                m.expect = Verdict::Allowed;
                match validate(&profiles, &m) {
                    Ok(()) => out.push(Candidate {
                        name,
                        test: test.name.clone(),
                        operator: op,
                        site,
                        original: l.expect,
                        profiles: profiles.clone(),
                        litmus: m,
                    }),
                    Err(reason) => rejected.push(Rejected { name, reason }),
                }
            }
        }
    }
    (out, rejected)
}

/// Every candidate's program by its name: what a fact's shape is matched
/// against when it judges a mutant (`gridcheck_report::Equivalence::Shape`)
/// or lists the mutants it covers.
pub fn programs(spec: &Spec) -> std::collections::BTreeMap<String, Litmus> {
    candidates(spec)
        .0
        .into_iter()
        .map(|c| (c.name, c.litmus))
        .collect()
}

/// The candidate named `name` (see [`candidates`]).
pub fn find(spec: &Spec, name: &str) -> Result<Candidate, String> {
    let (test, _) = split_name(name).ok_or_else(|| format!("`{name}` is not a mutant's name"))?;
    if spec.test(test).is_none() {
        return Err(format!("mutant `{name}`: no test `{test}` in the spec"));
    }
    let (all, rejected) = candidates(spec);
    if let Some(r) = rejected.iter().find(|r| r.name == name) {
        return Err(format!("mutant `{name}` is not a candidate: {}", r.reason));
    }
    all.into_iter()
        .find(|c| c.name == name)
        .ok_or_else(|| format!("no mutant `{name}`: the operator does not apply there"))
}

/// A mutant's name split into its test's name and the operator part.
pub fn split_name(name: &str) -> Option<(&str, &str)> {
    name.split_once(SEPARATOR)
}

/// The file stem of a mutant's generated kernel and cubin: the name with
/// the separator spelled `.` (test names have no dots).
pub fn file_stem(name: &str) -> String {
    name.replace(SEPARATOR, ".")
}

/// Whether an observed final state kills a mutant of a test with verdict
/// `original` and this condition: the state contradicts the verdict.
pub fn kills(original: Verdict, condition: &Condition, state: &State) -> Result<bool, String> {
    Ok(match original {
        Verdict::Forbidden => condition.holds(state)?,
        Verdict::Required => !condition.holds(state)?,
        Verdict::Allowed => false,
    })
}

/// The profiles of the rules listing the test, in [`Profile::ALL`] order
/// (the loader's checks depend on it, e.g. `devicesync` is CDP1's).
fn profiles_of(spec: &Spec, test: &str) -> Vec<Profile> {
    let listed: Vec<Profile> = spec
        .pairs()
        .filter(|(_, t)| t.name == test)
        .map(|(r, _)| r.profile)
        .collect();
    let out: Vec<Profile> = Profile::ALL
        .into_iter()
        .filter(|p| listed.contains(p))
        .collect();
    if out.is_empty() {
        vec![Profile::Cdp2]
    } else {
        out
    }
}

/// The loader's verdict on a mutated test, written back as YAML and loaded
/// under each profile in turn: accepted under one is accepted.
fn validate(profiles: &[Profile], l: &Litmus) -> Result<(), String> {
    let mut first_error = None;
    for &p in profiles {
        let yaml = gridcheck_spec::render::litmus_spec_yaml(p, "mutant", l);
        match gridcheck_spec::render::load_litmus(&yaml) {
            Ok(_) => return Ok(()),
            Err(e) => {
                first_error.get_or_insert_with(|| {
                    e.to_string()
                        .lines()
                        .next()
                        .unwrap_or("rejected")
                        .to_string()
                });
            }
        }
    }
    Err(first_error.unwrap_or_else(|| "no profile lists the test".into()))
}
