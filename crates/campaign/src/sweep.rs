//! `gridcheck-campaign plain RES`: each finding's plain program of a
//! results folder (`RES/findings/NNN-*.cu`, written by the leads from
//! `plain.rs`) built with this machine's nvcc ([`build`]) and run on its GPU
//! with `PLAIN_WAIT_S=2`, [`LAUNCHES`] launches a run, each run under a
//! time limit: at every instance count of [`INSTANCES`], by this build and
//! by each installed toolchain's (`cargo xtask campaign plain-toolchains`
//! put them beside it: [`binary`]); then, at the fewest instances at which
//! this build showed the finding, once with each droppable call left out
//! (`PROG list` names the calls). A run shows the finding when the program
//! hung (exit 3, or killed at the limit), a launch failed, or a call
//! failed.
//!
//! `RES/plain/<finding>.jsonl` holds a line a run (the binary, instances,
//! call dropped, exit code, the program's JSON lines) and a last line
//! `{"finding", "shown_at_instances", "done": true}` (with `error` when
//! nvcc failed or `list` did not answer); a finding whose log ends so is
//! not run again, one without that line is run again from the start, and
//! a finding is begun only while the part's `--budget` lasts.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use gridcheck_toolchain::Nvcc;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::campaign::append_line;

/// The instance counts a plain program runs at, fewest first.
pub const INSTANCES: [u32; 5] = [1, 8, 32, 64, 512];
/// Launches of each of its programs a run.
pub const LAUNCHES: u32 = 20;
/// Seconds a launch may take before the program calls it hung.
const WAIT_S: &str = "2";
/// How much of a run's other output is kept.
const OUTPUT_KEEP: usize = 2000;

pub const USAGE: &str =
    "usage: gridcheck-campaign plain RES [--bins DIR] [--arch ARCH] [--budget S]
                               [--run-timeout S] [--nvcc-timeout S] [--copy-to DIR]
