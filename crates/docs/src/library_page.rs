//! The site's *CCCL library tier* page (`library.md`): CCCL's algorithms
//! that launch with PDL, run by their programs on the GPU
//! (`lib/<release>/<target>/<algorithm>/<case>`), from the newest recorded
//! run of each GPU: per release, each algorithm and target with its
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
          (`-nopdl`), with compute_90 PTX (`-ptx90`) and with the wait moved to a kernel's \
          first line (`-<patch>`): a control that removes the failure points at its cause. \
          Trials are `lib/<release>/<target>/<algorithm>/<case>`; `cargo xtask report diff \
          --library-release OLD NEW RESULTS` compares two releases of one run.\n\n";
    // The newest run of each GPU that ran the tier, with its library
    // records (a later suite run without the tier does not hide them).
    let ran_it = |r: &Run| r.records.iter().any(|t| t.trial.tier == Tier::Library);
    let newest: Vec<(&Run, Vec<&TrialRecord>)> = latest_where(runs, ran_it)
        .into_iter()
        .map(|r| {
            let lib = r
                .records
                .iter()
                .filter(|t| t.trial.tier == Tier::Library)
                .collect::<Vec<_>>();
            (r, lib)
        })
        .filter(|(_, lib)| !lib.is_empty())
        .collect();
    if newest.is_empty() {
        s += "No recorded run has library trials yet: on a GPU machine, `cargo xtask library \
              build` then `cargo xtask conformance --tier library`, and `cargo xtask record` \
              the results.\n";
        return s;
    }
    let releases: BTreeSet<String> = newest
        .iter()
        .flat_map(|(_, lib)| lib.iter().filter_map(|t| t.trial.toolchain.clone()))
        .collect();
    for release in &releases {
        s += &format!("## CCCL {release}\n\n");
        s += &table(release, &newest);
        s += &failures(release, &newest);
    }
    s
}

/// A run's library records of one release.
fn of_release<'a>(lib: &[&'a TrialRecord], release: &str) -> Vec<&'a TrialRecord> {
    lib.iter()
        .filter(|t| t.trial.toolchain.as_deref() == Some(release))
        .copied()
        .collect()
}

/// Per algorithm and target, the statuses of its cases on each GPU.
fn table(release: &str, newest: &[(&Run, Vec<&TrialRecord>)]) -> String {
    let rows: BTreeSet<(String, String)> = newest
        .iter()
        .flat_map(|(_, lib)| of_release(lib, release))
        .map(|t| (t.trial.rule.clone(), t.trial.sm.clone().unwrap_or_default()))
        .collect();
    let mut s =
        String::from("<table class=\"gc-matrix\"><thead><tr><th>algorithm</th><th>target</th>");
    for (run, _) in newest {
        s += &format!("<th>{} ({})</th>", html(&run.machine.gpu), html(&run.date));
    }
    s += "</tr></thead><tbody>\n";
    for (alg, target) in rows {
        s += &format!(
            "<tr><td><code>{}</code></td><td>{}</td>",
            html(&alg),
            html(&target)
        );
        for (_, lib) in newest {
            let mut counts: BTreeMap<Status, usize> = BTreeMap::new();
            for t in of_release(lib, release)
                .into_iter()
                .filter(|t| t.trial.rule == alg && t.trial.sm.as_deref() == Some(target.as_str()))
            {
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
fn failures(release: &str, newest: &[(&Run, Vec<&TrialRecord>)]) -> String {
    let mut s = String::new();
    for (run, lib) in newest {
        for t in lib
            .iter()
            .filter(|t| t.trial.toolchain.as_deref() == Some(release) && failing(t.status))
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
