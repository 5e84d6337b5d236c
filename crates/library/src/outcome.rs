//! A program's result: one JSON line a run on its standard output
//! (`kernels/cccl/library.cuh`, `print_line`), read by [`parse_outcomes`].

use serde::{Deserialize, Serialize};

/// The line prefix of a program that cannot run here (no device, no kernel
/// image for it, an algorithm its release lacks): `gridcheck-not-run <reason>`.
pub const NOT_RUN: &str = "gridcheck-not-run ";

/// One run of a program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Outcome {
    pub algorithm: String,
    pub size: u64,
    /// quiet, back-to-back, stress, burst or delay.
    pub env: String,
    /// Calls asked for.
    pub reps: u64,
    /// Calls made and checked.
    pub calls: u64,
    /// Checked calls with a wrong result.
    pub wrong: u64,
    /// The first wrong call: `call K (shape): index I: got X want Y`.
    pub first_wrong: Option<String>,
    /// A CUDA error's name (`cudaErrorIllegalAddress`); the program then
    /// exits 3.
    pub error: Option<String>,
    /// With an error: the calls checked before it.
    pub after_calls: Option<u64>,
    /// Whether PDL was on in the headers the binary was built with
    /// (`_CCCL_HAS_PDL`: off under `-DCCCL_DISABLE_PDL`, or the `nopdl` patch).
    pub pdl: bool,
    /// `cub::PtxVersion` on the device: 900 for sm_90 SASS, 800 for the
    /// compute_80 PTX JIT-compiled.
    pub ptx_version: u32,
    /// The CCCL version the program was built with.
    pub cccl: String,
    /// GPU time of the calls' stream (events around each batch), ms.
    pub gpu_ms: f64,
    /// PDL launches of one call, measured: the call captured into a graph,
    /// its programmatic edges counted (`null`: the call could not be
    /// captured: it does what a capture forbids, such as waiting for the
    /// device on the host; absent: a program built
    /// before the measurement). `pdl` is what the headers' macros say; this
    /// is what the launches do.
    #[serde(default)]
    pub pdl_edges: Option<u64>,
    /// A control of the loaded environments (`GRIDCHECK_LIB_LOAD`): `none`
    /// (the environment's allocations, no kernel beside the calls) or `spin`
    /// (a kernel of the same blocks that touches no memory); absent: the
    /// environment's own load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<String>,
    /// `GRIDCHECK_LIB_SYNC=1`: every call checked before the next was
    /// queued, so `after_calls` is the call that failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sync_each: bool,
}

/// What a program printed: its outcomes, or the reason it did not run.
#[derive(Debug, Clone, PartialEq)]
pub enum Printed {
    Outcomes(Vec<Outcome>),
    NotRun(String),
}

/// The outcomes of a program's standard output, one JSON line each, or the
/// first bad line named by its number. A `gridcheck-not-run` line is an
/// error here (see [`read_stdout`] for the whole of it); blank lines are skipped.
pub fn parse_outcomes(stdout: &str) -> Result<Vec<Outcome>, String> {
    let mut out = Vec::new();
    for (i, line) in stdout.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(reason) = line.strip_prefix(NOT_RUN) {
            return Err(format!("line {}: the program did not run: {reason}", i + 1));
        }
        let o: Outcome = serde_json::from_str(line)
            .map_err(|e| format!("line {}: not an outcome ({e}): {}", i + 1, clip(line)))?;
        if o.calls > o.reps || o.wrong > o.calls {
            return Err(format!(
                "line {}: {} calls of {} reps with {} wrong cannot be",
                i + 1,
                o.calls,
                o.reps,
                o.wrong
            ));
        }
        if let Some(load) = o.load.as_deref().filter(|l| !matches!(*l, "none" | "spin")) {
            return Err(format!(
                "line {}: `load` is `{}`, not none or spin",
                i + 1,
                clip(load)
            ));
        }
        if o.error.is_some() != o.after_calls.is_some() {
            return Err(format!(
                "line {}: `error` and `after_calls` come together",
                i + 1
            ));
        }
        out.push(o);
    }
    Ok(out)
}

