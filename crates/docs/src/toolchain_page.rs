//! The site's *Toolchains* page (`toolchains.md`): trial × toolchain, from
//! the recorded runs, merged by [`crate::matrix`] (one row a trial across
//! toolchains, one column an input):
//!
//! - per GPU, its newest run with toolchain variants
//!   (`toolchains/<name>/`, [`crate::results::VARIANTS`]): a column the run
//!   and one a variant, headed by the kernels' toolchain (nvcc and device
//!   runtime), their status counts, the trials whose status differs
//!   between the columns, and how many are the same in all;
//! - the machine-code and compile trials of every run (and variant) that
//!   has them, whatever its GPU (a no-GPU record too): a column a
//!   toolchain, from the newest run that has it; the rows whose statuses
//!   differ across toolchains or are not `pass`, and the counts.
//!
//! Tables are HTML (`gc-matrix`: fixed layout, trial names in code cells
//! that wrap), so that many columns stay inside the page at 1280 px.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gridcheck_report::{Status, Tier, TrialRecord};

use crate::context::Ctx;
use crate::matrix::{Matrix, MergeOptions};
use crate::results::{Run, run_order};
use crate::text::{badge, html};

const MERGE: MergeOptions = MergeOptions {
    by_toolchain: true,
    column_an_input: true,
};

pub(crate) fn page(ctx: &Ctx) -> String {
    render(&ctx.inputs.runs, &ctx.inputs.root)
}

/// The page from the recorded runs (paths shown relative to `root`).
pub(crate) fn render(runs: &[Run], root: &Path) -> String {
    let mut s = String::from("# Toolchains\n\n");
    s += "Which CUDA toolchain built what ran: a trial's status under the kernels of each \
          toolchain (`cargo xtask build --toolchain`, `cargo xtask conformance --toolchain \
          13.0,13.5`). A machine-code trial is one row across toolchains \
          (`sass/13.0/sm_90/r/t` and `sass/13.5/sm_90/r/t` are the row `sass/sm_90/r/t`), as \
          `cargo xtask report merge --by-toolchain` shows any results files.\n\n";
    s += "## The same run under other toolchains\n\n";
    s += &variants(runs, root);
    s += "\n## Machine code and compile trials by toolchain\n\n";
    s += &machine_code(runs, root);
    s
}

/// A column: its heading (HTML), a line for the legend, and its records.
struct Input {
    head: String,
    legend: String,
    path: PathBuf,
    records: Vec<TrialRecord>,
}

/// The newest run of each GPU that has variants, with them.
fn variants(runs: &[Run], root: &Path) -> String {
    let mut newest: BTreeMap<&str, &Run> = BTreeMap::new();
    for r in runs.iter().filter(|r| !r.variants.is_empty()) {
        let e = newest.entry(&r.slug).or_insert(r);
        if run_order(&r.date) > run_order(&e.date) {
            *e = r;
        }
    }
    if newest.is_empty() {
        return "No recorded run has toolchain variants (`records/<gpu>/<date>/toolchains/<name>/\
                results.jsonl.gz`: the run again under another toolchain's kernels, from \
                `conformance/gpu-toolchains.sh` and `cargo xtask record`).\n"
            .into();
    }
    let mut s = String::new();
    for run in newest.into_values() {
        s += &format!("### {} — {}\n\n", html(&run.machine.gpu), run.date);
        let inputs: Vec<Input> = std::iter::once(run)
            .chain(&run.variants)
            .map(|r| {
                let name = r.variant.clone().unwrap_or_else(|| "the run".into());
                let (head, built) = built_by(&r.records);
                Input {
                    head: format!("{}<br>{head}", html(&name)),
                    legend: format!(
                        "{}: kernels built by {built}; nvcc {} where the harness ran; `{}`",
                        html(&name),
                        html(&r.machine.nvcc),
                        r.results_path(root)
                    ),
                    path: r.results.clone(),
                    records: r.records.clone(),
                }
            })
            .collect();
        s += &table(&inputs, true);
    }
    s
}

