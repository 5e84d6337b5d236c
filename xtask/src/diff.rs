//! `cargo xtask report diff BASE NEW`: what changed between two runs. The
//! logic is `gridcheck_report::run_diff` (pure) and the rendering
//! `gridcheck_docs::diff_report`; this reads the inputs and chooses the
//! exit code: 0 nothing that fails, 1 a regression (or what `--fail-on`
//! names), 2 an input that cannot be used.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gridcheck_report::run_diff::{FailOn, diff_runs_with};
use gridcheck_report::runs::short_id;
use gridcheck_report::spread::Spread;
use gridcheck_report::{RunChoice, RunRecords};

use crate::report::{emit, spec_if_it_loads};

pub const HELP: &str = "usage: cargo xtask report diff BASE NEW [--json] [--fail-on regression|change|never] [--out FILE]
                               [--spread FILE | --no-spread]
       cargo xtask report diff --library-release OLD NEW RESULTS [--out FILE]

What changed from the run BASE to the run NEW.

BASE and NEW: a results file, as written or compressed (.jsonl.gz), or a
folder holding one (records/<gpu>/<date>/, which keeps results.jsonl.gz). A
file the harness appended to several times holds several runs: the latest
is taken (the run whose first record comes last), or name one with FILE@RUN
(the run id, or its end or start: the part a merge or summary shows). Records written before runs were recorded belong
to synthetic legacy-... runs.

Reported, regressions first:
  regressions     a status worse than before, in the order pass < xfail <
                  quality-warning < not-run/not-supported < fail/timeout/crash/
                  oracle-conflict; or a state the model cannot reach observed
                  in NEW and not in BASE, whatever the status
  known discrepancies no longer reproducing
                  an xfail in BASE that NEW passed (or failed only because it
                  passed while listed)
  within a fact that reproduces only sometimes
                  a trial of a known fact with reproduces = sometimes
                  (conformance/facts/) that showed its behaviour in one run
                  and not in the other, either way: not a regression
  fixes, other status changes (fail to crash)
  histogram changes
                  an allowed state seen in BASE and not in NEW; the condition's
                  rate (positive / instances) moving with |z| >= 4 in a pooled
                  two-proportion test and by a factor of at least 2 (GPU runs
                  vary beyond binomial sampling: both are required)
  trials added or removed, and the two environments side by side (run id,
  start, GPU, driver, nvcc, devices, commit, tuning)

The run-to-run spread: when conformance/spread/<gpu-slug>.json exists for
NEW's GPU (cargo xtask report spread makes it from several runs), a rate
change is a regression only beyond it (outside the baseline's range and
|z| >= 4 against its nearer end), an allowed state no longer seen is a
regression only when no baseline run missed it and NEW's escalation did not
provoke it, and a status the baseline saw for the trial is within it (not
a regression). Two runs that differ as the baseline's runs do give none.

With --library-release, two CCCL releases of one run (RESULTS, as BASE
above): the library tier's cases of OLD (lib/OLD/<target>/<algorithm>/<case>)
against the same target, algorithm and case of NEW: what NEW fixed, what it
broke, what fails in both, cases of one release only. Exit 1 when NEW broke
a case OLD passed.

Options:
  --json          the diff as JSON (every trial; Markdown groups a test's rules)
  --fail-on WHEN  exit 1 on: regression (default), change (anything above), never
  --out FILE      write the report to FILE instead of stdout
  --spread FILE   judge against this baseline instead of NEW's GPU's
  --no-spread     judge against no baseline

Exit status: 0 no failure, 1 a failure per --fail-on, 2 an input that cannot
be used (unreadable, not records: the file and line are named; no such run).";

#[derive(Debug, PartialEq)]
struct Args {
    base: String,
    new: String,
    json: bool,
    fail_on: FailOn,
    out: Option<PathBuf>,
    /// `--spread FILE`: `Some(Some(f))`; `--no-spread`: `Some(None)`;
    /// neither: NEW's GPU's baseline if there is one.
    spread: Option<Option<PathBuf>>,
}

fn parse(args: &[String]) -> Result<Option<Args>, String> {
    let (mut files, mut json, mut fail_on, mut out) = (Vec::new(), false, FailOn::default(), None);
    let mut spread = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "--json" => json = true,
            "--fail-on" => fail_on = it.next().ok_or("--fail-on needs a value")?.parse()?,
            "--out" => out = Some(PathBuf::from(it.next().ok_or("--out needs a file")?)),
            "--spread" => {
                spread = Some(Some(PathBuf::from(
                    it.next().ok_or("--spread needs a file")?,
                )))
            }
            "--no-spread" => spread = Some(None),
            f if f.starts_with("--") => return Err(format!("unknown option `{f}`")),
            f => files.push(f.to_string()),
        }
    }
    match <[String; 2]>::try_from(files) {
        Ok([base, new]) => Ok(Some(Args {
            base,
            new,
            json,
            fail_on,
            out,
            spread,
        })),
        Err(v) => Err(format!("two inputs needed, BASE and NEW; got {}", v.len())),
    }
}

