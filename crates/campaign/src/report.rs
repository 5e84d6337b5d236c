//! A campaign's results, written from its files after every part:
//! `findings.jsonl` (one line a distinct finding, how it ended or `open`:
//! `ending.rs`), `summary.json` (for scripts: programs, what did not run
//! and why, classes, times, programs per GPU minute, the environment,
//! findings by class and by ending) and `summary.txt` (the same for a
//! reader). Judgments that a finding was the harness's (`harness.jsonl`,
//! written by hand after the lab separated it) are applied here.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::args::Args;
use crate::campaign::{PARTS, Part, read_lines};
use crate::ending::{FirstOf, Harness, LeadEnd};
use crate::findings::{Class, ProgramRecord, class_counts, distinct};
use crate::leads::LEADS;

/// The judgments of harness defects, one line each.
pub const HARNESS: &str = "harness.jsonl";

/// One judgment: the finding of `class` and `shape` was the harness's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Judgment {
    pub class: Class,
    pub shape: String,
    pub state: String,
    pub fix: String,
}

/// The testing environment a campaign ran under.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvSummary {
    pub instances: u32,
    pub launches: u32,
    pub tuning: Option<String>,
    pub max_delay_cycles: u32,
    pub stress_words: u32,
    pub permute: bool,
    pub line_burst: u32,
}

/// `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub campaign: String,
    pub device: Option<String>,
    pub programs: usize,
    pub ran: usize,
    /// Programs not run, by reason (each program's own is in its record).
    pub not_run: BTreeMap<String, usize>,
    pub classes: BTreeMap<String, usize>,
    pub compile_s: f64,
    /// GPU seconds of the run phase, and of the leads phase.
    pub gpu_s: f64,
    pub leads_gpu_s: f64,
    pub programs_per_gpu_minute: f64,
    pub environment: EnvSummary,
    pub findings: usize,
    pub findings_by_class: BTreeMap<String, usize>,
    /// Findings by how they ended (`open`: not yet).
    pub ended: BTreeMap<String, usize>,
}

/// Every distinct finding of `records` with how it ended (`ends`, then the
/// judgments), in the findings' order.
pub fn endings(records: &[ProgramRecord], ends: &[LeadEnd], judged: &[Judgment]) -> Vec<LeadEnd> {
    distinct(records)
        .iter()
        .map(|((class, shape), rs)| {
            let r = rs[0];
            let mut e = ends
                .iter()
                .rfind(|e| e.class == *class && e.shape == *shape)
                .cloned()
                .unwrap_or_else(|| {
                    let first = FirstOf {
                        name: r.name.clone(),
                        batch: r.batch.clone(),
                        index: r.index,
                        detail: r.detail.clone(),
                    };
                    LeadEnd::open(*class, shape, rs.len(), &first)
                });
            if let Some(j) = judged
                .iter()
                .find(|j| j.class == *class && j.shape == *shape)
            {
                e.ended = "harness".into();
                e.harness = Some(Harness {
                    state: j.state.clone(),
                    fix: j.fix.clone(),
                });
            }
            e
        })
        .collect()
}

