//! What each known fact covers, on its section of the discrepancies page:
//! `gridcheck_report::Facts::cover` over the spec's tests, the mutants of
//! the newest mutation run of each GPU (their programs as the spec makes
//! them now) and the recorded campaign findings. The count line is the
//! one the run's summary prints for the fact (`CoverCounts`), so the two
//! agree.

use std::collections::BTreeMap;
use std::fmt::Write;

use gridcheck_report::{
    CoverInputs, Envelope, Fact, FactCover, Inside, MutantRecord, RecordedFinding,
};
use gridcheck_spec::{Litmus, Spec};

use crate::context::Inputs;
use crate::results::{Run, run_order};
use crate::text::{code, html};

/// The newest run of each GPU that recorded mutants, by GPU slug.
pub(crate) fn newest_mutation_runs(runs: &[Run]) -> BTreeMap<&str, &Run> {
    let mut newest: BTreeMap<&str, &Run> = BTreeMap::new();
    for r in runs.iter().filter(|r| !r.mutants.is_empty()) {
        let e = newest.entry(&r.slug).or_insert(r);
        if run_order(&r.date) > run_order(&e.date) {
            *e = r;
        }
    }
    newest
}

/// What each of `facts` covers, in their order, with the mutants of the
/// newest mutation run of each GPU of `runs`.
pub fn covers(
    facts: &[Fact],
    spec: &Spec,
    runs: &[Run],
    programs: &BTreeMap<String, Litmus>,
    findings: &[RecordedFinding],
) -> Vec<FactCover> {
    let mutants: Vec<MutantRecord> = newest_mutation_runs(runs)
        .values()
        .flat_map(|r| r.mutants.iter().cloned())
        .collect();
    let inputs = CoverInputs {
        spec,
        mutants: &mutants,
        programs,
        findings,
    };
    facts.iter().map(|f| f.cover(&inputs)).collect()
}

/// What each known fact of `inputs` covers, as the discrepancies page
/// shows it.
pub fn of_inputs(inputs: &Inputs) -> Vec<FactCover> {
    covers(
        &inputs.facts,
        &inputs.spec,
        &inputs.runs,
        &inputs.mutant_programs,
        &inputs.findings,
    )
}

/// The envelope's boundary, as a sentence.
fn envelope(e: &Envelope) -> String {
    let words = |w: u32| format!("{w} {}", if w == 1 { "word" } else { "words" });
    let on: String = e
        .words_on
        .iter()
        .map(|(g, w)| format!(" ({} on {})", words(*w), html(g)))
        .collect();
    format!(
        "**Its envelope** (what was tried; a program run outside it is not covered): on {}; \
         under {}; up to {} instances of a program; locations of up to {}{on}.\n\n",
        html(&e.gpus.join(", ")),
        e.environments
            .iter()
            .map(|x| code(x))
            .collect::<Vec<_>>()
            .join(", "),
        e.instances,
        words(e.words),
    )
}

/// The fact's part of its section: the count line, then the lists.
pub(crate) fn part(x: &Fact, c: &FactCover) -> String {
    let mut s = format!("**What it covers**: {}.\n\n", html(&c.counts().to_string()));
    if let Some(e) = &x.envelope {
        s += &envelope(e);
    }
    let named: Vec<String> = c
        .named
        .iter()
        .map(|t| {
            let how = match (c.shape, t.shape_matches) {
                (false, _) => "",
                (true, true) => " (its shape matches it too)",
                (true, false) => " (its shape does not match it: a shape to fix)",
            };
            format!("{}{how}", code(&t.test))
        })
        .collect();
    let _ = writeln!(s, "- Tests by name: {}", named.join(", "));
    if !c.shape {
        s += "- No shape: it covers its key only, and no mutant or campaign finding.\n\n";
        return s;
    }
    match c.by_shape.as_slice() {
        [] => s += "- Tests by shape: none beyond the test it names.\n",
        tests => {
            let list: Vec<String> = tests.iter().map(|t| code(t)).collect();
            let _ = writeln!(s, "- Tests by shape only: {}", list.join(", "));
        }
    }
    if c.mutants.is_empty() {
        s += "- Mutants (the newest mutation run of each GPU): none of its shape.\n";
    } else {
        s += "- Mutants (the newest mutation run of each GPU):\n";
        for m in &c.mutants {
            let where_ = match &m.inside {
                Inside::Within => "; within the envelope".to_string(),
                Inside::Outside(why) => format!("; outside the envelope: {}", html(why)),
                Inside::NoEnvelope => String::new(),
            };
            let _ = writeln!(
                s,
                "  - {} on {} ({}{where_})",
                code(&m.mutant),
                html(m.gpu.as_deref().unwrap_or("no GPU")),
                m.status.as_str()
            );
        }
    }
    let unmatched = match c.findings_unmatched {
        0 => String::new(),
        n => format!(" ({n} of its kind recorded without a program to match)"),
    };
    if c.findings.is_empty() {
        let _ = writeln!(s, "- Campaign findings: no recorded finding{unmatched}");
    } else {
        let _ = writeln!(s, "- Campaign findings{unmatched}:");
        for f in &c.findings {
            let _ = writeln!(
                s,
                "  - {} in {} (line {}): first {}, ended `{}`",
                html(&f.class),
                code(&f.campaign),
                f.line,
                code(&f.first),
                html(&f.ended)
            );
        }
    }
    s + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_envelope_sentence_names_the_sizes_tried_on_each_gpu() {
        let mut e = Envelope {
            gpus: vec!["NVIDIA H200".into()],
            environments: vec!["t.toml".into()],
            instances: 10,
            words: 1,
            words_on: Default::default(),
        };
        assert!(envelope(&e).contains("locations of up to 1 word."));
        e.words_on.insert("NVIDIA H200".into(), 8192);
        assert!(
            envelope(&e).contains("locations of up to 1 word (8192 words on NVIDIA H200)."),
            "{}",
            envelope(&e)
        );
    }
}