/// The heading of a column of records (the kernels' nvcc and device
/// runtime, HTML) and the same in words.
fn built_by(records: &[TrialRecord]) -> (String, String) {
    match records.iter().find_map(|r| r.kernels_toolchain()) {
        Some(t) => {
            let devrt = t.device_runtime();
            let short = devrt
                .strip_prefix("nvidia-cuda-runtime ")
                .and_then(|d| d.split(' ').next())
                .unwrap_or(&devrt);
            (
                format!(
                    "nvcc {}<br><small>device runtime {}</small>",
                    html(&t.nvcc),
                    html(short)
                ),
                format!(
                    "nvcc {} (release {}), device runtime {}",
                    html(&t.nvcc),
                    html(&t.release),
                    html(&devrt)
                ),
            )
        }
        None => (
            "<small>toolchain not recorded</small>".into(),
            "a toolchain the records do not name (made before toolchains were recorded)".into(),
        ),
    }
}

/// The toolchain release of a compile or machine-code record: the
/// trial's, else its compile summary's, else its nvcc's `major.minor`.
fn release_of(r: &TrialRecord) -> Option<String> {
    if let Some(t) = &r.trial.toolchain {
        return Some(t.clone());
    }
    let c = r.compile.as_ref()?;
    Some(match &c.toolchain {
        Some(t) => t.release.clone(),
        None => gridcheck_report::major_minor(&c.nvcc),
    })
}

/// A release as numbers, for order (`13.10` after `13.9`).
fn release_order(r: &str) -> Vec<u64> {
    r.split('.')
        .map(|p| p.parse().unwrap_or(u64::MAX))
        .collect()
}

/// Every run's (and variant's) machine-code and compile trials, a column
/// a toolchain from the newest run that has it.
fn machine_code(runs: &[Run], root: &Path) -> String {
    // Release → (the run, its records of that release).
    let mut newest: BTreeMap<String, (&Run, Vec<TrialRecord>)> = BTreeMap::new();
    for run in runs
        .iter()
        .flat_map(|r| std::iter::once(r).chain(&r.variants))
    {
        let own: Vec<&TrialRecord> = run
            .records
            .iter()
            .filter(|r| matches!(r.trial.tier, Tier::Sass | Tier::Static))
            .collect();
        // A compile record that names no compiler (not run) is the run's.
        let fallback = own.iter().find_map(|r| release_of(r));
        let mut by_release: BTreeMap<String, Vec<TrialRecord>> = BTreeMap::new();
        for r in own {
            let release = release_of(r)
                .or_else(|| fallback.clone())
                .unwrap_or_else(|| "unknown".into());
            by_release.entry(release).or_default().push(r.clone());
        }
        for (release, records) in by_release {
            let newer = newest
                .get(&release)
                .is_none_or(|(r, _)| run_order(&run.date) >= run_order(&r.date));
            if newer {
                newest.insert(release, (run, records));
            }
        }
    }
    if newest.is_empty() {
        return "No recorded run has machine-code or compile trials.\n".into();
    }
    let mut columns: Vec<(String, (&Run, Vec<TrialRecord>))> = newest.into_iter().collect();
    columns.sort_by_key(|(r, _)| release_order(r));
    let inputs: Vec<Input> = columns
        .into_iter()
        .map(|(release, (run, records))| {
            let nvcc = records
                .iter()
                .find_map(|r| r.kernels_toolchain().map(|t| t.nvcc.clone()))
                .or_else(|| {
                    records
                        .iter()
                        .find_map(|r| Some(r.compile.as_ref()?.nvcc.clone()))
                })
                .unwrap_or_else(|| "-".into());
            let built = match records.iter().any(|r| r.kernels_toolchain().is_some()) {
                true => built_by(&records).1,
                false => format!(
                    "nvcc {} (the records name no toolchain: made before toolchains were \
                     recorded)",
                    html(&nvcc)
                ),
            };
            let from = match &run.variant {
                Some(v) => format!("{} {} ({})", run.slug, run.date, v),
                None => format!("{} {}", run.slug, run.date),
            };
            Input {
                head: format!("{}<br><small>nvcc {}</small>", html(&release), html(&nvcc)),
                legend: format!(
                    "{}: {built}; from {}, `{}`",
                    html(&release),
                    html(&from),
                    run.results_path(root)
                ),
                path: run.results.clone(),
                records,
            }
        })
        .collect();
    table(&inputs, false)
}

