//! Host tests' programs: a test's own executable (`<cubins>/<sm>/<test>.host`),
//! run as a user runs it, with the GPU timeout, on the device its place
//! names; its outputs read from `gridcheck-output <name> <value>` lines,
//! and the outcomes a test allows and should show (`may`) judged on them.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use gridcheck_report::Status;
use gridcheck_spec::Check;

use crate::devices::Place;
use crate::job::WorkerResult;
use crate::process::crash;
use gridcheck_child::run_with_timeout;

/// The line prefix of a host test's outputs.
pub const HOST_OUTPUT: &str = "gridcheck-output ";

/// The line prefix of a host test's program that cannot run here: `gridcheck-not-run <reason>`.
pub const HOST_NOT_RUN: &str = "gridcheck-not-run ";

/// A host test's run, as the harness resolved it.
#[derive(Debug, Clone)]
pub struct HostRun {
    pub test: String,
    /// The test's program for the device.
    pub exe: PathBuf,
    /// The outputs the program must print, in order.
    pub outputs: Vec<String>,
    pub timeout_s: u64,
}

/// Runs a host test's program with the GPU timeout, on the device `place`
/// gives it, and reads its outputs, in the test's order. A program that
/// exits with an error, or does not print every output, produced no
/// result; one that prints `gridcheck-not-run <reason>` (and no output) did
/// not run.
pub fn run(r: &HostRun, place: &Place) -> WorkerResult {
    let start = Instant::now();
    let exe = &r.exe;
    let mut cmd = Command::new(exe);
    cmd.envs(place.env.iter().cloned());
    let Some((status, stdout, stderr)) = run_with_timeout(cmd, r.timeout_s) else {
        return WorkerResult::Timeout {
            seconds: r.timeout_s,
            classified: None,
        };
    };
    let elapsed_s = start.elapsed().as_secs_f64();
    match &status {
        Ok(st) if st.success() => {}
        _ => return crash(&status, &format!("{stdout}{stderr}")),
    }
    if let Some(reason) = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix(HOST_NOT_RUN))
    {
        return if stdout.contains(HOST_OUTPUT) {
            WorkerResult::Error {
                message: format!(
                    "{}: the program says it did not run ({reason}) but printed outputs",
                    exe.display()
                ),
            }
        } else {
            WorkerResult::NotRun {
                reason: reason.trim().to_string(),
            }
        };
    }
    match parse_host_outputs(&stdout, &r.outputs) {
        Ok(outputs) => WorkerResult::Runtime { outputs, elapsed_s },
        Err(message) => WorkerResult::Error {
            message: format!("{}: {message}", exe.display()),
        },
    }
}

/// The values of `names` from a host program's `gridcheck-output <name>
/// <value>` lines (a value is a 32-bit word, written signed or unsigned).
pub fn parse_host_outputs(stdout: &str, names: &[String]) -> Result<Vec<u32>, String> {
    let mut seen = std::collections::HashMap::new();
    for line in stdout.lines() {
        let Some(rest) = line.trim().strip_prefix(HOST_OUTPUT) else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let (Some(name), Some(value), None) = (words.next(), words.next(), words.next()) else {
            return Err(format!("malformed output line `{line}`"));
        };
        let value = value
            .parse::<u32>()
            .or_else(|_| value.parse::<i32>().map(|v| v as u32))
            .map_err(|_| format!("output `{name}` has the value `{value}`, not a 32-bit word"))?;
        if !names.iter().any(|n| n == name) {
            return Err(format!(
                "the program printed `{name}`, which is not an output of the test"
            ));
        }
        if seen.insert(name.to_string(), value).is_some() {
            return Err(format!("the program printed `{name}` twice"));
        }
    }
    names
        .iter()
        .map(|n| {
            seen.get(n)
                .copied()
                .ok_or_else(|| format!("the program did not print the output `{n}`"))
        })
        .collect()
}

