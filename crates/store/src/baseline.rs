//! The benchmarks' results file and the committed baseline (the same
//! schema, version 1): `conformance/bench/baselines/<gpu-slug>.json`.
//! `gridcheck-bench` writes and compares them, the site shows them; both
//! read them here, so the site needs neither the benchmarks nor cudarc.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

pub use gridcheck_record::slug;

/// Median, 10th and 90th percentiles, min and max of a figure's samples
/// (`gridcheck_bench::stats::summarize` computes them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub median: f64,
    pub p10: f64,
    pub p90: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
}

pub const SCHEMA: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Results {
    pub schema: u32,
    pub machine: Machine,
    pub figures: Vec<Figure>,
    #[serde(default)]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Machine {
    pub gpu: String,
    pub slug: String,
    pub driver: String,
    pub nvcc: String,
    /// UTC, `YYYY-MM-DD`.
    pub date: String,
    pub command: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Figure {
    pub id: String,
    pub group: String,
    pub title: String,
    pub unit: String,
    pub lower_is_better: bool,
    pub median: f64,
    pub p10: f64,
    pub p90: f64,
    pub min: f64,
    pub max: f64,
    pub repeats: u32,
    #[serde(default)]
    pub params: BTreeMap<String, String>,
}

impl Figure {
    /// A figure from its samples' summary.
    pub fn new(
        id: &str,
        title: &str,
        unit: &str,
        lower_is_better: bool,
        s: &Summary,
        params: &[(&str, String)],
    ) -> Figure {
        Figure {
            id: id.to_string(),
            group: id.split('.').next().unwrap_or(id).to_string(),
            title: title.to_string(),
            unit: unit.to_string(),
            lower_is_better,
            median: s.median,
            p10: s.p10,
            p90: s.p90,
            min: s.min,
            max: s.max,
            repeats: s.n as u32,
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        }
    }
}

/// Checks what serde cannot: the schema version, unique ids, finite and
/// ordered statistics. Errors name the figure and the field.
pub fn validate(r: &Results) -> Result<(), String> {
    if r.schema != SCHEMA {
        return Err(format!(
            "field `schema`: version {} is not supported (expected {SCHEMA})",
            r.schema
        ));
    }
    let mut seen = BTreeSet::new();
    for (i, f) in r.figures.iter().enumerate() {
        let at = format!("figures[{i}] (`{}`)", f.id);
        if f.id.is_empty() {
            return Err(format!("{at}: field `id` is empty"));
        }
        if !seen.insert(f.id.as_str()) {
            return Err(format!("{at}: field `id` is a duplicate"));
        }
        for (name, v) in [
            ("median", f.median),
            ("p10", f.p10),
            ("p90", f.p90),
            ("min", f.min),
            ("max", f.max),
        ] {
            if !v.is_finite() {
                return Err(format!("{at}: field `{name}` is not a finite number"));
            }
            // Latencies, fractions and ratios alike are never negative.
            if v < 0.0 {
                return Err(format!("{at}: field `{name}` is negative ({v})"));
            }
        }
        if !(f.min <= f.p10 && f.p10 <= f.median && f.median <= f.p90 && f.p90 <= f.max) {
            return Err(format!(
                "{at}: fields `min` <= `p10` <= `median` <= `p90` <= `max` do not hold ({} {} {} {} {})",
                f.min, f.p10, f.median, f.p90, f.max
            ));
        }
        if f.repeats == 0 {
            return Err(format!("{at}: field `repeats` is 0"));
        }
    }
    Ok(())
}

/// Parses and validates a results file's text; errors start with `name`.
pub fn parse(name: &str, text: &str) -> Result<Results, String> {
    let r: Results = serde_json::from_str(text).map_err(|e| format!("{name}: {e}"))?;
    validate(&r).map_err(|e| format!("{name}: {e}"))?;
    Ok(r)
}

pub fn load(path: &Path) -> Result<Results, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse(&path.display().to_string(), &text)
}

pub fn save(path: &Path, r: &Results) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let mut text = serde_json::to_string_pretty(r).map_err(|e| e.to_string())?;
    text.push('\n');
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The driver version from `/proc/driver/nvidia/version`'s text
/// (`... Kernel Module  580.159.04  ...`).
pub fn parse_proc_driver_version(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.contains("Kernel Module"))?;
    let rest = line.split("Kernel Module").nth(1)?;
    let v = rest.split_whitespace().find(|w| w.contains('.'))?;
    Some(v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fig(id: &str, median: f64) -> Figure {
        let s = Summary {
            median,
            p10: median - 1.0,
            p90: median + 1.0,
            min: median - 2.0,
            max: median + 2.0,
            n: 5,
        };
        Figure::new(id, "t", "us", true, &s, &[("blocks", "1".into())])
    }

    fn results(figures: Vec<Figure>) -> Results {
        Results {
            schema: 1,
            machine: Machine {
                gpu: "NVIDIA H100 80GB HBM3".into(),
                slug: slug("NVIDIA H100 80GB HBM3"),
                driver: "580.159.04".into(),
                nvcc: "13.0.88".into(),
                date: "2026-11-22".into(),
                command: "cargo xtask bench".into(),
            },
            figures,
            notes: vec![],
        }
    }

    #[test]
    fn round_trip_and_schema() {
        let r = results(vec![fig("launch.host.latency", 3.0)]);
        let text = serde_json::to_string(&r).unwrap();
        assert_eq!(parse("x.json", &text).unwrap(), r);
        assert!(text.contains("\"lower_is_better\":true"));
        assert!(text.contains("\"group\":\"launch\""));
        assert!(text.contains("\"params\":{\"blocks\":\"1\"}"));
    }

    #[test]
    fn bad_files_name_the_field() {
        let e = parse("b.json", "{\"schema\": 1}").unwrap_err();
        assert!(e.starts_with("b.json: ") && e.contains("machine"), "{e}");
        let mut r = results(vec![fig("a", 3.0), fig("a", 4.0)]);
        let e = parse("b.json", &serde_json::to_string(&r).unwrap()).unwrap_err();
        assert!(
            e.contains("figures[1] (`a`)") && e.contains("duplicate"),
            "{e}"
        );
        r.figures.pop();
        r.figures[0].p90 = 1.0;
        let e = parse("b.json", &serde_json::to_string(&r).unwrap()).unwrap_err();
        assert!(e.contains("figures[0]") && e.contains("p10"), "{e}");
        r.figures[0].p90 = 4.0;
        // Ordered, but below zero.
        r.figures[0].min = -2.0;
        r.figures[0].p10 = -1.0;
        let e = parse("b.json", &serde_json::to_string(&r).unwrap()).unwrap_err();
        assert!(e.contains("is negative"), "{e}");
        r.figures[0].min = 1.0;
        r.figures[0].p10 = 2.0;
        r.schema = 2;
        let e = parse("b.json", &serde_json::to_string(&r).unwrap()).unwrap_err();
        assert!(e.contains("`schema`"), "{e}");
        let e = parse("b.json", "{\"schema\": 1, \"machine\": 3").unwrap_err();
        assert!(e.contains("line 1"), "{e}");
    }

    #[test]
    fn driver_versions() {
        let proc = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Tue Oct 28 2025\nGCC version: gcc 13\n";
        assert_eq!(
            parse_proc_driver_version(proc).as_deref(),
            Some("580.159.04")
        );
        assert_eq!(parse_proc_driver_version("nothing"), None);
    }
}
