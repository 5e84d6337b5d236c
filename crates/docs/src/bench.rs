//! Benchmark baselines: `conformance/bench/baselines/<gpu-slug>.json`, as
//! `cargo xtask bench` writes them (schema 1).

use std::path::Path;

use crate::Result;

/// The schema is the benchmarks' own (`gridcheck_store::baseline`, which
/// `gridcheck-bench` writes): one reader, one validation (schema version,
/// unique ids, ordered statistics).
pub use gridcheck_report::baseline::{Figure, Machine as BenchMachine, Results as Baseline};

/// Parses one baseline file's text; `path` names it in errors.
pub fn parse(text: &str, path: &Path) -> Result<Baseline> {
    gridcheck_report::baseline::parse(&path.display().to_string(), text)
}

/// Every `*.json` baseline in `dir`, by file name. A missing directory
/// holds none.
pub fn load_dir(dir: &Path) -> Result<Vec<Baseline>> {
    let mut files: Vec<_> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", dir.display())),
    };
    files.sort();
    files
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p)
                .map_err(|e| format!("cannot read {}: {e}", p.display()))?;
            parse(&text, p)
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub const FIXTURE: &str = r#"{"schema": 1,
 "machine": {"gpu": "NVIDIA H100 80GB HBM3", "slug": "nvidia-h100-80gb-hbm3", "driver": "580.159.04", "nvcc": "13.0.88", "date": "2026-11-22", "command": "cargo xtask bench"},
 "figures": [
  {"id": "launch.device.null-stream.latency", "group": "launch", "title": "device launch, NULL stream, serial", "unit": "us", "lower_is_better": true,
   "median": 1.23, "p10": 1.1, "p90": 1.4, "min": 1.0, "max": 2.0, "repeats": 50, "params": {"blocks": "1"}},
  {"id": "launch.device.tail.latency", "group": "launch", "title": "device launch, tail stream", "unit": "us", "lower_is_better": true,
   "median": 2.5, "p10": 2.0, "p90": 3.0, "min": 1.9, "max": 4.0, "repeats": 50},
  {"id": "pdl.overlap", "group": "pdl", "title": "PDL overlap", "unit": "us", "lower_is_better": false,
   "median": 4.0, "p10": 3.5, "p90": 4.5, "min": 3.0, "max": 5.0, "repeats": 20}],
 "notes": ["fixture"]}"#;

    #[test]
    fn parses_the_schema_and_rejects_others() {
        let b = parse(FIXTURE, Path::new("b.json")).unwrap();
        assert_eq!(b.figures.len(), 3);
        assert_eq!(b.figures[0].params["blocks"], "1");
        let e = parse(
            &FIXTURE.replace("\"schema\": 1", "\"schema\": 2"),
            Path::new("b.json"),
        )
        .unwrap_err();
        assert!(e.contains("version 2 is not supported"), "{e}");
        let e = parse("{\"schema\": 1,\n \"machine\": 3}", Path::new("b.json")).unwrap_err();
        assert!(e.starts_with("b.json: ") && e.contains("line 2"), "{e}");
    }
}