fn summary(a: &Args, records: &[ProgramRecord], parts: &[Part], found: &[LeadEnd]) -> Summary {
    let phase = |p: &'static str| parts.iter().filter(move |x| x.phase == p);
    // Summed from 0.0: an empty sum of floats is -0.0.
    let total = |p: &'static str, f: fn(&Part) -> f64| phase(p).map(f).fold(0.0, |a, b| a + b);
    let gpu_s = total("run", |p| p.gpu_s);
    let ran = records.iter().filter(|r| r.class != Class::NotRun).count();
    let mut not_run = BTreeMap::new();
    for r in records {
        if let crate::findings::Outcome::NotRun { reason } = &r.outcome {
            *not_run.entry(reason.clone()).or_default() += 1;
        }
    }
    let count = |v: Vec<String>| {
        let mut m = BTreeMap::new();
        for k in v {
            *m.entry(k).or_default() += 1;
        }
        m
    };
    Summary {
        campaign: a.dir.display().to_string(),
        device: parts.iter().rev().find_map(|p| p.device.clone()),
        programs: records.len(),
        ran,
        not_run,
        classes: class_counts(records)
            .into_iter()
            .map(|(c, n)| (c.name().to_string(), n))
            .collect(),
        compile_s: total("run", |p| p.compile_s),
        gpu_s,
        leads_gpu_s: total("leads", |p| p.gpu_s),
        programs_per_gpu_minute: if gpu_s > 0.0 {
            ran as f64 * 60.0 / gpu_s
        } else {
            0.0
        },
        environment: EnvSummary {
            instances: a.instances,
            launches: a.launches,
            tuning: a.tuning.as_ref().map(|t| t.display().to_string()),
            max_delay_cycles: a.env.max_delay_cycles,
            stress_words: a.env.stress_words,
            permute: a.env.permute,
            line_burst: a.env.line_burst,
        },
        findings: found.len(),
        findings_by_class: count(found.iter().map(|e| e.class.name().to_string()).collect()),
        ended: count(found.iter().map(|e| e.ended.clone()).collect()),
    }
}

/// One finding's lines in `summary.txt`.
fn finding_text(gi: usize, e: &LeadEnd) -> String {
    let context = || {
        e.context.as_ref().map_or(String::new(), |c| {
            format!(
                "shown after {} of the {} programs before it ({}{})",
                c.programs.len(),
                c.prefix,
                c.programs.join(", "),
                match (c.minimal, c.spread) {
                    (true, _) => "",
                    (false, true) => "; not minimal: neither half of it alone brings it back",
                    (false, false) => "; not minimal: out of time",
                }
            )
        })
    };
    let how = match e.ended.as_str() {
        // A known fact, and the context it was shown with, if it needed one.
        "known" => e.known.as_ref().map_or(String::new(), |k| {
            let kind = e.class.fact_kind().map_or("fact", |k| k.as_str());
            let with = match context() {
                c if c.is_empty() => c,
                c => format!("; {c}"),
            };
            format!("a known {kind}: {} ({}){with}", k.fact, k.test)
        }),
        "context" => context(),
        "closed" => e.bound.as_ref().map_or(String::new(), |b| {
            format!(
                "not shown in {} reruns ({} instances): rate below {:.2e} an instance, {:.2} a run (95 %)",
                b.runs, b.instances, b.per_instance, b.per_run
            )
        }),
        "harness" => e
            .harness
            .as_ref()
            .map_or(String::new(), |h| format!("the harness's: {}; fixed: {}", h.state, h.fix)),
        "alone" => format!("shown again alone ({} of {} runs)", e.alone.shown, e.alone.runs),
        _ => "open: no leads part has reached it yet".into(),
    };
    let test = e.test.as_ref().map_or(String::new(), |t| {
        format!(
            "\n               test: {} (rate {} of {} runs; {} shrinking steps{}); plain: {}",
            t.yaml,
            t.rate.shown,
            t.rate.runs,
            t.shrink_steps,
            if t.out_of_time { ", out of time" } else { "" },
            t.plain
        )
    });
    format!(
        "  {gi:03} {:<12} {:<8} {:>4}  {}\n               {}\n               {how}{test}\n",
        e.class.name(),
        e.ended,
        e.programs,
        e.shape,
        e.detail
    )
}

