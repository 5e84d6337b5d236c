//! `--list`, written by the harness rather than libtest-mimic, in the same
//! format (`[<kind>] <name>: test`, what nextest reads), or with `--format
//! json` one JSON object a trial (`{"name", "kind", "ignored"}`, what the
//! GPU machine's scripts read): a reader that stops early (`--list | head`)
//! ends the listing quietly with success, where libtest-mimic's own printer
//! panics on the closed pipe.

use std::io::{ErrorKind, Write};
use std::process::ExitCode;

use libtest_mimic::{Arguments, Trial};

/// Lists the trials libtest's filters select (only the ignored ones with
/// `--ignored`) on standard output.
pub(crate) fn list(args: &Arguments, trials: &[Trial]) -> ExitCode {
    let stdout = std::io::stdout();
    match write_list(args, trials, &mut stdout.lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: cannot write the list of trials: {e}");
            ExitCode::FAILURE
        }
    }
}

fn write_list(args: &Arguments, trials: &[Trial], out: &mut impl Write) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(out);
    let json = matches!(args.format, Some(libtest_mimic::FormatSetting::Json));
    for t in trials.iter().filter(|t| !args.is_filtered_out(t)) {
        if json {
            let line = serde_json::json!({
                "name": t.name(),
                "kind": t.kind(),
                "ignored": t.has_ignored_flag(),
            });
            writeln!(out, "{line}")?;
            continue;
        }
        let kind = if t.kind().is_empty() {
            String::new()
        } else {
            format!("[{}] ", t.kind())
        };
        let what = if t.is_bench() { "bench" } else { "test" };
        writeln!(out, "{kind}{}: {what}", t.name())?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trials() -> Vec<Trial> {
        vec![
            Trial::test("model/r/a", || Ok(())).with_kind("model"),
            Trial::test("static/r/b", || Ok(()))
                .with_kind("static")
                .with_ignored_flag(true),
        ]
    }

    fn listed(argv: &[&str]) -> String {
        let args = Arguments::from_iter(argv.iter().copied());
        let mut out = Vec::new();
        write_list(&args, &trials(), &mut out).expect("a Vec takes every write");
        String::from_utf8(out).expect("names are UTF-8")
    }

    #[test]
    fn the_list_is_libtests_format_with_its_filters() {
        assert_eq!(
            listed(&["h", "--list"]),
            "[model] model/r/a: test\n[static] static/r/b: test\n"
        );
        assert_eq!(
            listed(&["h", "--list", "--ignored"]),
            "[static] static/r/b: test\n"
        );
        assert_eq!(
            listed(&["h", "--list", "model/"]),
            "[model] model/r/a: test\n"
        );
        assert_eq!(
            listed(&["h", "--list", "--format", "json", "static/"]),
            "{\"ignored\":true,\"kind\":\"static\",\"name\":\"static/r/b\"}\n"
        );
    }

    /// A writer whose reader has gone, as `--list | head -1` leaves it.
    struct ClosedPipe;

    impl Write for ClosedPipe {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Err(ErrorKind::BrokenPipe.into())
        }
    }

    #[test]
    fn a_closed_pipe_is_an_error_of_its_own_kind_not_a_panic() {
        let args = Arguments::from_iter(["h", "--list"]);
        let e = write_list(&args, &trials(), &mut ClosedPipe).expect_err("the pipe is closed");
        assert_eq!(e.kind(), ErrorKind::BrokenPipe);
    }
}
