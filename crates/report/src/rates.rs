//! Litmus instance rates: `litmus_smoke` (`crates/gpu/examples`) appends
//! one [`RateRecord`] a test and mode to the file `GC_RATES` names, and
//! [`rate_groups`] summarises them per family (CDP or PDL tests) and mode,
//! as `conformance report rates FILE` prints them for
//! `conformance/gpu-session.sh`.

use serde::{Deserialize, Serialize};

/// One litmus run of a test in one mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateRecord {
    pub test: String,
    /// `plain` or `incantations`.
    pub mode: String,
    pub instances: u64,
    /// The whole run, module load and allocations included.
    pub elapsed_s: f64,
    /// The launches alone.
    pub launch_s: f64,
    /// Instances that satisfied the test's condition.
    pub hits: u64,
}

impl RateRecord {
    /// Instances a second over the launches alone.
    pub fn launch_rate(&self) -> f64 {
        per_second(self.instances, self.launch_s)
    }

    /// Instances a second over the whole run.
    pub fn whole_rate(&self) -> f64 {
        per_second(self.instances, self.elapsed_s)
    }
}

fn per_second(n: u64, s: f64) -> f64 {
    if s > 0.0 { n as f64 / s } else { 0.0 }
}

/// The rates of one family of tests in one mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RateGroup {
    /// `cdp` or `pdl` (a test named `pdl-...`).
    pub family: String,
    pub mode: String,
    pub tests: usize,
    /// Launches-only instances a second: the median test's (the lower
    /// middle of an even count), and the slowest and fastest with their
    /// tests.
    pub median: f64,
    pub min: f64,
    pub min_test: String,
    pub max: f64,
    pub max_test: String,
    /// The median test's rate over its whole run.
    pub median_whole: f64,
}

impl RateGroup {
    /// One line for a terminal.
    pub fn line(&self) -> String {
        format!(
            "{} {:<12} {:>2} tests: launches-only instances/s median {:.0} (min {:.0} {}, max {:.0} {}); that test over its whole run {:.0}/s",
            self.family,
            self.mode,
            self.tests,
            self.median,
            self.min,
            self.min_test,
            self.max,
            self.max_test,
            self.median_whole
        )
    }
}

/// The groups of `records`: CDP then PDL tests, each in `plain` then
/// `incantations` mode; a group without records is left out.
pub fn rate_groups(records: &[RateRecord]) -> Vec<RateGroup> {
    let mut out = Vec::new();
    for mode in ["plain", "incantations"] {
        for family in ["cdp", "pdl"] {
            let mut rs: Vec<&RateRecord> = records
                .iter()
                .filter(|r| r.mode == mode && (family == "pdl") == r.test.starts_with("pdl-"))
                .collect();
            if rs.is_empty() {
                continue;
            }
            rs.sort_by(|a, b| a.launch_rate().total_cmp(&b.launch_rate()));
            let mid = rs[(rs.len() - 1) / 2];
            let (lo, hi) = (rs[0], rs[rs.len() - 1]);
            out.push(RateGroup {
                family: family.into(),
                mode: mode.into(),
                tests: rs.len(),
                median: mid.launch_rate(),
                min: lo.launch_rate(),
                min_test: lo.test.clone(),
                max: hi.launch_rate(),
                max_test: hi.test.clone(),
                median_whole: mid.whole_rate(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(test: &str, mode: &str, launch_s: f64) -> RateRecord {
        RateRecord {
            test: test.into(),
            mode: mode.into(),
            instances: 1000,
            elapsed_s: 2.0 * launch_s,
            launch_s,
            hits: 3,
        }
    }

    #[test]
    fn groups_by_family_and_mode_with_the_median_and_extremes() {
        let rs = [
            r("c2-a", "plain", 1.0),
            r("c2-b", "plain", 0.5),
            r("c2-c", "plain", 0.25),
            r("c2-d", "plain", 0.1),
            r("pdl-a", "plain", 2.0),
            r("c2-a", "incantations", 4.0),
        ];
        let g = rate_groups(&rs);
        let names: Vec<(&str, &str, usize)> = g
            .iter()
            .map(|g| (g.family.as_str(), g.mode.as_str(), g.tests))
            .collect();
        assert_eq!(
            names,
            [
                ("cdp", "plain", 4),
                ("pdl", "plain", 1),
                ("cdp", "incantations", 1)
            ]
        );
        // Rates 1000, 2000, 4000, 10000: the lower middle is 2000.
        assert_eq!((g[0].median, g[0].median_whole), (2000.0, 1000.0));
        assert_eq!((g[0].min, g[0].min_test.as_str()), (1000.0, "c2-a"));
        assert_eq!((g[0].max, g[0].max_test.as_str()), (10000.0, "c2-d"));
        assert!(
            g[0].line()
                .starts_with("cdp plain         4 tests: launches-only instances/s median 2000 (min 1000 c2-a, max 10000 c2-d)"),
            "{}",
            g[0].line()
        );
        assert!(rate_groups(&[]).is_empty());
    }

    #[test]
    fn a_run_of_no_time_has_no_rate() {
        assert_eq!(r("t", "plain", 0.0).launch_rate(), 0.0);
    }
}