fn summary_text(s: &Summary, found: &[LeadEnd]) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "campaign {} on {}: {} programs, {} run on the GPU",
        s.campaign,
        s.device.as_deref().unwrap_or("no GPU reported"),
        s.programs,
        s.ran
    );
    let _ = writeln!(
        t,
        "compile {:.1} s; GPU runs {:.1} s: {:.0} programs per GPU minute; leads {:.1} s",
        s.compile_s, s.gpu_s, s.programs_per_gpu_minute, s.leads_gpu_s
    );
    let e = &s.environment;
    let _ = writeln!(
        t,
        "budget: {} instances x {} launches a program; {}: delays up to {} cycles, stress over {} words",
        e.instances,
        e.launches,
        e.tuning.as_deref().unwrap_or("the built-in environment"),
        e.max_delay_cycles,
        e.stress_words
    );
    for (c, n) in &s.classes {
        let _ = writeln!(t, "  {c:<12} {n}");
    }
    for (why, n) in &s.not_run {
        let _ = writeln!(t, "  not run: {n} ({why})");
    }
    let _ = writeln!(
        t,
        "{} distinct finding(s), ended: {:?}\n(number, class, ending, programs, shape; first program's detail; how it ended)",
        s.findings, s.ended
    );
    for (gi, e) in found.iter().enumerate() {
        t += &finding_text(gi, e);
    }
    t
}

/// Writes the results from `records` and the files of `a.out`; `Ok(true)`
/// when every program ran and passed.
pub fn write(a: &Args, records: &[ProgramRecord]) -> Result<bool, String> {
    let out = &a.out;
    let parts: Vec<Part> = read_lines(&out.join(PARTS))?;
    let ends: Vec<LeadEnd> = read_lines(&out.join(LEADS))?;
    let judged: Vec<Judgment> = read_lines(&out.join(HARNESS))?;
    let found = endings(records, &ends, &judged);
    let mut lines = String::new();
    for e in &found {
        lines += &serde_json::to_string(e).map_err(|e| e.to_string())?;
        lines.push('\n');
    }
    let s = summary(a, records, &parts, &found);
    let text = summary_text(&s, &found);
    let json = serde_json::to_string_pretty(&s).map_err(|e| e.to_string())? + "\n";
    for (name, body) in [
        ("findings.jsonl", &lines),
        ("summary.json", &json),
        ("summary.txt", &text),
    ] {
        write_file(&out.join(name), body)?;
    }
    print!("{text}");
    Ok(found.is_empty() && s.ran == s.programs)
}

fn write_file(f: &Path, body: &str) -> Result<(), String> {
    std::fs::write(f, body).map_err(|e| format!("cannot write {}: {e}", f.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Outcome;

    fn rec(index: usize, class: Class, shape: &str) -> ProgramRecord {
        ProgramRecord {
            batch: "b0000".into(),
            index,
            name: format!("p{index}"),
            class,
            detail: "d".into(),
            shape: shape.into(),
            known_hang: None,
            oracle: "axiom".into(),
            outcome: Outcome::Hang {
                message: "stall".into(),
            },
            worker: Some(0),
            seq: Some(index as u32),
        }
    }

    /// Every finding is listed, open until a part ends it; a judgment
    /// makes it the harness's; the last ending of a finding wins.
    #[test]
    fn every_finding_is_listed_with_its_ending() {
        let rs = [
            rec(0, Class::Hang, "a"),
            rec(1, Class::Pass, "a"),
            rec(2, Class::Hang, "b"),
            rec(3, Class::Hang, "a"),
        ];
        let found = endings(&rs, &[], &[]);
        assert_eq!(found.len(), 2);
        assert!(found.iter().all(|e| e.ended == "open"));
        assert_eq!((found[0].programs, found[0].first.as_str()), (2, "p0"));
        let mut closed = found[1].clone();
        closed.ended = "closed".into();
        let judged = [Judgment {
            class: Class::Hang,
            shape: "a".into(),
            state: "the pending-launch pool left raised".into(),
            fix: "abc123".into(),
        }];
        let found = endings(&rs, &[closed], &judged);
        assert_eq!(found[0].ended, "harness");
        assert_eq!(found[0].harness.as_ref().unwrap().fix, "abc123");
        assert_eq!(found[1].ended, "closed");
    }
}
