//! The site's *CCCL library tier* page (`library.md`): CCCL's algorithms
//! that launch with PDL, run by their programs on the GPU
//! (`lib/<release>/<target>/<algorithm>/<case>`), for each release and
//! target from the newest recorded run of each GPU that ran them: per release, each algorithm and target with its
//! cases' statuses on each GPU, then each failing case's evidence (its
//! counts, the controls run after it, the reproducer).

use std::collections::{BTreeMap, BTreeSet};

use gridcheck_report::{LibraryResult, Status, Tier, TrialRecord};

use crate::context::Ctx;
use crate::results::{Run, latest_where};
use crate::text::{badge, html};

pub(crate) fn page(ctx: &Ctx) -> String {
    render(&ctx.inputs.runs)
}

/// Whether a status is a failure of the case, a fact's or not.
fn failing(s: Status) -> bool {
    matches!(
        s,
        Status::Fail | Status::Crash | Status::Timeout | Status::Xfail | Status::Known
    )
}

/// The page from the recorded runs.
pub fn render(runs: &[Run]) -> String {
    let mut s = String::from("# CCCL library tier\n\n");
    s += "The toolkit's CCCL launches some CUB kernels with PDL and places their waits and \
          triggers by hand. The library tier builds each algorithm's program from each \
          release's headers (`cargo xtask library build`) and runs it as a user does \
          (`cargo xtask conformance --tier library`), each case (a size and an environment: \
          quiet, back-to-back, stress, burst, delay) in a process of its own, every call's \
          result checked on the host. A failing case is run again at once with PDL off \
          (`-nopdl`), with compute_90 PTX (`-ptx90`), as nvcc's SASS of the compute_80 code \
          (`-sass80`, `-sass80-nopdl`) and with the wait moved to a kernel's first line \
          (`-<patch>`), in rounds beside its own build run again: a control right every time \
          while the build kept failing beside it removes the failure and points at its cause. \
          Trials are `lib/<release>/<target>/<algorithm>/<case>`; `cargo xtask report diff \
          --library-release OLD NEW RESULTS` compares two releases of one run.\n\n";
    let releases: BTreeSet<String> = runs
        .iter()
        .flat_map(|r| r.records.iter())
        .filter(|t| t.trial.tier == Tier::Library)
        .filter_map(|t| t.trial.toolchain.clone())
        .collect();
    if releases.is_empty() {
        s += "No recorded run has library trials yet: on a GPU machine, `cargo xtask library \
              build` then `cargo xtask conformance --tier library`, and `cargo xtask record` \
              the results.\n";
        return s;
    }
    for release in &releases {
        let columns = columns(runs, release);
        s += &format!("## CCCL {release}\n\n");
        s += &table(&columns);
        s += &failures(&columns);
    }
    s
}

/// One GPU's records of a release: for each target, those of the newest
/// run of that GPU that ran the release's target (a later run of part of
/// the tier, or of another tier, does not hide them).
struct Column<'a> {
    gpu: String,
    dates: Vec<String>,
    records: Vec<(&'a Run, &'a TrialRecord)>,
}

fn columns<'a>(runs: &'a [Run], release: &str) -> Vec<Column<'a>> {
    let of = |t: &TrialRecord| {
        t.trial.tier == Tier::Library && t.trial.toolchain.as_deref() == Some(release)
    };
    let targets: BTreeSet<String> = runs
        .iter()
        .flat_map(|r| r.records.iter())
        .filter(|t| of(t))
        .filter_map(|t| t.trial.sm.clone())
        .collect();
    let mut by_gpu: BTreeMap<String, Column<'a>> = BTreeMap::new();
    for target in &targets {
        let holds = |t: &TrialRecord| of(t) && t.trial.sm.as_deref() == Some(target.as_str());
        for run in latest_where(runs, |r| r.records.iter().any(holds)) {
            let c = by_gpu.entry(run.slug.clone()).or_insert_with(|| Column {
                gpu: run.machine.gpu.clone(),
                dates: Vec::new(),
                records: Vec::new(),
            });
            if !c.dates.contains(&run.date) {
                c.dates.push(run.date.clone());
            }
            c.records
                .extend(run.records.iter().filter(|t| holds(t)).map(|t| (run, t)));
        }
    }
    by_gpu.into_values().collect()
}

