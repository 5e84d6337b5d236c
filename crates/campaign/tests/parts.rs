//! A campaign run in parts of bounded time, as a GPU session runs it
//! (`lab/sessions/campaign.toml`), without a GPU or nvcc: `run` and `leads`
//! with `--part` on the stand-in GPU (the last line `status`'s, exit 3
//! while work is left, the results copied where a GPU machine gives files
//! back from), and `plain RES` with a stand-in nvcc whose "programs" are
//! shell scripts: instances swept, calls left out, a build that fails, a
//! run past its limit, resumed, and bounded by its budget.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{campaign, fresh, lines, program};
use gridcheck_campaign::{batch_dir, write_batch};
use serde_json::Value;

/// The last line of `text` that is JSON.
fn last_json(text: &str) -> Value {
    text.lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no JSON line in:\n{text}"))
}

#[test]
fn a_part_says_what_is_left_and_gives_its_results_back() {
    let (dir, rules) = fresh(
        "campaign-parts",
        r#"{"rules": [{"thread_ops": ["record", "record"], "outcome": "hang"}]}"#,
    );
    let programs = [
        program("c-0", "store x 1, launch k1 tail"),
        program("c-1", "store x 1, record e1, record e2, launch k1"),
    ];
    write_batch(&batch_dir(&dir, 0), &programs).unwrap();
    let (out, back) = (dir.join("fuzz"), dir.join("back"));
    let (d, o, b) = (
        dir.display().to_string(),
        out.display().to_string(),
        back.display().to_string(),
    );
    let part = |phase: &str, extra: &[&str]| {
        let mut args = vec![phase, &d, "--out", &o, "--part", "--copy-to", &b];
        args.extend(extra);
        campaign(&rules, &args)
    };
    // No budget: nothing reached, work left (exit 3), the results copied.
    let (code, text) = part("run", &["--budget", "0"]);
    assert_eq!(code, Some(3), "{text}");
    let s = last_json(&text);
    assert_eq!(
        (&s["phase"], &s["left"], &s["done"]),
        (&"run".into(), &2.into(), &false.into()),
        "{s}"
    );
    assert_eq!(s["results"], o.as_str());
    assert_eq!(lines(&back.join("fuzz/campaign.jsonl")).len(), 2);
    // Resumed: every program reached; done.
    let (code, text) = part("run", &["--resume"]);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(last_json(&text)["done"], true, "{text}");
    // `status` reads the same from the files: the run done, the leads not
    // begun (the hang's finding open), so the campaign not done.
    let status = |phase: &[&str]| {
        let mut args = vec!["status", &o];
        args.extend(phase);
        let (code, text) = gridcheck_campaign(&args, &[]);
        (code, last_json(&text))
    };
    let (code, s) = status(&["--phase", "run"]);
    assert_eq!((code, &s["left"]), (Some(0), &0.into()), "{s}");
    let (code, s) = status(&[]);
    assert_eq!(
        (code, &s["phase"], &s["left"]),
        (Some(3), &"campaign".into(), &1.into()),
        "{s}"
    );
    let (code, text) = part("leads", &[]);
    assert_eq!(code, Some(0), "{text}");
    let s = last_json(&text);
    assert_eq!(
        (&s["phase"], &s["done"]),
        (&"leads".into(), &true.into()),
        "{s}"
    );
    assert_eq!(
        lines(&back.join("fuzz/findings.jsonl"))[0]["ended"],
        "known"
    );
    // Without --part, a phase's exit code is the campaign's own (1: a
    // finding), and no status line.
    let (code, text) = campaign(&rules, &["leads", &d, "--out", &o]);
    assert_eq!(code, Some(1), "{text}");
    assert!(!text.contains("\"done\""), "{text}");
    // Bad input: the status names it (exit 2).
    std::fs::write(out.join("findings.jsonl"), "{\"class\": 7}\n").unwrap();
    let (code, text) = gridcheck_campaign(&["status", &o, "--phase", "leads"], &[]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("findings.jsonl:1:"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn write_exe(path: &Path, body: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A stand-in nvcc (with the device runtime beside it, as `find_nvcc`
/// wants): `-o EXE` gets the `.cu` itself, a shell script, unless it says
/// `#error`; each build is counted in `builds`.
fn stand_in_nvcc(dir: &Path) -> PathBuf {
    let nvcc = dir.join("cuda/bin/nvcc");
    let builds = dir.join("builds");
    write_exe(
        &nvcc,
        &format!(
            r#"if [ "$1" = --version ]; then echo "Cuda compilation tools, release 13.0, V13.0.88"; exit 0; fi
out=; src=
while [ $# -gt 0 ]; do case "$1" in -o) out=$2; shift;; *.cu) src=$1;; esac; shift; done
echo "$src" >> {builds}
if grep -q '#error' "$src"; then echo "$src: error: no such call" >&2; exit 1; fi
cp "$src" "$out" && chmod +x "$out""#,
            builds = builds.display()
        ),
    );
    std::fs::create_dir_all(dir.join("cuda/lib")).unwrap();
    std::fs::write(dir.join("cuda/lib/libcudadevrt.a"), "").unwrap();
    nvcc
}

/// A plain program's line.
fn line(n: &str, result: &str, failures: &str) -> String {
    format!(
        r#"echo '{{"program": "p", "instances": '{n}', "launches": 20, "drop": '$3', "result": "{result}", "failures": [{failures}]}}'"#
    )
}

/// The stand-in programs: each prints its lines as `plain.rs`'s do.
fn stand_in_findings(res: &Path) {
    let list = r#"[ "$1" = list ] && { echo '[{"call": 0, "label": "a", "droppable": false}, {"call": 1, "label": "b", "droppable": true}, {"call": 2, "label": "c", "droppable": true}]'; exit 0; }"#;
    let wait = r#"[ "$PLAIN_WAIT_S" = 2 ] || { echo "PLAIN_WAIT_S is '$PLAIN_WAIT_S'"; exit 9; }"#;
    let completed = line("$1", "completed", "");
    let hung = line("$1", "hung", "");
    let failed = line(
        "$1",
        "completed",
        r#"{"call": 1, "count": 2, "first": "cudaErrorLaunchPendingCountExceeded"}"#,
    );
    let f = res.join("findings");
    // Hangs from 32 instances on, unless call 2 is left out.
    std::fs::create_dir_all(&f).unwrap();
    std::fs::write(
        f.join("000-hang.cu"),
        format!("#!/bin/sh\n{wait}\n{list}\n{completed}\nif [ $1 -ge 32 ] && [ $3 != 2 ]; then {hung}; exit 3; fi\n"),
    )
    .unwrap();
    // A call fails from 8 instances on.
    std::fs::write(
        f.join("001-launch-error.cu"),
        format!(
            "#!/bin/sh\n{wait}\n{list}\nif [ $1 -ge 8 ]; then {failed}; else {completed}; fi\n"
        ),
    )
    .unwrap();
    // Never shown; and one that does not build.
    std::fs::write(
        f.join("002-closed.cu"),
        format!("#!/bin/sh\n{wait}\n{list}\n{completed}\n"),
    )
    .unwrap();
    std::fs::write(f.join("003-bad.cu"), "#error not a program\n").unwrap();
    // Stuck past the run's limit at 512 instances.
    std::fs::write(
        f.join("004-stuck.cu"),
        format!("#!/bin/sh\n{wait}\n{list}\n[ $1 = 512 ] && exec sleep 30\n{completed}\n"),
    )
    .unwrap();
    for e in std::fs::read_dir(&f).unwrap().flatten() {
        std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
}

/// `gridcheck-campaign ARGS` with `env`: exit code and output.
fn gridcheck_campaign(args: &[&str], env: &[(&str, &Path)]) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_gridcheck-campaign"))
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.code(), text)
}

fn plain(nvcc: &Path, args: &[&str]) -> (Option<i32>, String) {
    let mut all = vec!["plain"];
    all.extend(args);
    gridcheck_campaign(&all, &[("GRIDCHECK_NVCC", nvcc)])
}

/// The runs of a log: (binary, instances, drop, shown).
fn runs(log: &[Value]) -> Vec<(String, u64, i64, bool)> {
    log.iter()
        .filter(|l| l.get("binary").is_some())
        .map(|l| {
            (
                l["binary"].as_str().unwrap().to_string(),
                l["instances"].as_u64().unwrap(),
                l["drop"].as_i64().unwrap(),
                l["shown"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[test]
fn plain_programs_are_swept_their_calls_left_out_resumed_and_bounded() {
    let (dir, _) = fresh("campaign-plain", "{}");
    let nvcc = stand_in_nvcc(&dir);
    let res = dir.join("fuzz");
    stand_in_findings(&res);
    let bins = dir.join("bins");
    // An installed toolchain's build of the hang, beside this machine's.
    let other = bins.join("fuzz/000-hang-nvcc-13.5");
    let other_body = format!(
        "{}\n[ \"$1\" = 512 ] && exit 3\n",
        line("$1", "completed", "")
    );
    write_exe(&other, &other_body);
    let (r, b) = (res.display().to_string(), bins.display().to_string());
    let back = dir.join("back");
    let args = [
        "--bins",
        &b,
        "--run-timeout",
        "1",
        "--copy-to",
        back.to_str().unwrap(),
    ];
    // A budget of 0: nothing begun, every finding left (exit 3).
    let mut with_budget = vec![r.as_str(), "--budget", "0"];
    with_budget.extend(args);
    let (code, text) = plain(&nvcc, &with_budget);
    assert_eq!(code, Some(3), "{text}");
    assert_eq!(
        (
            last_json(&text)["left"].as_u64(),
            last_json(&text)["done"].as_bool()
        ),
        (Some(5), Some(false))
    );
    let mut all = vec![r.as_str()];
    all.extend(args);
    let (code, text) = plain(&nvcc, &all);
    assert_eq!(code, Some(0), "{text}");
    let s = last_json(&text);
    assert_eq!(
        (&s["phase"], &s["left"], &s["done"]),
        (&"plain".into(), &0.into(), &true.into()),
        "{s}"
    );
    let log = |f: &str| lines(&res.join("plain").join(format!("{f}.jsonl")));
    // The hang: shown from 32 instances by this build; the toolchain's
    // build swept too; each droppable call left out at 32 (call 2's
    // absence ends the hang).
    let hang = log("000-hang");
    let mine: Vec<_> = runs(&hang)
        .into_iter()
        .filter(|r| r.0 == "000-hang")
        .collect();
    let want = [
        (1, -1, false),
        (8, -1, false),
        (32, -1, true),
        (64, -1, true),
        (512, -1, true),
        (32, 1, true),
        (32, 2, false),
    ];
    let got: Vec<(u64, i64, bool)> = mine.iter().map(|r| (r.1, r.2, r.3)).collect();
    assert_eq!(got, want, "{hang:?}");
    let theirs: Vec<_> = runs(&hang)
        .into_iter()
        .filter(|r| r.0 == "000-hang-nvcc-13.5")
        .collect();
    assert_eq!(theirs.len(), 5, "{hang:?}");
    assert!(theirs.iter().all(|r| r.2 == -1) && theirs[4].3, "{hang:?}");
    let done = hang.last().unwrap();
    assert_eq!(
        (&done["shown_at_instances"], &done["done"]),
        (&32.into(), &true.into())
    );
    assert_eq!(
        hang[0]["lines"][0]["program"], "p",
        "the program's lines kept"
    );
    // A failed call shows it; never shown: no call left out.
    assert_eq!(
        log("001-launch-error").last().unwrap()["shown_at_instances"],
        8
    );
    let closed = log("002-closed");
    assert_eq!(closed.last().unwrap()["shown_at_instances"], Value::Null);
    assert!(
        runs(&closed).iter().all(|r| r.2 == -1 && !r.3),
        "{closed:?}"
    );
    // A build that failed: done, with nvcc's words.
    let bad = log("003-bad");
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(
        bad[0]["error"].as_str().unwrap().contains("no such call"),
        "{bad:?}"
    );
    // A run past its limit: killed, and shown.
    let stuck = log("004-stuck");
    let at_512 = stuck
        .iter()
        .find(|l| l["instances"] == 512 && l["drop"] == -1)
        .unwrap();
    assert_eq!(
        (&at_512["timed_out"], &at_512["exit"], &at_512["shown"]),
        (&true.into(), &Value::Null, &true.into())
    );
    assert_eq!(stuck.last().unwrap()["shown_at_instances"], 512);
    assert!(
        back.join("fuzz/plain/000-hang.jsonl").is_file(),
        "copied back"
    );
    // Run again: nothing is built or run again.
    let builds = std::fs::read_to_string(dir.join("builds")).unwrap();
    let (code, text) = plain(&nvcc, &all);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(std::fs::read_to_string(dir.join("builds")).unwrap(), builds);
    assert_eq!(log("000-hang"), hang);
    // A log cut before its `done` line is run again from its start.
    let cut: Vec<String> = hang[..3].iter().map(|l| l.to_string()).collect();
    std::fs::write(
        res.join("plain/000-hang.jsonl"),
        cut.join("\n") + "\n{\"binary\": \"000-h",
    )
    .unwrap();
    let (code, text) = plain(&nvcc, &all);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(log("000-hang"), hang);
    // Bad input: named, exit 2.
    let (code, text) = plain(&nvcc, &[dir.join("nope").to_str().unwrap()]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("nope: no results folder"), "{text}");
    let (code, text) = plain(&nvcc, &[&r, "--budgte", "3"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("`--budgte`"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
