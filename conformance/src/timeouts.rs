//! A GPU trial's limits: its timeout (`--timeout`, or the test's own
//! `gpu_timeout` where shorter: a test the spec knows can hang records the
//! hang quickly, as its finding), the stall time of the watch every litmus
//! launch runs under, and what a trial that stalled or was killed says.
//!
//! Every litmus launch is watched while it runs (`gridcheck_gpu`'s
//! watchdog): a launch whose status words do not move for the trial's
//! stall time ([`stall_after`], a few seconds at most) ends the trial at
//! once with status `timeout` and where it stalled (which kernel did not
//! run, which call did not return, in how many instances). The timeout is
//! the backstop, for what the watch cannot see (a runtime test, a hang
//! before the first launch) and for a run that moves but does not finish.
//!
//! A litmus trial killed at its timeout, where no known hang covers its
//! test (or every one, with `--classify-timeouts`; none with
//! `--no-classify-timeouts`), is run again alone under watch (its job's
//! `watch`, `gridcheck_gpu::watch`): the status words of the
//! launch in flight are copied back every second beside the kernel; no
//! change for [`STALL_AFTER_S`] seconds is a *stall*, and instances still
//! completing when the trial's time is spent is a *long run* (its rate, and
//! how long the whole budget would take). The status stays `timeout`; the
//! message says which.

use gridcheck_gpu::watch::{LONG_RUN, STALL};

use crate::devices::Place;
use crate::job::{GpuJob, Job, WorkerResult};
use crate::options::Classify;
use crate::process;

/// Seconds without a status word changing that make a stall in a watched
/// rerun (a launch of the suite takes milliseconds).
pub const STALL_AFTER_S: u64 = 5;

/// The most seconds a litmus launch's status words may stand still before
/// the live watch calls it a stall.
pub const MAX_STALL_S: f64 = 2.0;

/// The stall time of a trial whose test a known hang covers (a `kind =
/// "hang"` fact): the hang is expected, and a launch of the suite that
/// still moves changes a status word within milliseconds, so a quarter
/// second of stillness is the hang again. A fixed hang completes and is
/// reported `changed`, as before.
pub const KNOWN_HANG_STALL_S: f64 = 0.25;

/// A GPU trial's time limits, computed here only: the test's own
/// `gpu_timeout:` (which a timeout's message names) and the trial's
/// timeout ([`trial_timeout`]), the job's and the messages' alike.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub gpu_timeout: Option<u64>,
    pub timeout: u64,
}

impl Limits {
    /// The limits of `test`'s GPU trial under `--timeout` `timeout`.
    pub fn of(timeout: u64, test: &gridcheck_spec::Test) -> Limits {
        Limits {
            gpu_timeout: test.gpu_timeout,
            timeout: trial_timeout(timeout, test.gpu_timeout),
        }
    }
}

/// The timeout of a test's GPU trial: the test's `gpu_timeout` where it is
/// shorter than `--timeout`, else `--timeout`.
fn trial_timeout(timeout: u64, gpu_timeout: Option<u64>) -> u64 {
    gpu_timeout.map_or(timeout, |t| t.min(timeout))
}

/// The stall time of the live watch for a trial of `timeout` seconds: a
/// quarter of it, between 1 s and [`MAX_STALL_S`], so that a stall is seen
/// well before the timeout (a 3 s `gpu_timeout` gets 1 s) and a new hang
/// costs seconds, not the timeout. A launch of the suite takes
/// milliseconds; the watch does not look at one before
/// `gridcheck_gpu::watchdog::FIRST_LOOK_S`.
pub fn stall_after(timeout: u64) -> f64 {
    (timeout as f64 / 4.0).clamp(1.0, MAX_STALL_S)
}

/// The stall time of a GPU trial: [`KNOWN_HANG_STALL_S`] where a known hang
/// covers its test, else [`stall_after`] its timeout.
pub fn trial_stall_after(timeout: u64, known_hang: bool) -> f64 {
    if known_hang {
        KNOWN_HANG_STALL_S
    } else {
        stall_after(timeout)
    }
}

