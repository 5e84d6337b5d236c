//! `gridcheck-campaign merge OUT... --into DIR`: the results of campaigns
//! on several GPUs (each OUT a campaign's results: `summary.json`,
//! `findings.jsonl`) side by side: per GPU its programs, programs per GPU
//! minute, findings by class and how they ended; and the findings
//! deduplicated by class and shape across the GPUs, each with where it
//! showed and how it ended there. Written to `DIR/merged.json` and printed
//! as a table.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::campaign::read_lines;
use crate::ending::LeadEnd;
use crate::report::Summary;

/// One campaign's row.
#[derive(Debug, Serialize)]
struct GpuRow {
    results: String,
    device: Option<String>,
    programs: usize,
    ran: usize,
    not_run: usize,
    programs_per_gpu_minute: f64,
    findings_by_class: BTreeMap<String, usize>,
    ended: BTreeMap<String, usize>,
}

/// Where a finding showed and how it ended there.
#[derive(Debug, Serialize)]
struct Seen {
    results: String,
    device: Option<String>,
    ended: String,
    programs: usize,
    first: String,
}

/// A finding of one class and shape, over every campaign.
#[derive(Debug, Serialize)]
struct Shared {
    class: String,
    shape: String,
    seen: Vec<Seen>,
}

#[derive(Debug, Serialize)]
struct Merged {
    gpus: Vec<GpuRow>,
    findings: Vec<Shared>,
}

fn read_summary(out: &Path) -> Result<Summary, String> {
    let f = out.join("summary.json");
    let text =
        std::fs::read_to_string(&f).map_err(|e| format!("cannot read {}: {e}", f.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", f.display()))
}

fn merged(outs: &[PathBuf]) -> Result<Merged, String> {
    let mut gpus = Vec::new();
    let mut shared: BTreeMap<(String, String), Vec<Seen>> = BTreeMap::new();
    for out in outs {
        let s = read_summary(out)?;
        let results = out.display().to_string();
        for e in read_lines::<LeadEnd>(&out.join("findings.jsonl"))? {
            shared
                .entry((e.class.name().to_string(), e.shape.clone()))
                .or_default()
                .push(Seen {
                    results: results.clone(),
                    device: s.device.clone(),
                    ended: e.ended.clone(),
                    programs: e.programs,
                    first: e.first.clone(),
                });
        }
        gpus.push(GpuRow {
            results,
            device: s.device,
            programs: s.programs,
            ran: s.ran,
            not_run: s.programs - s.ran,
            programs_per_gpu_minute: s.programs_per_gpu_minute,
            findings_by_class: s.findings_by_class,
            ended: s.ended,
        });
    }
    let findings = shared
        .into_iter()
        .map(|((class, shape), seen)| Shared { class, shape, seen })
        .collect();
    Ok(Merged { gpus, findings })
}

fn table(m: &Merged) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "| GPU | results | programs | run | not run | programs per GPU minute | findings by class | ended |\n|---|---|---|---|---|---|---|---|"
    );
    for g in &m.gpus {
        let _ = writeln!(
            t,
            "| {} | {} | {} | {} | {} | {:.0} | {:?} | {:?} |",
            g.device.as_deref().unwrap_or("?"),
            g.results,
            g.programs,
            g.ran,
            g.not_run,
            g.programs_per_gpu_minute,
            g.findings_by_class,
            g.ended
        );
    }
    let _ = writeln!(
        t,
        "\n{} distinct findings (class, shape) over the GPUs:",
        m.findings.len()
    );
    for f in &m.findings {
        let seen: Vec<String> = f
            .seen
            .iter()
            .map(|s| {
                format!(
                    "{}: {} ({})",
                    s.device.as_deref().unwrap_or("?"),
                    s.ended,
                    s.first
                )
            })
            .collect();
        let _ = writeln!(t, "- {} `{}`: {}", f.class, f.shape, seen.join("; "));
    }
    t
}

/// `merge OUT... --into DIR`'s words: the results folders and DIR.
pub fn parse(argv: &[String]) -> Result<(Vec<PathBuf>, PathBuf), String> {
    let mut outs = Vec::new();
    let mut into = None;
    let mut it = argv.iter();
    while let Some(x) = it.next() {
        match x.as_str() {
            "--into" => into = Some(PathBuf::from(it.next().ok_or("--into needs a directory")?)),
            s if s.starts_with('-') => return Err(format!("unknown argument `{s}`")),
            s => outs.push(PathBuf::from(s)),
        }
    }
    let into = into.ok_or("--into DIR is missing")?;
    if outs.is_empty() {
        return Err("no campaign results to merge".into());
    }
    Ok((outs, into))
}

/// `merge OUT... --into DIR`.
pub fn main(argv: &[String]) -> Result<(), String> {
    let (outs, into) = parse(argv)?;
    let m = merged(&outs)?;
    std::fs::create_dir_all(&into).map_err(|e| format!("cannot create {}: {e}", into.display()))?;
    let f = into.join("merged.json");
    let json = serde_json::to_string_pretty(&m).map_err(|e| e.to_string())? + "\n";
    std::fs::write(&f, json).map_err(|e| format!("cannot write {}: {e}", f.display()))?;
    print!("{}", table(&m));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ending::FirstOf;
    use crate::findings::Class;

    /// Writes a results folder on `device` with findings of these shapes.
    fn results(dir: &Path, device: &str, shapes: &[&str]) {
        std::fs::create_dir_all(dir).unwrap();
        let summary = format!(
            "{{\"campaign\": \"c\", \"device\": \"{device}\", \"programs\": 10, \"ran\": 9, \"not_run\": {{}}, \"classes\": {{}}, \"compile_s\": 1.0, \"gpu_s\": 6.0, \"leads_gpu_s\": 0.0, \"programs_per_gpu_minute\": 90.0, \"environment\": {{\"instances\": 1, \"launches\": 1, \"tuning\": null, \"max_delay_cycles\": 0, \"stress_words\": 0, \"permute\": true, \"line_burst\": 0}}, \"findings\": {}, \"findings_by_class\": {{}}, \"ended\": {{}}}}",
            shapes.len()
        );
        std::fs::write(dir.join("summary.json"), summary).unwrap();
        let mut lines = String::new();
        for s in shapes {
            let first = FirstOf {
                name: format!("{device}-p"),
                batch: "b0000".into(),
                index: 0,
                detail: String::new(),
            };
            let e = LeadEnd::open(Class::Hang, s, 1, &first);
            lines += &serde_json::to_string(&e).unwrap();
            lines.push('\n');
        }
        std::fs::write(dir.join("findings.jsonl"), lines).unwrap();
    }

    #[test]
    fn findings_of_several_gpus_are_deduplicated_by_shape() {
        let dir = std::env::temp_dir().join(format!("gridcheck-merge-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        results(&dir.join("a"), "H100", &["host[trigger]", "host[st]"]);
        results(&dir.join("b"), "H200", &["host[trigger]"]);
        let m = merged(&[dir.join("a"), dir.join("b")]).unwrap();
        assert_eq!(m.gpus.len(), 2);
        assert_eq!((m.gpus[0].not_run, m.gpus[1].programs), (1, 10));
        assert_eq!(m.findings.len(), 2);
        let both = m
            .findings
            .iter()
            .find(|f| f.shape == "host[trigger]")
            .unwrap();
        let on: Vec<_> = both.seen.iter().map(|s| s.device.as_deref()).collect();
        assert_eq!(on, [Some("H100"), Some("H200")]);
        assert!(table(&m).contains("| H200 |"));
        let e = merged(&[dir.join("missing")]).unwrap_err();
        assert!(e.contains("summary.json"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
