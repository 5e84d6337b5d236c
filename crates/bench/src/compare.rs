//! `--compare`: a new run against a baseline.
//!
//! A figure **regressed** when its new median lies beyond the baseline's
//! measured spread, widened by a tolerance, in the worse direction. With
//! `w = max(relative * |baseline median|, floor)`, where the floor is
//! 0.25 for figures in `us` and 0.05 for figures in `fraction`, and 0
//! otherwise:
//!
//! - lower is better: regressed if `new.median > base.p90 + w`,
//!   improved if `new.median < base.p10 - w`;
//! - higher is better: regressed if `new.median < base.p10 - w`,
//!   improved if `new.median > base.p90 + w`.
//!
//! The defaults (15%, 0.25 us, 0.05) come from identical runs on the H100
//! (`records/<gpu-slug>/bench/`): with 100 repeats a micro-benchmark's
//! [p10, p90] is often under 1% wide, but between two processes the cost
//! of a kernel boundary without PDL moved by about 0.2 us (and with it
//! every PDL saving, and the hidden fractions by up to 0.044), the host
//! launch rate by 10% and the host round trip (host clock) by 14%, so the
//! within-run spread alone flags identical runs.
//!
//! A figure of the baseline missing from the new run counts as a
//! regression (it no longer runs or no longer verifies); a new figure is
//! reported and passes.

use std::fmt::Write as _;

use crate::baseline::{Figure, Results};

/// How far beyond the baseline's [p10, p90] a median may move.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// A fraction of the baseline median.
    pub relative: f64,
    /// Microseconds, for figures in `us`.
    pub floor_us: f64,
    /// For figures in `fraction` (a PDL saving over the ideal saving).
    pub floor_fraction: f64,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance {
            relative: 0.15,
            floor_us: 0.25,
            floor_fraction: 0.05,
        }
    }
}

impl Tolerance {
    /// The widening `w` for a baseline figure.
    pub fn widening(&self, base: &Figure) -> f64 {
        let rel = self.relative * base.median.abs();
        match base.unit.as_str() {
            "us" => rel.max(self.floor_us),
            "fraction" => rel.max(self.floor_fraction),
            _ => rel,
        }
    }

    /// Parses a non-negative number given to `flag`.
    pub fn parse_value(flag: &str, v: &str) -> Result<f64, String> {
        v.parse::<f64>()
            .ok()
            .filter(|t| t.is_finite() && *t >= 0.0)
            .ok_or_else(|| format!("{flag} {v}: expected a non-negative number"))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Ok,
    Improved,
    Regressed,
    Missing,
    New,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Improved => "improved",
            Verdict::Regressed => "REGRESSED",
            Verdict::Missing => "MISSING",
            Verdict::New => "new",
        }
    }

    pub fn fails(self) -> bool {
        matches!(self, Verdict::Regressed | Verdict::Missing)
    }
}