/// The message of a trial killed after `seconds`: it names the test's
/// `gpu_timeout` when that was the limit, since such a test is known to be
/// able to hang and the hang is what it found; and the classification of
/// the rerun, if there was one.
pub fn timeout_message(
    seconds: u64,
    gpu_timeout: Option<u64>,
    classified: Option<&str>,
    reproduce: &str,
) -> String {
    let limit = if gpu_timeout == Some(seconds) {
        format!(
            "killed after {seconds} s, the test's gpu_timeout: the spec knows it can hang \
             (see its description), and a hang is its finding."
        )
    } else {
        format!("killed after {seconds} s (--timeout).")
    };
    match classified {
        Some(c) => format!("{limit} Rerun alone under watch: {c}. {reproduce}"),
        None => format!("{limit} {reproduce}"),
    }
}

/// The message of a trial whose launch stalled under the live watch:
/// `stall` is the watch's words (where it stopped), `timeout` the trial's
/// backstop.
pub fn stall_message(stall: &str, timeout: u64, reproduce: &str) -> String {
    format!(
        "{stall} (watched while it ran; ended then, not at the {timeout} s timeout). {reproduce}"
    )
}

/// Runs a litmus test whose job timed out again, alone under watch, and
/// classifies the timeout (the module docs).
pub fn classify(job: &GpuJob, place: &Place) -> WorkerResult {
    let seconds = job.timeout_s;
    // The watched run ends itself at `seconds` of launches; the margin is
    // for loading, allocating and the last look at the status words.
    let rerun = GpuJob {
        timeout_s: seconds + STALL_AFTER_S + 20,
        watch: Some(watch_setting(seconds)),
        ..job.clone()
    };
    let again = process::run_once(&Job::Gpu(rerun), place);
    WorkerResult::Timeout {
        seconds,
        classified: Some(classification(&again)),
    }
}

/// The watch of a rerun of a trial killed after `seconds` (stall seconds,
/// budget seconds): a
/// stall is no status word moving for half the trial's time, between 1 s
/// and [`STALL_AFTER_S`] (so that a short `gpu_timeout` can still see one:
/// at 3 s, a 5 s stall could never be seen before the run's time was spent
/// and every hang read as a long run), and the run's time is the trial's.
pub fn watch_setting(seconds: u64) -> (f64, f64) {
    let stall = (seconds as f64 / 2.0).clamp(1.0, STALL_AFTER_S as f64);
    (stall, seconds as f64)
}

/// Whether a timed-out litmus trial is classified: every one with
/// `--classify-timeouts`, none with `--no-classify-timeouts`, else those no
/// known hang covers (a known hang's fact already says where it stalls, and
/// a rerun would cost its timeout again).
pub fn should_classify(classify: Classify, known_hang: bool) -> bool {
    match classify {
        Classify::All => true,
        Classify::None => false,
        Classify::Unknown => !known_hang,
    }
}