/// A program's standard output: it did not run (one `gridcheck-not-run`
/// line and no outcome), or its outcomes (at least one).
pub fn read_stdout(stdout: &str) -> Result<Printed, String> {
    let not_run: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.trim().strip_prefix(NOT_RUN))
        .collect();
    if let Some(reason) = not_run.first() {
        if stdout.lines().any(|l| l.trim_start().starts_with('{')) {
            return Err(format!(
                "the program says it did not run ({reason}) but printed outcomes"
            ));
        }
        return Ok(Printed::NotRun(reason.trim().to_string()));
    }
    let o = parse_outcomes(stdout)?;
    if o.is_empty() {
        return Err("the program printed no outcome".into());
    }
    Ok(Printed::Outcomes(o))
}

fn clip(s: &str) -> String {
    s.chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = r#"{"algorithm":"merge_sort_keys","size":65536,"env":"stress","reps":10,"calls":10,"wrong":1,"first_wrong":"call 3 (sorted): index 17: got 5 want 3","error":null,"after_calls":null,"pdl":true,"ptx_version":900,"cccl":"3.5.0","gpu_ms":1.23}"#;

    #[test]
    fn outcome_lines_parse() {
        let o = parse_outcomes(&format!("{LINE}\n\n{LINE}\n")).unwrap();
        assert_eq!(o.len(), 2);
        assert_eq!(o[0].wrong, 1);
        assert_eq!(
            o[0].first_wrong.as_deref(),
            Some("call 3 (sorted): index 17: got 5 want 3")
        );
        assert!(o[0].pdl);
        assert_eq!(o[0].ptx_version, 900);
        let err = LINE
            .replace("\"error\":null", "\"error\":\"cudaErrorIllegalAddress\"")
            .replace("\"after_calls\":null", "\"after_calls\":4");
        assert_eq!(parse_outcomes(&err).unwrap()[0].after_calls, Some(4));
        assert_eq!(o[0].load, None);
        assert_eq!(o[0].pdl_edges, None);
        assert!(!o[0].sync_each);
        let control = LINE.replace(
            "}",
            ",\"pdl_edges\":3,\"load\":\"spin\",\"sync_each\":true}",
        );
        let c = &parse_outcomes(&control).unwrap()[0];
        assert_eq!(c.load.as_deref(), Some("spin"));
        assert!(c.sync_each);
        assert_eq!(c.pdl_edges, Some(3));
    }

    #[test]
    fn bad_lines_are_named() {
        let cases = [
            ("garbage".to_string(), "line 1: not an outcome"),
            (
                format!("{LINE}\n{}", LINE.replace("\"pdl\":true,", "")),
                "line 2",
            ),
            (LINE.replace("\"wrong\":1", "\"wrong\":11"), "cannot be"),
            (
                LINE.replace("\"error\":null", "\"error\":\"x\""),
                "come together",
            ),
            (
                LINE.replace("\"gpu_ms\"", "\"extra\":1,\"gpu_ms\""),
                "unknown field",
            ),
            (
                LINE.replace("}", ",\"load\":\"heavy\"}"),
                "not none or spin",
            ),
            (
                "gridcheck-not-run no CUDA device".to_string(),
                "did not run",
            ),
        ];
        for (text, want) in cases {
            let e = parse_outcomes(&text).unwrap_err();
            assert!(e.contains(want), "`{e}` should say {want}");
        }
    }

    #[test]
    fn not_run_is_read_as_such() {
        let p = read_stdout("gridcheck-not-run no CUDA device\n").unwrap();
        assert_eq!(p, Printed::NotRun("no CUDA device".into()));
        assert!(read_stdout(&format!("gridcheck-not-run x\n{LINE}")).is_err());
        assert!(read_stdout("").is_err());
        assert!(matches!(read_stdout(LINE), Ok(Printed::Outcomes(o)) if o.len() == 1));
    }
}