/// One figure's verdict.
pub fn judge(base: &Figure, new: &Figure, tolerance: &Tolerance) -> Verdict {
    let w = tolerance.widening(base);
    let (worse, better) = if base.lower_is_better {
        (new.median > base.p90 + w, new.median < base.p10 - w)
    } else {
        (new.median < base.p10 - w, new.median > base.p90 + w)
    };
    if worse {
        Verdict::Regressed
    } else if better {
        Verdict::Improved
    } else {
        Verdict::Ok
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub id: String,
    pub unit: String,
    pub base: Option<Figure>,
    pub new: Option<Figure>,
    pub verdict: Verdict,
}

/// Every figure of either run, in the baseline's order, then the new ones.
pub fn compare(base: &Results, new: &Results, tolerance: &Tolerance) -> Vec<Row> {
    let mut rows = Vec::new();
    for b in &base.figures {
        let n = new.figures.iter().find(|f| f.id == b.id);
        rows.push(Row {
            id: b.id.clone(),
            unit: b.unit.clone(),
            base: Some(b.clone()),
            new: n.cloned(),
            verdict: n.map_or(Verdict::Missing, |n| judge(b, n, tolerance)),
        });
    }
    for n in &new.figures {
        if !base.figures.iter().any(|b| b.id == n.id) {
            rows.push(Row {
                id: n.id.clone(),
                unit: n.unit.clone(),
                base: None,
                new: Some(n.clone()),
                verdict: Verdict::New,
            });
        }
    }
    rows
}

fn spread(f: &Option<Figure>) -> String {
    match f {
        Some(f) => format!("{:.3} [{:.3}, {:.3}]", f.median, f.p10, f.p90),
        None => "-".into(),
    }
}

/// The terminal table of a comparison and its last line, a summary.
pub fn table(rows: &[Row], tolerance: &Tolerance) -> String {
    let w = rows.iter().map(|r| r.id.len()).max().unwrap_or(6).max(6);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<w$}  {:>5}  {:>30}  {:>30}  {:>8}  verdict",
        "figure", "unit", "baseline median [p10, p90]", "new median [p10, p90]", "change"
    );
    for r in rows {
        let change = match (&r.base, &r.new) {
            (Some(b), Some(n)) if b.median != 0.0 => {
                format!("{:+.1}%", 100.0 * (n.median - b.median) / b.median.abs())
            }
            _ => "-".into(),
        };
        let _ = writeln!(
            out,
            "{:<w$}  {:>5}  {:>30}  {:>30}  {:>8}  {}",
            r.id,
            r.unit,
            spread(&r.base),
            spread(&r.new),
            change,
            r.verdict.as_str()
        );
    }
    let count = |v: Verdict| rows.iter().filter(|r| r.verdict == v).count();
    let _ = writeln!(
        out,
        "{} figures: {} ok, {} improved, {} regressed, {} missing, {} new \
         (regressed = new median beyond the baseline's [p10, p90] widened by {:.0}% of its median, at least {} us for figures in us and {} for fractions, in the worse direction)",
        rows.len(),
        count(Verdict::Ok),
        count(Verdict::Improved),
        count(Verdict::Regressed),
        count(Verdict::Missing),
        count(Verdict::New),
        tolerance.relative * 100.0,
        tolerance.floor_us,
        tolerance.floor_fraction
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::Machine;
    use crate::stats::summarize;

    fn fig(id: &str, lower: bool, samples: &[f64]) -> Figure {
        Figure::new(id, id, "us", lower, &summarize(samples).unwrap(), &[])
    }

    fn run(figures: Vec<Figure>) -> Results {
        Results {
            schema: 1,
            machine: Machine {
                gpu: "g".into(),
                slug: "g".into(),
                driver: "d".into(),
                nvcc: "n".into(),
                date: "2026-11-22".into(),
                command: "c".into(),
            },
            figures,
            notes: vec![],
        }
    }

    fn rel(r: f64) -> Tolerance {
        Tolerance {
            relative: r,
            floor_us: 0.0,
            floor_fraction: 0.0,
        }
    }

    #[test]
    fn lower_is_better() {
        // p10 = 9.5, p90 = 10.5, median 10: band [9.5 - 0.5, 10.5 + 0.5].
        let base = fig(
            "a",
            true,
            &[9.0, 9.5, 10.0, 10.5, 11.0, 10.0, 9.8, 10.2, 9.9, 10.1, 10.0],
        );
        let at = |m: f64| fig("a", true, &[m]);
        assert_eq!(judge(&base, &at(10.0), &rel(0.05)), Verdict::Ok);
        assert_eq!((base.p10, base.median, base.p90), (9.5, 10.0, 10.5));
        assert_eq!(judge(&base, &at(10.9), &rel(0.05)), Verdict::Ok);
        assert_eq!(judge(&base, &at(11.1), &rel(0.05)), Verdict::Regressed);
        assert_eq!(judge(&base, &at(11.1), &rel(0.10)), Verdict::Ok);
        assert_eq!(judge(&base, &at(9.1), &rel(0.05)), Verdict::Ok);
        assert_eq!(judge(&base, &at(8.9), &rel(0.05)), Verdict::Improved);
    }

    #[test]
    fn higher_is_better_mirrors() {
        let base = fig("s", false, &[1.0, 2.0, 3.0]);
        // p10 = 1.2, p90 = 2.8, w = 0.1
        assert_eq!(
            judge(&base, &fig("s", false, &[1.05]), &rel(0.05)),
            Verdict::Regressed
        );
        assert_eq!(
            judge(&base, &fig("s", false, &[1.15]), &rel(0.05)),
            Verdict::Ok
        );
        assert_eq!(
            judge(&base, &fig("s", false, &[3.0]), &rel(0.05)),
            Verdict::Improved
        );
    }

    #[test]
    fn missing_and_new_figures() {
        let base = run(vec![fig("a", true, &[1.0]), fig("b", true, &[1.0])]);
        let new = run(vec![fig("b", true, &[5.0]), fig("c", true, &[1.0])]);
        let rows = compare(&base, &new, &rel(0.05));
        let v: Vec<(&str, Verdict)> = rows.iter().map(|r| (r.id.as_str(), r.verdict)).collect();
        assert_eq!(
            v,
            [
                ("a", Verdict::Missing),
                ("b", Verdict::Regressed),
                ("c", Verdict::New)
            ]
        );
        assert!(rows.iter().any(|r| r.verdict.fails()));
        let t = table(&rows, &rel(0.05));
        assert!(
            t.contains("+400.0%") && t.contains("REGRESSED") && t.contains("1 missing"),
            "{t}"
        );
        let same = compare(&base, &base, &rel(0.05));
        assert!(same.iter().all(|r| r.verdict == Verdict::Ok));
    }

    #[test]
    fn the_floor_applies_to_microseconds_only() {
        let t = Tolerance::default();
        // a saving of 0.06 us [0.05, 0.07]: 0.2 is within the floor of 0.25
        let base = fig("s", false, &[0.05, 0.06, 0.07]);
        assert_eq!(t.widening(&base), 0.25);
        assert_eq!(judge(&base, &fig("s", false, &[-0.15]), &t), Verdict::Ok);
        assert_eq!(
            judge(&base, &fig("s", false, &[-0.25]), &t),
            Verdict::Regressed
        );
        let mut hidden = fig("h", false, &[0.2, 0.2, 0.2]);
        hidden.unit = "fraction".into();
        assert!((t.widening(&hidden) - 0.05).abs() < 1e-12);
        let mut ratio = fig("r", true, &[2.0, 2.0, 2.0]);
        ratio.unit = "x".into();
        assert!((t.widening(&ratio) - 0.3).abs() < 1e-12);
        let mut new = fig("r", true, &[2.35]);
        new.unit = "x".into();
        assert_eq!(judge(&ratio, &new, &t), Verdict::Regressed);
        assert!(Tolerance::parse_value("--tolerance", "-1").is_err());
        assert!(Tolerance::parse_value("--tolerance", "x").is_err());
        assert_eq!(Tolerance::parse_value("--floor-us", "0.5"), Ok(0.5));
    }
}