/// A host test's `may` (outcomes the source allows and a run should
/// show) over a run whose `expect` held: one that did not hold makes the
/// trial a quality-warning, the run did not provoke it.
pub(crate) fn allowed_outcomes(
    checked: (Status, String),
    names: &[String],
    may: &[(String, Check)],
    values: &[u32],
) -> (Status, String) {
    if checked.0 != Status::Pass {
        return checked;
    }
    let missed: Vec<String> = may
        .iter()
        .filter_map(|(name, c)| {
            let v = names.iter().zip(values).find(|(n, _)| *n == name)?.1;
            (!c.holds(*v))
                .then(|| format!("`{name}` {} (allowed) was not observed: it is {v}", c.text))
        })
        .collect();
    if missed.is_empty() {
        checked
    } else {
        (
            Status::QualityWarning,
            format!(
                "{}; the run did not provoke an allowed outcome: {}",
                checked.1,
                missed.join("; ")
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for a host test's program: a shell script.
    fn program(name: &str, body: &str) -> std::path::PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let dir =
            std::env::temp_dir().join(format!("gridcheck-host-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join("p.host");
        std::fs::write(&exe, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        exe
    }

    fn host_run(exe: std::path::PathBuf, outputs: &[&str]) -> HostRun {
        HostRun {
            test: "t".into(),
            exe,
            outputs: names(outputs),
            timeout_s: 60,
        }
    }

    #[test]
    fn a_program_that_cannot_run_here_says_why_and_is_not_run() {
        let exe = program(
            "notrun",
            "echo 'gridcheck-not-run needs 2 devices, found 1'",
        );
        let r = run(&host_run(exe, &["a"]), &Place::default());
        assert_eq!(
            r,
            WorkerResult::NotRun {
                reason: "needs 2 devices, found 1".into()
            }
        );
        // Not run and outputs at once is a contradiction, never a pass.
        let exe = program(
            "both",
            "echo 'gridcheck-not-run x'; echo 'gridcheck-output a 1'",
        );
        let r = run(&host_run(exe, &["a"]), &Place::default());
        assert!(
            matches!(&r, WorkerResult::Error { message } if message.contains("printed outputs")),
            "{r:?}"
        );
    }

    #[test]
    fn a_program_runs_on_the_device_its_place_names() {
        let exe = program(
            "place",
            "[ \"$CUDA_VISIBLE_DEVICES\" = GPU-1,GPU-0 ] && echo 'gridcheck-output placed 1' || echo 'gridcheck-output placed 0'",
        );
        let place = Place {
            env: vec![("CUDA_VISIBLE_DEVICES".into(), "GPU-1,GPU-0".into())],
            expect_uuid: Some("GPU-1".into()),
        };
        let r = run(&host_run(exe.clone(), &["placed"]), &place);
        assert!(
            matches!(&r, WorkerResult::Runtime { outputs, .. } if outputs == &[1]),
            "{r:?}"
        );
        let r = run(&host_run(exe, &["placed"]), &Place::default());
        assert!(
            matches!(&r, WorkerResult::Runtime { outputs, .. } if outputs == &[0]),
            "{r:?}"
        );
    }

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    fn may(name: &str, text: &str) -> (String, Check) {
        let op = if text.starts_with('>') {
            gridcheck_spec::CmpOp::Gt
        } else {
            gridcheck_spec::CmpOp::Eq
        };
        let value = text.trim_start_matches(['>', ' ']).parse().unwrap();
        let c = Check {
            op,
            value,
            text: text.into(),
        };
        (name.into(), c)
    }

    #[test]
    fn an_allowed_outcome_not_seen_is_a_quality_warning_never_a_pass_or_a_failure() {
        let n = names(&["err", "stale"]);
        let m = [may("stale", "> 0")];
        let ok = (Status::Pass, "err=0, stale=3 (not checked)".to_string());
        assert_eq!(allowed_outcomes(ok.clone(), &n, &m, &[0, 3]), ok);
        let (s, msg) = allowed_outcomes(ok.clone(), &n, &m, &[0, 0]);
        assert_eq!(s, Status::QualityWarning);
        assert!(
            msg.contains("`stale` > 0 (allowed) was not observed: it is 0"),
            "{msg}"
        );
        // A failed expectation stays the failure it is.
        let failed = (Status::Fail, "DISAGREES".to_string());
        assert_eq!(allowed_outcomes(failed.clone(), &n, &m, &[1, 0]), failed);
    }

    #[test]
    fn host_outputs_are_read_in_the_tests_order() {
        let out = "noise\ngridcheck-output b 7\ngridcheck-output a -1\n";
        assert_eq!(
            parse_host_outputs(out, &names(&["a", "b"])),
            Ok(vec![u32::MAX, 7])
        );
    }

    #[test]
    fn host_output_problems_are_named() {
        let n = names(&["a", "b"]);
        let e = parse_host_outputs("gridcheck-output a 1\n", &n).unwrap_err();
        assert!(e.contains("did not print the output `b`"), "{e}");
        let e = parse_host_outputs("gridcheck-output a 1\ngridcheck-output a 2\n", &n).unwrap_err();
        assert!(e.contains("`a` twice"), "{e}");
        let e = parse_host_outputs("gridcheck-output c 1\n", &n).unwrap_err();
        assert!(e.contains("`c`, which is not an output"), "{e}");
        let e = parse_host_outputs("gridcheck-output a x\n", &n).unwrap_err();
        assert!(e.contains("not a 32-bit word"), "{e}");
        let e = parse_host_outputs("gridcheck-output a\n", &n).unwrap_err();
        assert!(e.contains("malformed"), "{e}");
    }
}