Each finding's plain program of the results folder RES (findings/*.cu) built with this machine's
nvcc into DIR/<RES's name>/ (default .gpu-bundle/plain, where `cargo xtask campaign
plain-toolchains` puts each installed toolchain's build, <finding>-nvcc-<release>), run with
PLAIN_WAIT_S=2 and 20 launches at 1, 8, 32, 64 and 512 instances by each build, then by this
build once with each droppable call left out at the fewest instances that showed the finding
(a hang, a failed launch or call): RES/plain/<finding>.jsonl, a line a run and a `done` line.
  --arch ARCH        the architecture built for (sm_90)
  --budget S         seconds for this part: a finding is begun only before they are spent (400)
  --run-timeout S    seconds a run may take before it is killed (60)
  --nvcc-timeout S   seconds a build may take (120)
  --copy-to DIR      at the end, RES copied into DIR/<its name>
The last line is `status RES --phase plain`'s; exit 0 when every finding is done, 3 when some
are left (run it again), 2 on an error.";

/// What `plain RES` was asked to do.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub res: PathBuf,
    pub bins: PathBuf,
    pub arch: String,
    pub budget: u64,
    pub run_timeout: u64,
    pub nvcc_timeout: u64,
    pub copy_to: Option<PathBuf>,
}

impl Options {
    pub fn parse(argv: &[String], root: &Path) -> Result<Options, String> {
        let mut o = Options {
            res: PathBuf::new(),
            bins: root.join(".gpu-bundle/plain"),
            arch: "sm_90".into(),
            budget: 400,
            run_timeout: 60,
            nvcc_timeout: 120,
            copy_to: None,
        };
        let mut res = None;
        let mut it = argv.iter();
        while let Some(x) = it.next() {
            let mut val = || it.next().ok_or_else(|| format!("{x} needs a value"));
            let mut secs = || -> Result<u64, String> {
                let v = val()?;
                v.parse()
                    .map_err(|_| format!("{x} takes seconds, not `{v}`"))
            };
            match x.as_str() {
                "--bins" => o.bins = val()?.into(),
                "--arch" => o.arch = val()?.clone(),
                "--budget" => o.budget = secs()?,
                "--run-timeout" => o.run_timeout = secs()?.max(1),
                "--nvcc-timeout" => o.nvcc_timeout = secs()?.max(1),
                "--copy-to" => o.copy_to = Some(val()?.into()),
                s if s.starts_with('-') => return Err(format!("unknown argument `{s}`")),
                s if res.is_none() => res = Some(PathBuf::from(s)),
                s => return Err(format!("one results folder, not also `{s}`")),
            }
        }
        o.res = res.ok_or("the results folder is missing")?;
        Ok(o)
    }
}

/// One run of a plain program: one line of its log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub binary: String,
    pub instances: u32,
    /// The call left out; -1 for none.
    pub drop: i64,
    /// Its exit code; none when it was killed or did not start.
    pub exit: Option<i32>,
    #[serde(default)]
    pub timed_out: bool,
    #[serde(default)]
    pub shown: bool,
    /// The program's JSON lines.
    pub lines: Vec<Value>,
    /// Its other output (standard error, lines not JSON), the last of it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub output: String,
}

/// A finding's last line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Done {
    pub finding: String,
    pub shown_at_instances: Option<u32>,
    pub done: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What [`Run::shown`] reads of a program's line (`plain_prelude.cu`).
#[derive(Debug, Default, Deserialize)]
struct ProgramLine {
    result: Option<String>,
    #[serde(default)]
    failures: Vec<Value>,
    error: Option<String>,
}

/// A call of a program, as `PROG list` prints it.
#[derive(Debug, Deserialize)]
struct Call {
    call: u32,
    droppable: bool,
}

/// The findings' plain programs of `res`, in order.
pub fn findings(res: &Path) -> Result<Vec<PathBuf>, String> {
    let dir = res.join("findings");
    let mut out: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "cu"))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", dir.display())),
    };
    out.sort();
    Ok(out)
}

fn stem(cu: &Path) -> String {
    cu.file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned())
}

/// A finding's log.
pub fn log_of(res: &Path, finding: &str) -> PathBuf {
    res.join("plain").join(format!("{finding}.jsonl"))
}

/// Whether the log `f` ends with its finding's `done` line.
fn finished(f: &Path) -> bool {
    std::fs::read_to_string(f).is_ok_and(|t| {
        t.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .and_then(|l| serde_json::from_str::<Done>(l).ok())
            .is_some_and(|d| d.done)
    })
}

/// The findings of `res` whose plain program is not done.
pub fn left(res: &Path) -> Result<usize, String> {
    let cus = findings(res)?;
    Ok(cus
        .iter()
        .filter(|cu| !finished(&log_of(res, &stem(cu))))
        .count())
}

/// Where a finding's plain program built for `res` lies under `bins`:
/// this machine's build, or (with `release`) an installed toolchain's.
pub fn binary(
    bins: &Path,
    res: &Path,
    finding: &str,
    release: Option<&str>,
) -> Result<PathBuf, String> {
    let name = res
        .file_name()
        .ok_or_else(|| format!("`{}` has no name to keep its builds by", res.display()))?;
    let file = match release {
        Some(r) => format!("{finding}-nvcc-{r}"),
        None => finding.to_string(),
    };
    Ok(bins.join(name).join(file))
}

/// The toolchains' builds of `finding` for `res`, by name.
fn toolchain_builds(bins: &Path, res: &Path, finding: &str) -> Result<Vec<PathBuf>, String> {
    let dir = binary(bins, res, finding, None)?
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let prefix = format!("{finding}-nvcc-");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(&prefix))
        })
        .collect();
    out.sort();
    Ok(out)
}

/// `nvcc -arch=ARCH -rdc=true CU -L<devrt> -lcudadevrt -o EXE` under
/// `timeout` seconds: a plain program as its header says to build it.
pub fn build(nvcc: &Nvcc, cu: &Path, exe: &Path, arch: &str, timeout: u64) -> Result<(), String> {
    if let Some(d) = exe.parent() {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    let mut cmd = Command::new(&nvcc.path);
    cmd.arg(format!("-arch={arch}"))
        .arg("-rdc=true")
        .arg(cu)
        .arg(format!("-L{}", nvcc.lib_dir.display()))
        .args(["-lcudadevrt", "-o"])
        .arg(exe);
    let what = format!("{} {}", nvcc.path.display(), cu.display());
    match gridcheck_child::run_with_timeout(cmd, timeout) {
        None => Err(format!("{what}: killed after {timeout} s")),
        Some((Ok(st), _, _)) if st.success() => Ok(()),
        Some((st, out, err)) => {
            let how = st.map_or_else(|e| e, |s| s.to_string());
            Err(format!("{what} failed ({how}): {}", last(&(err + &out))))
        }
    }
}

/// The last [`OUTPUT_KEEP`] bytes of `s`, trimmed.
fn last(s: &str) -> String {
    gridcheck_child::last_bytes(s.trim(), OUTPUT_KEEP).to_string()
}

/// Runs `bin ARGS` with `PLAIN_WAIT_S` under `timeout` seconds: its exit
/// code (none: killed or not started), whether it was killed at the
/// limit, standard output and the rest.
fn run_program(bin: &Path, args: &[String], timeout: u64) -> (Option<i32>, bool, String, String) {
    let mut cmd = Command::new(bin);
    cmd.args(args).env("PLAIN_WAIT_S", WAIT_S);
    match gridcheck_child::run_with_timeout(cmd, timeout) {
        None => (None, true, String::new(), String::new()),
        Some((Ok(st), out, err)) => (st.code(), false, out, err),
        Some((Err(e), out, err)) => (None, false, out, format!("{e}\n{err}")),
    }
}

/// One run at `instances` with call `drop` left out (-1: none).
fn run_once(bin: &Path, instances: u32, drop: i64, timeout: u64) -> Run {
    let args = [
        instances.to_string(),
        LAUNCHES.to_string(),
        drop.to_string(),
    ];
    let (exit, timed_out, out, err) = run_program(bin, &args, timeout);
    let (mut lines, mut other) = (Vec::new(), err);
    for l in out.lines() {
        match serde_json::from_str::<Value>(l) {
            Ok(v) if v.is_object() => lines.push(v),
            _ => {
                other.push_str(l);
                other.push('\n');
            }
        }
    }
    let mut r = Run {
        binary: bin
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        instances,
        drop,
        exit,
        timed_out,
        shown: false,
        lines,
        output: last(&other),
    };
    r.shown = r.shows();
    r
}

impl Run {
    /// Whether it showed the finding: hung (exit 3, or killed at the
    /// limit), a launch failed, or a call failed.
    pub fn shows(&self) -> bool {
        self.timed_out
            || self.exit == Some(3)
            || self.lines.iter().any(|l| {
                let p: ProgramLine = serde_json::from_value(l.clone()).unwrap_or_default();
                matches!(p.result.as_deref(), Some("hung" | "launch-failed"))
                    || !p.failures.is_empty()
                    || p.error.is_some()
            })
    }
}

/// The droppable calls of the program `bin` (`bin list`).
fn droppable_calls(bin: &Path, timeout: u64) -> Result<Vec<u32>, String> {
    let (exit, timed_out, out, err) = run_program(bin, &["list".to_string()], timeout);
    if timed_out || exit != Some(0) {
        return Err(format!(
            "{} list: exit {exit:?}: {}",
            bin.display(),
            last(&err)
        ));
    }
    let calls: Vec<Call> = serde_json::from_str(out.trim()).map_err(|e| {
        format!(
            "{} list: not the calls ({e}): {}",
            bin.display(),
            last(&out)
        )
    })?;
    Ok(calls
        .into_iter()
        .filter(|c| c.droppable)
        .map(|c| c.call)
        .collect())
}

/// One finding's plain program built, run and its log written anew.
fn characterize(o: &Options, nvcc: &Nvcc, cu: &Path) -> Result<Done, String> {
    let finding = stem(cu);
    let log = log_of(&o.res, &finding);
    if let Some(d) = log.parent() {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    std::fs::write(&log, "").map_err(|e| format!("cannot write {}: {e}", log.display()))?;
    let own = binary(&o.bins, &o.res, &finding, None)?;
    let mut done = Done {
        finding: finding.clone(),
        shown_at_instances: None,
        done: true,
        error: None,
    };
    if let Err(e) = build(nvcc, cu, &own, &o.arch, o.nvcc_timeout) {
        done.error = Some(e);
        append_line(&log, &done)?;
        return Ok(done);
    }
    let mut bins = vec![own];
    bins.extend(toolchain_builds(&o.bins, &o.res, &finding)?);
    for (i, b) in bins.iter().enumerate() {
        for n in INSTANCES {
            let r = run_once(b, n, -1, o.run_timeout);
            if i == 0 && r.shown && done.shown_at_instances.is_none() {
                done.shown_at_instances = Some(n);
            }
            append_line(&log, &r)?;
        }
    }
    if let Some(n) = done.shown_at_instances {
        match droppable_calls(&bins[0], o.run_timeout) {
            Ok(calls) => {
                for c in calls {
                    append_line(&log, &run_once(&bins[0], n, i64::from(c), o.run_timeout))?;
                }
            }
            Err(e) => done.error = Some(e),
        }
    }
    append_line(&log, &done)?;
    Ok(done)
}

/// The plain programs of `o.res` not done yet, while the budget lasts;
/// how many are left.
pub fn run(o: &Options, nvcc: &Nvcc) -> Result<usize, String> {
    let start = Instant::now();
    let mut left = 0;
    for cu in findings(&o.res)? {
        if finished(&log_of(&o.res, &stem(&cu))) {
            continue;
        }
        if start.elapsed().as_secs() >= o.budget {
            left += 1;
            continue;
        }
        let d = characterize(o, nvcc, &cu)?;
        println!("{}", serde_json::to_string(&d).map_err(|e| e.to_string())?);
    }
    Ok(left)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_with(exit: Option<i32>, timed_out: bool, lines: &[&str]) -> Run {
        Run {
            binary: "b".into(),
            instances: 1,
            drop: -1,
            exit,
            timed_out,
            shown: false,
            lines: lines
                .iter()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect(),
            output: String::new(),
        }
    }

    #[test]
    fn a_run_shows_the_finding_by_a_hang_a_failed_launch_or_a_failed_call() {
        let completed = r#"{"program": "p", "result": "completed", "failures": []}"#;
        assert!(!run_with(Some(0), false, &[completed]).shows());
        assert!(run_with(Some(3), false, &[completed]).shows());
        assert!(run_with(None, true, &[]).shows());
        let failed =
            r#"{"program": "p", "result": "completed", "failures": [{"call": 1, "count": 2}]}"#;
        assert!(run_with(Some(0), false, &[completed, failed]).shows());
        let launch = r#"{"program": "p", "result": "launch-failed", "at_launch": 0}"#;
        assert!(run_with(Some(1), false, &[launch]).shows());
        assert!(run_with(Some(1), false, &[r#"{"error": "cudaErrorLaunchFailure"}"#]).shows());
        // A crash is not the finding's showing.
        assert!(!run_with(None, false, &[completed]).shows());
    }

    #[test]
    fn options_are_read_and_bad_ones_named() {
        let v = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let o = Options::parse(
            &v(&["r", "--budget", "0", "--arch", "sm_100"]),
            Path::new("/c"),
        )
        .unwrap();
        assert_eq!(
            (o.res.as_path(), o.budget, o.arch.as_str(), o.bins.as_path()),
            (
                Path::new("r"),
                0,
                "sm_100",
                Path::new("/c/.gpu-bundle/plain")
            )
        );
        let e = Options::parse(&v(&["r", "--budget", "x"]), Path::new("/c")).unwrap_err();
        assert_eq!(e, "--budget takes seconds, not `x`");
        assert!(Options::parse(&v(&["--budget", "1"]), Path::new("/c")).is_err());
        assert!(
            Options::parse(&v(&["r", "s"]), Path::new("/c"))
                .unwrap_err()
                .contains("`s`")
        );
        assert_eq!(
            binary(
                Path::new("/b"),
                Path::new("x/fuzz/"),
                "000-hang",
                Some("13.5")
            )
            .unwrap(),
            Path::new("/b/fuzz/000-hang-nvcc-13.5")
        );
    }
}