/// Per algorithm and target, the statuses of its cases on each GPU.
fn table(columns: &[Column]) -> String {
    let rows: BTreeSet<(String, String)> = columns
        .iter()
        .flat_map(|c| c.records.iter())
        .map(|(_, t)| (t.trial.rule.clone(), t.trial.sm.clone().unwrap_or_default()))
        .collect();
    let mut s =
        String::from("<table class=\"gc-matrix\"><thead><tr><th>algorithm</th><th>target</th>");
    for c in columns {
        s += &format!("<th>{} ({})</th>", html(&c.gpu), html(&c.dates.join(", ")));
    }
    s += "</tr></thead><tbody>\n";
    for (alg, target) in rows {
        s += &format!(
            "<tr><td><code>{}</code></td><td>{}</td>",
            html(&alg),
            html(&target)
        );
        for c in columns {
            let mut counts: BTreeMap<Status, usize> = BTreeMap::new();
            for (_, t) in c.records.iter().filter(|(_, t)| {
                t.trial.rule == alg && t.trial.sm.as_deref() == Some(target.as_str())
            }) {
                *counts.entry(t.status).or_default() += 1;
            }
            let cell = if counts.is_empty() {
                "not run".to_string()
            } else {
                counts
                    .iter()
                    .map(|(st, n)| format!("{} {n}", badge(*st)))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            s += &format!("<td>{cell}</td>");
        }
        s += "</tr>\n";
    }
    s + "</tbody></table>\n\n"
}

/// Each failing case of a release: its message, counts, controls and
/// reproducer.
fn failures(columns: &[Column]) -> String {
    let mut s = String::new();
    for (run, t) in columns
        .iter()
        .flat_map(|c| c.records.iter())
        .filter(|(_, t)| failing(t.status))
    {
        if s.is_empty() {
            s += "### Failures\n\n";
        }
        s += &format!(
            "#### `{}` on {} ({})\n\n{} {}\n\n",
            t.trial,
            html(&run.machine.gpu),
            html(&run.date),
            badge(t.status),
            html(t.message.lines().next().unwrap_or_default())
        );
        if let Some(l) = &t.library {
            s += &evidence(l);
        }
    }
    if s.is_empty() {
        s += "No case of this release failed on a recorded GPU.\n\n";
    }
    s
}

fn evidence(l: &LibraryResult) -> String {
    let r = &l.run;
    let mut s = format!(
        "- {} of {} calls made, {} wrong{}{}{}\n",
        r.calls,
        l.reps,
        r.wrong,
        r.first_wrong
            .as_deref()
            .map(|f| format!(" (first: {})", html(f)))
            .unwrap_or_default(),
        r.error
            .as_deref()
            .map(|e| format!(
                "; {} after {} calls",
                html(e),
                r.after_calls.unwrap_or(r.calls)
            ))
            .unwrap_or_default(),
        r.timed_out_s
            .map(|t| format!("; no answer within {t} s"))
            .unwrap_or_default(),
    );
    if l.controls.is_empty() {
        s += "- controls: none built\n";
    }
    for c in &l.controls {
        s += &format!(
            "- control `{}`: {}{}\n",
            c.variant,
            html(&c.message),
            if c.removes_failure() {
                " **(removes the failure)**"
            } else {
                ""
            }
        );
    }
    if let Some(rep) = &l.reproducer {
        s += &format!(
            "\nReproduce (source `{}`):\n\n```sh\n{}\n{}\n```\n\n",
            rep.source, rep.build, rep.command
        );
    }
    s
}