/// An input: its results file and which run of it.
fn input(arg: &str) -> (PathBuf, RunChoice) {
    let (path, run) = match arg.rsplit_once('@') {
        Some((p, id)) if !Path::new(arg).exists() && !id.contains('/') && !id.is_empty() => {
            (p, RunChoice::Id(id.to_string()))
        }
        _ => (arg, RunChoice::Latest),
    };
    (crate::report::results_of(Path::new(path)), run)
}

/// One run of an input, or why the input cannot be used. An incomplete
/// last line (a killed run) is a warning; any other line that is not a
/// record is an error naming the file and line.
fn load(arg: &str, spec: Option<&gridcheck_spec::Spec>) -> Result<(String, RunRecords), String> {
    let (file, choice) = input(arg);
    let name = file.display().to_string();
    let bytes = gridcheck_report::read_stored(&file).map_err(|e| format!("cannot read {e}"))?;
    let mut read = gridcheck_report::read_results(&bytes);
    for s in &read.skipped {
        if s.reason.starts_with("an incomplete last line") {
            eprintln!("warning: {name}:{}: skipped: {}", s.line, s.reason);
        } else {
            return Err(format!("{name}:{}: {}", s.line, s.reason));
        }
    }
    if let Some(spec) = spec {
        gridcheck_report::under_current_names(&mut read.records, spec);
    }
    let all = gridcheck_report::split_runs(read.records);
    let count = all.len();
    let run = choice
        .pick(all)
        .map_err(|e| format!("{name}: {e}"))?
        .remove(0);
    if count > 1 && choice == RunChoice::Latest {
        eprintln!(
            "note: {name} holds {count} runs; comparing the latest, {} ({name}@RUN chooses another)",
            run.id
        );
    }
    Ok((format!("{name}@{}", short_id(&run.id)), run))
}

/// The spread baseline to judge NEW by: the one named, none, or by
/// default NEW's GPU's (`conformance/spread/<gpu-slug>.json`) if it exists.
fn baseline(
    chosen: &Option<Option<PathBuf>>,
    new: &[gridcheck_report::TrialRecord],
) -> Result<Option<Spread>, String> {
    let path = match chosen {
        Some(p) => p.clone(),
        None => new
            .iter()
            .find_map(|r| r.environment.as_ref())
            .map(|e| crate::spread::baseline_path(&crate::root(), &e.gpu))
            .filter(|p| p.is_file()),
    };
    path.map(|p| crate::spread::load(&p)).transpose()
}

/// The Markdown diff of two results files (their latest runs), as `report
/// diff BASE NEW` prints it, the files named relative to `root` (as a
/// reader of the checkout finds them): for `record`'s toolchain variants.
pub fn markdown_between(base: &Path, new: &Path, root: &Path) -> Result<String, String> {
    let spec = spec_if_it_loads();
    let named = |p: &Path| -> Result<(String, RunRecords), String> {
        let (name, run) = load(&p.display().to_string(), spec.as_ref())?;
        let prefix = format!("{}/", root.display());
        Ok((
            name.strip_prefix(&prefix)
                .map(str::to_string)
                .unwrap_or(name),
            run,
        ))
    };
    let (base_name, base) = named(base)?;
    let (new_name, new) = named(new)?;
    let spread = baseline(&None, &new.records)?;
    let d = diff_runs_with(&base.records, &new.records, spread.as_ref())
        .within_facts(&facts()?, spec.as_ref());
    Ok(gridcheck_docs::diff_report::markdown(
        &d, &base_name, &new_name,
    ))
}

