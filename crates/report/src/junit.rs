//! JUnit XML from trial records, for CI systems that display it.

use crate::{Status, TrialRecord};

fn escape(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
        .map(|c| match c {
            '&' => "&amp;".to_string(),
            '<' => "&lt;".to_string(),
            '>' => "&gt;".to_string(),
            '"' => "&quot;".to_string(),
            '\'' => "&apos;".to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// Whether a status fails the run (as the harness concludes it).
fn fails(s: Status) -> bool {
    matches!(
        s,
        Status::Fail | Status::Crash | Status::Timeout | Status::Unmodeled | Status::OracleConflict
    )
}

/// One `<testsuite>` per tier, one `<testcase>` per trial: failures for
/// fail, crash, timeout, unmodeled and oracle-conflict, `<skipped>` for
/// trials that did not run; the rest (pass, quality-warning, and a known
/// fact's xfail, known, known-hang and changed) pass with their status and
/// message as `<system-out>`, a changed fact's starting `CHANGED`.
pub fn junit(records: &[TrialRecord]) -> String {
    let mut tiers: Vec<&str> = records.iter().map(|r| r.trial.tier.as_str()).collect();
    tiers.sort();
    tiers.dedup();
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"gridcheck\">\n",
    );
    for tier in tiers {
        let rs: Vec<&TrialRecord> = records
            .iter()
            .filter(|r| r.trial.tier.as_str() == tier)
            .collect();
        let failures = rs.iter().filter(|r| fails(r.status)).count();
        let skipped = rs
            .iter()
            .filter(|r| matches!(r.status, Status::NotRun | Status::NotSupported))
            .count();
        s += &format!(
            "  <testsuite name=\"{tier}\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\">\n",
            rs.len()
        );
        for r in rs {
            s += &format!(
                "    <testcase classname=\"{}\" name=\"{}\">",
                escape(&format!("{tier}.{}", r.trial.rule)),
                escape(&r.trial.to_string())
            );
            match r.status {
                st if fails(st) => {
                    s += &format!(
                        "<failure type=\"{}\" message=\"{}\">{}</failure>",
                        r.status,
                        escape(r.message.lines().next().unwrap_or("")),
                        escape(&r.message)
                    );
                }
                Status::NotRun | Status::NotSupported => {
                    s += &format!("<skipped message=\"{}\"/>", escape(&r.message));
                }
                Status::Changed => {
                    s += &format!(
                        "<system-out>CHANGED (a known fact did not reproduce): {}</system-out>",
                        escape(&r.message)
                    );
                }
                _ => {
                    s += &format!(
                        "<system-out>{}: {}</system-out>",
                        r.status,
                        escape(&r.message)
                    );
                }
            }
            s += "</testcase>\n";
        }
        s += "  </testsuite>\n";
    }
    s += "</testsuites>\n";
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(trial: &str, status: Status, message: &str) -> TrialRecord {
        TrialRecord::new(trial.parse().unwrap(), status, message)
    }

    #[test]
    fn failures_skips_and_escaping() {
        let x = junit(&[
            rec("gpu/sm_90/r/a", Status::Fail, "x < 1 & \"y\""),
            rec("gpu/sm_90/r/b", Status::NotSupported, "no driver"),
            rec("model/r/c", Status::Pass, "ok"),
        ]);
        assert!(
            x.contains("<testsuite name=\"gpu\" tests=\"2\" failures=\"1\" skipped=\"1\">"),
            "{x}"
        );
        assert!(x.contains("x &lt; 1 &amp; &quot;y&quot;"), "{x}");
        assert!(x.contains("<skipped message=\"no driver\"/>"), "{x}");
        assert!(
            x.contains("<testsuite name=\"model\" tests=\"1\" failures=\"0\" skipped=\"0\">"),
            "{x}"
        );
    }

    #[test]
    fn the_statuses_of_facts() {
        let x = junit(&[
            rec("gpu/sm_90/r/a", Status::Unmodeled, "a state"),
            rec("gpu/sm_90/r/b", Status::Known, "known (s)"),
            rec("gpu/sm_90/r/c", Status::KnownHang, "known hang (s)"),
            rec("gpu/sm_90/r/d", Status::Changed, "changed: s"),
            rec("gpu/sm_90/r/e", Status::OracleConflict, "both"),
        ]);
        assert!(
            x.contains("<testsuite name=\"gpu\" tests=\"5\" failures=\"2\" skipped=\"0\">"),
            "{x}"
        );
        assert!(
            x.contains("<failure type=\"unmodeled\" message=\"a state\">"),
            "{x}"
        );
        assert!(
            x.contains("<system-out>known: known (s)</system-out>"),
            "{x}"
        );
        assert!(
            x.contains("<system-out>known-hang: known hang (s)</system-out>"),
            "{x}"
        );
        assert!(
            x.contains(
                "<system-out>CHANGED (a known fact did not reproduce): changed: s</system-out>"
            ),
            "{x}"
        );
    }
}