/// The matrix of `inputs` (a column each) as the page shows it: the
/// columns' legend, status counts, then the rows that differ (with
/// `absent_differs`, a trial one column lacks differs) or are not a pass
/// (without it), and how many rows are left out.
fn table(inputs: &[Input], absent_differs: bool) -> String {
    let inputs: Vec<&Input> = inputs.iter().filter(|i| !i.records.is_empty()).collect();
    let files: Vec<(PathBuf, Vec<TrialRecord>)> = inputs
        .iter()
        .map(|i| (i.path.clone(), i.records.clone()))
        .collect();
    let m = match Matrix::from_records(&files, MERGE) {
        Ok(m) => m,
        Err(e) => return format!("**These records cannot be merged**: {}\n", html(&e)),
    };
    // The columns of the inputs (not those of single devices).
    let own: Vec<usize> = (0..m.columns.len())
        .filter(|&c| m.columns[c].device.is_none())
        .collect();
    let mut s = String::new();
    for i in &inputs {
        s += &format!("- {}\n", i.legend);
    }
    s += "\n<table class=\"gc-matrix\">\n<thead><tr><th></th>";
    for i in &inputs {
        s += &format!("<th>{}</th>", i.head);
    }
    s += "</tr></thead>\n<tbody>\n";
    // The counts: a row a status, a number a column.
    let counts: Vec<BTreeMap<Status, usize>> = own.iter().map(|&c| m.counts(c)).collect();
    let mut statuses: Vec<Status> = counts.iter().flat_map(|c| c.keys().copied()).collect();
    statuses.sort();
    statuses.dedup();
    for st in statuses {
        s += &format!("<tr><td>{} (trials)</td>", badge(st));
        for c in &counts {
            s += &format!("<td>{}</td>", c.get(&st).copied().unwrap_or(0));
        }
        s += "</tr>\n";
    }
    let mut shown = 0;
    for row in &m.rows {
        let statuses: Vec<Option<Status>> = own
            .iter()
            .map(|&c| row.cells[c].as_ref().map(|x| x.status))
            .collect();
        let present: Vec<Status> = statuses.iter().flatten().copied().collect();
        let differs = if absent_differs {
            statuses.windows(2).any(|w| w[0] != w[1])
        } else {
            present.windows(2).any(|w| w[0] != w[1])
        };
        if !differs && (absent_differs || present.iter().all(|s| *s == Status::Pass)) {
            continue;
        }
        shown += 1;
        s += &format!("<tr><td><code>{}</code></td>", html(&row.trial.to_string()));
        for st in &statuses {
            match st {
                Some(st) => s += &format!("<td>{}</td>", badge(*st)),
                None => s += "<td>—</td>",
            }
        }
        s += "</tr>\n";
    }
    s += "</tbody>\n</table>\n\n";
    let left = m.rows.len() - shown;
    s += &if absent_differs {
        format!(
            "{shown} trial(s) differ between the columns (shown above); {left} are the same in \
             all.\n\n"
        )
    } else {
        format!(
            "{shown} row(s) differ across toolchains or are not a pass (shown above); {left} \
             pass under every toolchain that has them.\n\n"
        )
    };
    s
}

#[cfg(test)]
mod tests;