/// `--library-release OLD NEW RESULTS [--out FILE]`: the diff of two CCCL
/// releases within one run (`gridcheck_report::release_diff`).
fn library_releases(args: &[String]) -> ExitCode {
    let mut rest = Vec::new();
    let mut out = None;
    let mut it = args.iter().filter(|a| *a != "--library-release");
    while let Some(a) = it.next() {
        match a.as_str() {
            "--out" => out = it.next().map(PathBuf::from),
            _ => rest.push(a.clone()),
        }
    }
    let Ok([old, new, input]) = <[String; 3]>::try_from(rest) else {
        eprintln!(
            "error: --library-release takes OLD NEW RESULTS (two CCCL releases and a run)\n\n{HELP}"
        );
        return ExitCode::from(2);
    };
    let (name, run) = match load(&input, None) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let d = gridcheck_report::release_diff(&run.records, &old, &new);
    let cases = d.fixed.len() + d.broke.len() + d.still_failing.len() + d.other.len() + d.same;
    if cases == 0 && d.only_old.is_empty() && d.only_new.is_empty() {
        eprintln!("error: {name} holds no library trial of CCCL {old} or {new}");
        return ExitCode::from(2);
    }
    if let Err(e) = emit(&out, &format!("{name}\n{}", d.text())) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    if d.regressed() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The checkout's facts: a trial of one that reproduces only sometimes,
/// showing it in one run and not the other, is within the fact
/// (`RunDiff::within_facts`).
fn facts() -> Result<gridcheck_report::Facts, String> {
    let root = crate::root();
    gridcheck_report::Facts::load_all(&root.join(gridcheck_report::FACTS_DIR), &root)
}

pub fn run(args: &[String]) -> ExitCode {
    if args.iter().any(|a| a == "--library-release") {
        return library_releases(args);
    }
    let a = match parse(args) {
        Ok(Some(a)) => a,
        Ok(None) => {
            println!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}\n\n{HELP}");
            return ExitCode::from(2);
        }
    };
    let spec = spec_if_it_loads();
    let loaded = load(&a.base, spec.as_ref()).and_then(|b| Ok((b, load(&a.new, spec.as_ref())?)));
    let ((base_name, base), (new_name, new)) = match loaded {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let d = match baseline(&a.spread, &new.records).and_then(|spread| {
        Ok(diff_runs_with(&base.records, &new.records, spread.as_ref())
            .within_facts(&facts()?, spec.as_ref()))
    }) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let fails = d.fails(a.fail_on);
    let text = if a.json {
        gridcheck_docs::diff_report::json(&d, &base_name, &new_name, fails) + "\n"
    } else {
        gridcheck_docs::diff_report::markdown(&d, &base_name, &new_name)
    };
    if let Err(e) = emit(&a.out, &text) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    if fails {
        eprintln!(
            "report diff: {} regression(s), {} change(s) in all (--fail-on decides the exit status)",
            d.regressions(),
            d.status_changes.len() + d.histogram_changes.len() + d.added.len() + d.removed.len()
        );
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Result<Option<Args>, String> {
        parse(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn arguments() {
        let a = args(&["a", "b", "--json", "--fail-on", "change"])
            .unwrap()
            .unwrap();
        assert_eq!(
            (a.base.as_str(), a.new.as_str(), a.json, a.fail_on),
            ("a", "b", true, FailOn::Change)
        );
        assert_eq!(args(&["--help"]).unwrap(), None);
        assert!(args(&["a"]).unwrap_err().contains("got 1"));
        assert!(args(&["a", "b", "c"]).unwrap_err().contains("got 3"));
        assert!(
            args(&["a", "b", "--fail-on", "x"])
                .unwrap_err()
                .contains("regression, change or never")
        );
        assert!(
            args(&["a", "b", "--bogus"])
                .unwrap_err()
                .contains("--bogus")
        );
        assert_eq!(
            input("x/r.jsonl@3fa9"),
            (PathBuf::from("x/r.jsonl"), RunChoice::Id("3fa9".into()))
        );
        assert_eq!(
            input("x/r.jsonl"),
            (PathBuf::from("x/r.jsonl"), RunChoice::Latest)
        );
        // A folder is its results.jsonl, or the compressed one a recorded
        // run keeps.
        let (f, _) = input(env!("CARGO_MANIFEST_DIR"));
        assert!(f.ends_with("results.jsonl"), "{}", f.display());
        let dir = std::env::temp_dir().join(format!("gc-diff-folder-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("results.jsonl.gz"), gridcheck_report::gzip(b"")).unwrap();
        let (f, _) = input(&dir.display().to_string());
        assert_eq!(f, dir.join("results.jsonl.gz"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The command end to end: exit 0 on identical runs, 1 on a pass
    /// turned fail (the report names the trial), 0 with `--fail-on never`,
    /// 2 on an input that is not records.
    #[test]
    fn exit_codes() {
        let dir = std::env::temp_dir().join(format!("gridcheck-diff-exit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let line = |status: &str| {
            format!(
                r#"{{"trial":"model/cdp2.x/t","tier":"model","rule":"cdp2.x","test":"t","status":"{status}","message":"m","run_id":"r-{status}"}}"#
            ) + "\n"
        };
        let (base, new, bad, out) = (
            dir.join("base.jsonl"),
            dir.join("new.jsonl"),
            dir.join("bad.jsonl"),
            dir.join("out.md"),
        );
        std::fs::write(&base, line("pass")).unwrap();
        std::fs::write(&new, line("fail")).unwrap();
        std::fs::write(&bad, "{\n").unwrap();
        let s = |p: &Path| p.display().to_string();
        let code = |args: &[String]| run(args);
        let o = ["--out".to_string(), s(&out)];
        assert_eq!(
            code(&[s(&base), s(&base), o[0].clone(), o[1].clone()]),
            ExitCode::SUCCESS
        );
        assert!(
            std::fs::read_to_string(&out)
                .unwrap()
                .contains("**No change**")
        );
        assert_eq!(
            code(&[s(&base), s(&new), o[0].clone(), o[1].clone()]),
            ExitCode::FAILURE
        );
        let md = std::fs::read_to_string(&out).unwrap();
        assert!(
            md.contains("| `model/cdp2.x/t` | pass | fail | m |"),
            "{md}"
        );
        let never = [
            s(&base),
            s(&new),
            "--fail-on".into(),
            "never".into(),
            o[0].clone(),
            o[1].clone(),
        ];
        assert_eq!(code(&never), ExitCode::SUCCESS);
        // NEW compressed, as a recorded run keeps it: the same regression.
        let new_gz = dir.join("new.jsonl.gz");
        std::fs::write(&new_gz, gridcheck_report::gzip(line("fail").as_bytes())).unwrap();
        assert_eq!(
            code(&[s(&base), s(&new_gz), o[0].clone(), o[1].clone()]),
            ExitCode::FAILURE
        );
        assert_eq!(code(&[s(&base), s(&bad)]), ExitCode::from(2));
        assert_eq!(code(&[s(&base)]), ExitCode::from(2));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unusable_inputs_name_the_file_and_line() {
        let dir = std::env::temp_dir().join(format!("gridcheck-diff-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = r#"{"trial":"model/a/b","tier":"model","rule":"a","test":"b","status":"pass","message":"m"}"#;
        let bad = dir.join("bad.jsonl");
        std::fs::write(&bad, format!("{good}\nnot json\n")).unwrap();
        let e = load(bad.to_str().unwrap(), None).unwrap_err();
        assert!(e.contains("bad.jsonl:2: not a trial record"), "{e}");
        let cut = dir.join("cut.jsonl");
        std::fs::write(&cut, format!("{good}\n{{\"tri")).unwrap();
        assert_eq!(
            load(cut.to_str().unwrap(), None).unwrap().1.records.len(),
            1
        );
        let empty = dir.join("empty.jsonl");
        std::fs::write(&empty, "").unwrap();
        assert!(
            load(empty.to_str().unwrap(), None)
                .unwrap_err()
                .contains("no trial record")
        );
        let e = load(&format!("{}@nope", cut.display()), None).unwrap_err();
        assert!(e.contains("no run `nope`"), "{e}");
        assert!(
            load("/nonexistent/r.jsonl", None)
                .unwrap_err()
                .contains("cannot read /nonexistent/r.jsonl")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Two CCCL releases of one run: what the newer fixed and broke; exit
    /// 1 when it broke a case, 2 when the run has neither release.
    #[test]
    fn two_library_releases_of_one_run() {
        use gridcheck_report::{Status, TrialId, TrialRecord};
        let dir = std::env::temp_dir().join(format!("gridcheck-diff-lib-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let rec = |release: &str, case: &str, status| {
            let mut r = TrialRecord::new(
                TrialId::library(release, "sm_90", "merge_sort_keys", case),
                status,
                "m",
            );
            r.run_id = Some("run1".into());
            r.to_json_line()
        };
        let results = dir.join("results.jsonl");
        let lines = [
            rec("13.0", "n1000-stress", Status::Fail),
            rec("13.3", "n1000-stress", Status::Pass),
            rec("13.0", "n1000-quiet", Status::Pass),
            rec("13.3", "n1000-quiet", Status::Fail),
        ];
        std::fs::write(&results, lines.join("\n") + "\n").unwrap();
        let out = dir.join("diff.txt");
        let code = |a: &[&str]| {
            let mut v: Vec<String> = a.iter().map(|s| s.to_string()).collect();
            v.extend(["--out".to_string(), out.display().to_string()]);
            run(&v)
        };
        let r = results.display().to_string();
        assert_eq!(
            code(&["--library-release", "13.0", "13.3", &r]),
            ExitCode::FAILURE
        );
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(
            text.contains("CCCL 13.3 against 13.0: 1 fixed, 1 broken"),
            "{text}"
        );
        assert!(
            text.contains(
                "fixed in the newer release: lib/13.3/sm_90/merge_sort_keys/n1000-stress"
            ),
            "{text}"
        );
        assert_eq!(
            code(&["--library-release", "12.0", "12.1", &r]),
            ExitCode::from(2)
        );
        assert_eq!(code(&["--library-release", "13.0", &r]), ExitCode::from(2));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