/// What a watched rerun found, in words.
fn classification(r: &WorkerResult) -> String {
    match r {
        WorkerResult::Error { message } => {
            match [STALL, LONG_RUN].iter().find_map(|k| message.find(k)) {
                Some(i) => message[i..].to_string(),
                None => format!("it failed otherwise: {message}"),
            }
        }
        WorkerResult::Litmus {
            elapsed_s,
            instances,
            ..
        } => format!("not reproduced: it completed, {instances} instances in {elapsed_s:.1} s"),
        WorkerResult::Stalled { stall } => stall.clone(),
        WorkerResult::Timeout { seconds, .. } => {
            format!("killed too, after {seconds} s, before the watch could say")
        }
        WorkerResult::Crash { exit, .. } => format!("its process died ({exit})"),
        other => format!("unexpected result {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_timeout_only_ever_shortens() {
        assert_eq!(trial_timeout(60, None), 60);
        assert_eq!(trial_timeout(60, Some(20)), 20);
        assert_eq!(
            trial_timeout(10, Some(20)),
            10,
            "never longer than --timeout"
        );
    }

    /// A launch that stops moving is reported within a few seconds, and
    /// before its trial's timeout: the watchdog's first look, the stall
    /// time and one more look.
    #[test]
    fn a_stall_is_seen_within_seconds_and_before_the_timeout() {
        use gridcheck_gpu::watchdog::{FIRST_LOOK_S, POLL};
        let seen_by = |t: u64| FIRST_LOOK_S + stall_after(t) + POLL.as_secs_f64();
        assert_eq!(stall_after(60), MAX_STALL_S);
        assert_eq!(stall_after(3), 1.0);
        assert_eq!(stall_after(6), 1.5);
        assert_eq!(trial_stall_after(3, false), 1.0);
        assert_eq!(trial_stall_after(30, true), KNOWN_HANG_STALL_S);
        assert!(
            KNOWN_HANG_STALL_S < stall_after(1),
            "a known hang ends sooner"
        );
        for t in [2, 3, 5, 10, 30, 60, 600, 3600] {
            assert!(
                seen_by(t) < t as f64,
                "--timeout {t}: seen after {}",
                seen_by(t)
            );
            assert!(
                seen_by(t) <= 2.5,
                "--timeout {t}: seen after {}",
                seen_by(t)
            );
        }
        let m = stall_message("stall: launch 0 (...): kernel `a` ran in 0 of 64", 60, "R");
        assert_eq!(
            m,
            "stall: launch 0 (...): kernel `a` ran in 0 of 64 (watched while it ran; ended \
             then, not at the 60 s timeout). R"
        );
    }

    #[test]
    fn the_message_names_the_limit_that_applied() {
        let own = timeout_message(20, Some(20), None, "R");
        assert!(
            own.starts_with("killed after 20 s, the test's gpu_timeout"),
            "{own}"
        );
        assert!(own.ends_with("finding. R"), "{own}");
        let global = timeout_message(10, Some(20), None, "R");
        assert_eq!(global, "killed after 10 s (--timeout). R");
        assert_eq!(
            timeout_message(60, None, None, "R"),
            "killed after 60 s (--timeout). R"
        );
        let c = timeout_message(60, None, Some("stall: launch 3"), "R");
        assert_eq!(
            c,
            "killed after 60 s (--timeout). Rerun alone under watch: stall: launch 3. R"
        );
    }

    #[test]
    fn a_rerun_is_classified_by_what_its_worker_said() {
        let error = |m: &str| WorkerResult::Error {
            message: m.to_string(),
        };
        let stall = "launch 0 of t failed: stall: launch 0 (after 0 instances completed in \
                     earlier launches): no status word changed for 5.0 s; kernel `tl` ran in 0 of 64";
        assert_eq!(
            classification(&error(stall)),
            "stall: launch 0 (after 0 instances completed in earlier launches): no status word \
             changed for 5.0 s; kernel `tl` ran in 0 of 64"
        );
        let long = classification(&error("long run: 10 of 100 instances completed in 60.0 s"));
        assert!(long.starts_with("long run: 10 of 100"), "{long}");
        let other = classification(&error("cuLaunchKernelEx failed"));
        assert_eq!(other, "it failed otherwise: cuLaunchKernelEx failed");
        let done = classification(&WorkerResult::Litmus {
            histogram: Vec::new(),
            instances: 64,
            launch_failures: 0,
            first_launch_error: None,
            elapsed_s: 0.25,
            seed: 1,
            stale: Vec::new(),
        });
        assert_eq!(done, "not reproduced: it completed, 64 instances in 0.2 s");
        let stalled = classification(&WorkerResult::Stalled {
            stall: "stall: launch 2 (after 128 ...)".into(),
        });
        assert_eq!(stalled, "stall: launch 2 (after 128 ...)");
        let killed = classification(&WorkerResult::Timeout {
            seconds: 85,
            classified: None,
        });
        assert!(killed.starts_with("killed too, after 85 s"), "{killed}");
    }

    #[test]
    fn a_known_hang_is_not_rerun_unless_every_timeout_is() {
        assert!(should_classify(Classify::Unknown, false));
        assert!(!should_classify(Classify::Unknown, true));
        assert!(should_classify(Classify::All, true));
        assert!(!should_classify(Classify::None, false));
    }

    #[test]
    fn a_short_timeout_still_leaves_room_to_see_a_stall() {
        assert_eq!(watch_setting(3), (1.5, 3.0));
        assert_eq!(watch_setting(1), (1.0, 1.0));
        assert_eq!(watch_setting(60), (5.0, 60.0));
        for s in [1, 2, 3, 10, 60] {
            let (stall, budget) = watch_setting(s);
            assert!(gridcheck_gpu::watch::check_watch(stall, budget).is_ok());
            assert!(
                stall <= budget / 2.0 || stall == 1.0,
                "{s}: {stall} {budget}"
            );
        }
    }
}
