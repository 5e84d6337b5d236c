//! A GPU trial's timeout: `--timeout`, or the test's own `gpu_timeout`
//! where shorter (a test the spec knows can hang records the hang quickly,
//! as its finding), and what a trial killed at it says.

/// The timeout of a test's GPU trial: the test's `gpu_timeout` where it is
/// shorter than `--timeout`, else `--timeout`.
pub fn trial_timeout(timeout: u64, gpu_timeout: Option<u64>) -> u64 {
    gpu_timeout.map_or(timeout, |t| t.min(timeout))
}

/// The message of a trial killed after `seconds`: it names the test's
/// `gpu_timeout` when that was the limit, since such a test is known to be
/// able to hang and the hang is what it found.
pub fn timeout_message(seconds: u64, gpu_timeout: Option<u64>, reproduce: &str) -> String {
    if gpu_timeout == Some(seconds) {
        format!(
            "killed after {seconds} s, the test's gpu_timeout: the spec knows it can hang \
             (see its description), and a hang is its finding. {reproduce}"
        )
    } else {
        format!("killed after {seconds} s (--timeout). {reproduce}")
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

    #[test]
    fn the_message_names_the_limit_that_applied() {
        let own = timeout_message(20, Some(20), "R");
        assert!(
            own.starts_with("killed after 20 s, the test's gpu_timeout"),
            "{own}"
        );
        assert!(own.ends_with(" R"), "{own}");
        let global = timeout_message(10, Some(20), "R");
        assert_eq!(global, "killed after 10 s (--timeout). R");
        assert_eq!(
            timeout_message(60, None, "R"),
            "killed after 60 s (--timeout). R"
        );
    }
}
