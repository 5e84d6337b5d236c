//! `gridcheck session` run as a user runs it, on a machine without a GPU:
//! the example session's dry run, its steps against the script it
//! replaced, every session file's steps against the commands and flags
//! they name, the campaign's session on the stand-in GPU, a session of its
//! own run, cut at a limit, resumed and packed, a step run again while it
//! has work left, and bad session files.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::{fresh_dir, gridcheck, one_program_campaign, root, text};

/// The campaign's session file run as on a GPU machine, on the stand-in
/// GPU: the `run` step, then the `leads` step, each a part that finds
/// nothing left, its results in the folder named (`--out`, after the
/// step's own flags: they win) and copied into the step's pack in $OUT.
#[test]
fn the_campaign_session_runs_its_parts_and_packs_their_results() {
    use gridcheck_campaign::FAKE_GPU;
    let dir = fresh_dir("campaign-session");
    one_program_campaign(&dir);
    let rules = dir.join("rules.json");
    std::fs::write(&rules, r#"{"rules": []}"#).unwrap();
    let (res, out) = (dir.join("c-0"), dir.join("out"));
    std::fs::create_dir_all(&out).unwrap();
    let work = "target/gridcheck-cli-campaign-session";
    let work_dir = root().join(work);
    let _ = std::fs::remove_dir_all(&work_dir);
    let (d, r) = (dir.display().to_string(), res.display().to_string());
    for step in ["run", "leads"] {
        let o = Command::new(env!("CARGO_BIN_EXE_gridcheck"))
            .args(["session", "lab/sessions/campaign.toml", "--work", work])
            .args([step, &d, "--out", &r, "--tuning", "none"])
            .current_dir(root())
            .env(FAKE_GPU, &rules)
            .env("OUT", &out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{step}: {}", text(&o));
        assert!(text(&o).contains("\"done\":true"), "{step}: {}", text(&o));
    }
    assert_eq!(
        std::fs::read_to_string(res.join("campaign.jsonl"))
            .unwrap()
            .lines()
            .count(),
        1
    );
    let packs: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let run_pack = packs
        .iter()
        .find(|p| p.starts_with("run-") && p.ends_with(".tar.xz"))
        .unwrap_or_else(|| panic!("{packs:?}"));
    let listed = Command::new("tar")
        .arg("tJf")
        .arg(out.join(run_pack))
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout).to_string();
    assert!(listed.contains("/c-0/summary.json"), "{listed}");
    let _ = std::fs::remove_dir_all(&work_dir);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_example_session_dry_runs_its_steps_filled_in() {
    let file = "lab/sessions/sensitivity-2.toml";
    let o = gridcheck(&[
        "session",
        file,
        "--dry-run",
        "suite",
        "b",
        "--shuffle",
        "2",
        "--",
        "watch",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(out.contains("== suite-b-shuffle-2 (limit 170 s)"), "{out}");
    assert!(
        out.contains(
            "conformance/gpu-run.sh -q --tier gpu --timeout 30 --model-timeout 120 --shuffle 2"
        ),
        "{out}"
    );
    assert!(out.contains("== watch (limit 420 s)"), "{out}");
    assert!(out.contains("--fresh-context"), "{out}");
    let o = gridcheck(&["session", file, "--dry-run", "suite"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("needs 1 argument"), "{}", text(&o));
    let o = gridcheck(&["session", file, "--dry-run", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("no step `nope`"), "{}", text(&o));
}

#[test]
fn the_example_session_holds_the_steps_of_the_script_it_replaced() {
    let s = gridcheck_cli::session::load(&root().join("lab/sessions/sensitivity-2.toml"))
        .expect("the session file loads");
    let names: Vec<&str> = s.steps.iter().map(|st| st.name.as_str()).collect();
    // The steps of lab/sessions/sensitivity-2.sh, in its order.
    assert_eq!(
        names,
        [
            "search", "suite", "mutants", "rates", "points", "choose", "watch", "alone", "campaign"
        ]
    );
    let limit = |n: &str| s.steps.iter().find(|st| st.name == n).unwrap().limit_s;
    // The script's own `timeout`s: search 420 s, mutants 300 s, points 200 s.
    assert_eq!(
        (limit("search"), limit("mutants"), limit("points")),
        (420, 300, 200)
    );
}

/// Every session file of the lab (a TOML file with `[[step]]`) loads, and
/// the steps it runs when none is named expand, placeholders filled,
/// without a GPU.
#[test]
fn every_session_file_loads_and_its_default_steps_expand() {
    use gridcheck_cli::session::{Values, invocations, plan_step};
    let dir = root().join("lab");
    let mut n = 0;
    for p in session_files() {
        let s = gridcheck_cli::session::load(&p).unwrap_or_else(|e| panic!("{e}"));
        let values = Values::new(&root(), &root().join(&s.work), true);
        let steps = match &s.default {
            Some(_) => invocations(&s, &[]).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
            None => continue,
        };
        assert!(!steps.is_empty(), "{}", p.display());
        for inv in &steps {
            let planned =
                plan_step(&s, inv, &values).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            assert!(!planned.commands.is_empty());
        }
        n += 1;
    }
    assert!(
        n >= 5,
        "{n} session files with default steps in {}",
        dir.display()
    );
}

/// Every step of every session file of the lab, given as many arguments
/// as it needs, expands without a GPU; each command of it that starts
/// `gridcheck` names one of its commands, a `gridcheck campaign` command
/// is one the campaign reads (its subcommand and flags, nothing run), and
/// a `gridcheck session FILE` names a session file that loads. The
/// campaign's own session file is among them, every step of it checked.
#[test]
fn every_session_step_expands_and_names_what_gridcheck_has() {
    use gridcheck_cli::session::{Invocation, Values, plan_step};
    let me = std::env::current_exe().unwrap().display().to_string();
    let mut commands = std::collections::BTreeSet::new();
    let mut campaign_steps = std::collections::BTreeSet::new();
    for p in session_files() {
        let s = gridcheck_cli::session::load(&p).unwrap_or_else(|e| panic!("{e}"));
        let values = Values::new(&root(), &root().join(&s.work), true);
        for st in &s.steps {
            let inv = Invocation {
                name: st.name.clone(),
                args: (1..=st.min_args).map(|i| format!("ARG{i}")).collect(),
            };
            let at = format!("{}: step `{}`", p.display(), st.name);
            let planned = plan_step(&s, &inv, &values).unwrap_or_else(|e| panic!("{at}: {e}"));
            for c in planned.commands.iter().filter(|c| c.argv[0] == me) {
                let words = &c.argv[1..];
                commands.insert(words[0].clone());
                match words[0].as_str() {
                    "campaign" => {
                        gridcheck_campaign::check_args(&words[1..])
                            .unwrap_or_else(|e| panic!("{at}: `{}`: {e}", words.join(" ")));
                        if p.ends_with("lab/sessions/campaign.toml") {
                            campaign_steps.insert(st.name.clone());
                        }
                    }
                    "session" => {
                        gridcheck_cli::session::load(&root().join(&words[1]))
                            .unwrap_or_else(|e| panic!("{at}: {e}"));
                    }
                    _ => {}
                }
            }
        }
    }
    for c in &commands {
        let o = gridcheck(&["help", c]);
        assert!(
            o.status.success(),
            "a session names `gridcheck {c}`: {}",
            text(&o)
        );
    }
    let want = ["leads", "merge", "old-leads", "plain", "run"];
    assert_eq!(campaign_steps.iter().collect::<Vec<_>>(), want);
}

/// Every session file of the lab: a TOML file with `[[step]]`.
fn session_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![root().join("lab")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "toml")
                && std::fs::read_to_string(&p).is_ok_and(|t| t.contains("[[step]]"))
            {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// A step whose command says it has work left (its `unfinished_on_exit`
/// code) is not finished: the session exits 1, nothing of it is packed,
/// and the next call runs it again, until it says it is done.
#[test]
fn a_step_with_work_left_runs_again_until_done() {
    let dir = fresh_dir("unfinished");
    let file = dir.join("s.toml");
    let work = "target/gridcheck-cli-unfinished-test";
    let count = dir.join("parts");
    std::fs::write(
        &file,
        format!(
            "work = \"{work}\"\n\
             [[step]]\nname = \"part\"\nlimit_s = 30\npack = [\"{{step}}\"]\n\
             run = [\n  {{ argv = [\"sh\", \"-c\", \"echo x >> {count}; echo made > {{step}}/r; \
             test $(wc -l < {count}) -ge 2 || exit 3\"], unfinished_on_exit = 3 }},\n  \
             [\"echo\", \"after it\"],\n]\n",
            count = count.display()
        ),
    )
    .unwrap();
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_gridcheck"))
            .args(["session", file.to_str().unwrap()])
            .current_dir(root())
            .env("OUT", &out)
            .output()
            .unwrap()
    };
    let work_dir = root().join(work);
    let _ = std::fs::remove_dir_all(&work_dir);
    let o = run();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("after it"),
        "the later commands ran: {}",
        text(&o)
    );
    assert!(!out.join("part.tar.xz").exists(), "packed unfinished");
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("session.json")).unwrap()).unwrap();
    assert_eq!(state["steps"]["part"]["finished"], false, "{state}");
    let o = run();
    assert!(o.status.success(), "{}", text(&o));
    assert!(out.join("part.tar.xz").is_file());
    let o = run();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("== part: finished before"),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read_to_string(&count).unwrap().lines().count(), 2);
    let _ = std::fs::remove_dir_all(&work_dir);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A session of its own: a step that finishes, one cut at its limit; run
/// again, the first is skipped and the second runs again; the packs land
/// in $OUT.
#[test]
fn a_session_is_limited_resumed_and_packed() {
    let dir = std::env::temp_dir().join(format!("gridcheck-cli-session-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s.toml");
    let work = "target/gridcheck-cli-session-test";
    let flag = dir.join("second-time");
    std::fs::write(
        &file,
        format!(
            "work = \"{work}\"\n\
             [[step]]\nname = \"first\"\nlimit_s = 30\npack = [\"{{step}}\"]\n\
             run = [[\"sh\", \"-c\", \"echo made > {{step}}/made.txt; echo the first ran\"]]\n\
             [[step]]\nname = \"slow\"\nlimit_s = 1\n\
             run = [[\"sh\", \"-c\", \"test -e {flag} || exec sleep 30\"]]\n",
            flag = flag.display()
        ),
    )
    .unwrap();
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_gridcheck"))
            .args(["session", file.to_str().unwrap()])
            .current_dir(root())
            .env("OUT", &out)
            .output()
            .unwrap()
    };
    let work_dir = root().join(work);
    let _ = std::fs::remove_dir_all(&work_dir);
    let o = run();
    assert_eq!(
        o.status.code(),
        Some(1),
        "the slow step was cut: {}",
        text(&o)
    );
    assert!(text(&o).contains("the first ran"), "{}", text(&o));
    assert!(out.join("first.tar.xz").is_file() && out.join("session.json").is_file());
    let state = std::fs::read_to_string(out.join("session.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&state).unwrap();
    assert_eq!(v["steps"]["first"]["finished"], true, "{v}");
    assert_eq!(v["steps"]["slow"]["finished"], false, "{v}");
    std::fs::write(&flag, "").unwrap();
    let o = run();
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("== first: finished before") && !t.contains("the first ran"),
        "{t}"
    );
    assert!(t.contains("== slow: finished"), "{t}");
    let _ = std::fs::remove_dir_all(&work_dir);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A bad session file: exit 2 and an error naming the file, the line and
/// the field, before any step runs (no work folder made).
#[test]
fn a_bad_session_file_is_named_with_its_line_and_field() {
    let dir = fresh_dir("bad-session");
    let work = "target/gridcheck-cli-bad-session";
    let good = format!(
        "work = \"{work}\"\n[[step]]\nname = \"a\"\nlimit_s = 5\nrun = [[\"touch\", \"{{step}}/ran\"]]\n"
    );
    let cases = [
        // (what is changed, to what, the line and field the error names)
        ("limit_s = 5", "limit_s = 0", "s.toml:4: step `a`: limit_s"),
        (
            "{step}/ran",
            "{stpe}/ran",
            "s.toml:5: step `a`: `{stpe}/ran`",
        ),
        ("limit_s = 5", "limit_secs = 5", "line 4"),
    ];
    for (from, to, want) in cases {
        let file = dir.join("s.toml");
        std::fs::write(&file, good.replace(from, to)).unwrap();
        let o = gridcheck(&["session", file.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let t = text(&o);
        assert!(t.contains(want), "{to}: {t}");
        if to.starts_with("limit_secs") {
            assert!(t.contains("s.toml") && t.contains("`limit_secs`"), "{t}");
        }
        assert!(!root().join(work).exists(), "a step ran: {t}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
