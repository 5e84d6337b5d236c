//! Fragments the rule pages and the other pages share: a rule's quote and
//! source line, its status badges, and how to reproduce a trial.

use gridcheck_report::{Status, Tier, TrialId, TrialRecord};
use gridcheck_spec::{Rule, SourceKind};

use crate::context::{Ctx, seed_path};
use crate::results::Run;
use crate::text::{badge, cell, fenced, html, severity};

/// The quote as a block, paragraph breaks kept.
pub(crate) fn quote_block(rule: &Rule) -> String {
    let paras: Vec<String> = rule
        .quote
        .split("\n\n")
        .map(|p| inline_code(&html(p.trim())))
        .filter(|p| !p.is_empty())
        .map(|p| format!("<p>{p}</p>"))
        .collect();
    format!(
        "<blockquote class=\"gc-quote\">{}</blockquote>\n",
        paras.join("")
    )
}

/// Backquoted spans of escaped text as `<code>`; an unpaired backquote stays.
fn inline_code(escaped: &str) -> String {
    if escaped.matches('`').count() % 2 == 1 {
        return escaped.to_string();
    }
    let parts: Vec<&str> = escaped.split('`').collect();
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i % 2 == 1 {
                format!("<code>{p}</code>")
            } else {
                p.to_string()
            }
        })
        .collect()
}

/// "Source: <document title>, section <section>" with a link to the
/// document's page; a document other than the seeds says so.
/// `prefix` leads from the current page to the book's root (`../`).
pub(crate) fn source_line(ctx: &Ctx, rule: &Rule, prefix: &str) -> String {
    let (title, url) =
        crate::sections::source_title(&ctx.inputs.root, rule.source.kind, &rule.source.file);
    let doc = match url {
        Some(u) => format!("[{}]({u})", cell(&title)),
        None => cell(&title),
    };
    let what = match rule.source.kind {
        SourceKind::Seed => "seed",
        SourceKind::Document => "not one of the seed documents: passages in spec/documents",
    };
    format!(
        "<span class=\"gc-source\">Source: {doc}, section **{}** ({what} [{}]({prefix}{}))</span>\n",
        cell(&rule.source.section),
        rule.source.file,
        seed_path(&rule.source.file)
    )
}

/// The worst status of a rule's trials in a run, `None` when the run has no
/// trial of the rule.
pub(crate) fn worst(run: &Run, rule: &str) -> Option<Status> {
    run.of_rule(rule)
        .map(|r| r.status)
        .max_by_key(|s| severity(*s))
}

/// The rule's status badges, one per latest run (or why there is none).
pub(crate) fn status_badges(ctx: &Ctx, rule: &Rule) -> String {
    if let Some(u) = &rule.untested {
        return format!(
            "<span class=\"gc-status gc-untested\">{}</span>",
            u.status.as_str()
        );
    }
    let b: Vec<String> = ctx
        .latest
        .iter()
        .filter_map(|run| {
            worst(run, &rule.id).map(|s| {
                if ctx.latest.len() > 1 {
                    format!("{} {}", badge(s), html(&run.machine.gpu))
                } else {
                    badge(s)
                }
            })
        })
        .collect();
    if b.is_empty() {
        "<span class=\"gc-status gc-no-results\">no results</span>".to_string()
    } else {
        b.join(" ")
    }
}

/// A record's status badge, marked *stale* when the record carries the
/// hash of its test and the test has changed since (or left the spec).
/// A record written under a former name of the test is compared with the
/// test's hash under that name, and says the name it was recorded as. A
/// record without a hash (written before records carried one) is not
/// marked.
pub(crate) fn status_of(ctx: &Ctx, r: &TrialRecord) -> String {
    let mut s = badge(r.status);
    if let Some(recorded) = &r.test_hash {
        let why = match ctx.test_hashes.get(r.recorded_test_name()) {
            Some(now) if now == recorded => None,
            Some(_) => Some("the test has changed since this run"),
            None => Some("the test is no longer in the spec"),
        };
        if let Some(why) = why {
            s += &format!(" <span class=\"gc-status gc-stale\" title=\"{why}\">stale</span>");
        }
    }
    if let Some(old) = &r.recorded_as {
        s += &format!(" <small>recorded as <code>{}</code></small>", html(old));
    }
    s
}

/// How to run one trial again, here and through a GPU bundle.
pub(crate) fn reproduce(trial: &TrialId) -> String {
    let tier = trial.tier;
    let mut s = String::from("Reproduce:\n\n<div class=\"gc-repro\">\n\n");
    // A library trial names its CCCL release itself; `--toolchain` picks
    // the kernels of another nvcc, which only the other tiers have.
    let tc = trial
        .toolchain
        .as_ref()
        .filter(|_| tier != Tier::Library)
        .map(|t| format!(" --toolchain {t}"))
        .unwrap_or_default();
    s += &fenced(
        "sh",
        &format!("cargo xtask conformance --tier {tier}{tc} -- --exact {trial}"),
    );
    if tier == Tier::Gpu {
        s += "\nor on a GPU machine without Rust, with a bundle built here:\n\n";
        s += &fenced(
            "sh",
            &format!(
                "cargo xtask gpu-bundle        # here; then copy the checkout with .gpu-bundle/\n\
                 OUT=target/repro bash conformance/gpu-run.sh --tier gpu --exact {trial}   # there"
            ),
        );
    } else if tier == Tier::Static {
        s += "\n(the compile tier needs nvcc, not a GPU).\n";
    } else if tier == Tier::Library {
        s += "\n(the library tier needs a GPU and the release's programs, `cargo xtask library build`).\n";
    } else if tier == Tier::Sass {
        s += "\n(the machine-code tier needs the toolchain, `cargo xtask toolchain install`, not a GPU).\n";
    }
    s + "\n</div>\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backquotes_become_code() {
        assert_eq!(inline_code("a `b` c"), "a <code>b</code> c");
        assert_eq!(inline_code("a `b c"), "a `b c");
        assert_eq!(inline_code("plain"), "plain");
    }

    #[test]
    fn reproduce_names_the_tier_and_the_bundle_way() {
        let g = reproduce(&TrialId::gpu("sm_90", "r.a", "t"));
        assert!(
            g.contains("cargo xtask conformance --tier gpu -- --exact gpu/sm_90/r.a/t"),
            "{g}"
        );
        assert!(
            g.contains("bash conformance/gpu-run.sh --tier gpu --exact gpu/sm_90/r.a/t"),
            "{g}"
        );
        let s = reproduce(&TrialId::compile("r.a", "t"));
        assert!(
            s.contains("--tier static -- --exact static/r.a/t") && !s.contains("gpu-run"),
            "{s}"
        );
        let l = reproduce(
            &"lib/13.1/compute_80/merge_sort_keys/n1000-stress"
                .parse()
                .unwrap(),
        );
        assert!(
            l.contains(
                "cargo xtask conformance --tier library -- --exact lib/13.1/compute_80/merge_sort_keys/n1000-stress"
            ),
            "{l}"
        );
        let m = reproduce(&"sass/13.5/sm_90/r.a/t".parse().unwrap());
        assert!(
            m.contains("--tier sass --toolchain 13.5 -- --exact sass/13.5/sm_90/r.a/t"),
            "{m}"
        );
    }
}
