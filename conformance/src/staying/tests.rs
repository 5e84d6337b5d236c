//! The protocol against stand-in programs (shell scripts).

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::*;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gridcheck-staying-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A stand-in at `dir/<file>` that appends a line to `dir/starts` each time
/// it starts.
fn program(dir: &Path, file: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let exe = dir.join(file);
    let starts = dir.join("starts");
    std::fs::write(
        &exe,
        format!("#!/bin/sh\necho \"$0\" >> {}\n{body}\n", starts.display()),
    )
    .unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    exe
}

fn starts(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("starts"))
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

/// Answers each request with `got <request>`; `hang` hangs, `exit` exits 3.
const SERVER: &str = r#"[ "$1" = "--serve" ] || exit 9
echo ready
while read line; do
  case "$line" in
    hang) sleep 30 ;;
    exit) echo "bye"; exit 3 ;;
    *) echo "got $line" ;;
  esac
done"#;

fn start(exe: &Path) -> Start<'_> {
    Start {
        exe,
        flag: "--serve",
        ready: "ready",
        env: &[],
    }
}

#[test]
fn one_process_answers_request_after_request_until_it_ends_or_hangs() {
    let dir = scratch("requests");
    let exe = program(&dir, "server", SERVER);
    let s = Stayers::default();
    let t = Duration::from_secs(5);
    assert_eq!(
        s.ask(0, &start(&exe), "a", t),
        Reply::Line("got a".into(), 0)
    );
    assert_eq!(
        s.ask(0, &start(&exe), "b", t),
        Reply::Line("got b".into(), 1)
    );
    assert_eq!(
        starts(&dir),
        1,
        "the second request went to the same process"
    );
    // Its line says it exits: the caller ends it, the next request starts anew.
    assert_eq!(
        s.ask(0, &start(&exe), "exit", t),
        Reply::Line("bye".into(), 2)
    );
    s.end(0, &exe);
    assert_eq!(
        s.ask(0, &start(&exe), "c", t),
        Reply::Line("got c".into(), 0)
    );
    assert_eq!(starts(&dir), 2);
    // No answer within the timeout: killed, and the next request starts anew.
    let begun = Instant::now();
    assert_eq!(
        s.ask(0, &start(&exe), "hang", Duration::from_secs(1)),
        Reply::Timeout
    );
    assert!(begun.elapsed() < Duration::from_secs(10));
    assert_eq!(
        s.ask(0, &start(&exe), "d", t),
        Reply::Line("got d".into(), 0)
    );
    assert_eq!(starts(&dir), 3);
    // Another binary on the slot gets its own, and this one stays; another
    // slot has its own.
    let other = program(&dir, "other", SERVER);
    assert_eq!(
        s.ask(0, &start(&other), "e", t),
        Reply::Line("got e".into(), 0)
    );
    assert_eq!(
        s.ask(0, &start(&exe), "e2", t),
        Reply::Line("got e2".into(), 1)
    );
    assert_eq!(
        s.ask(1, &start(&exe), "f", t),
        Reply::Line("got f".into(), 0)
    );
    assert_eq!(starts(&dir), 5);
    // Past KEEP binaries on a slot, the least recently asked is ended.
    let more: Vec<PathBuf> = (0..KEEP)
        .map(|i| program(&dir, &format!("more{i}"), SERVER))
        .collect();
    for m in &more {
        assert_eq!(s.ask(0, &start(m), "g", t), Reply::Line("got g".into(), 0));
    }
    assert_eq!(
        s.ask(0, &start(&more[0]), "h", t),
        Reply::Line("got h".into(), 1)
    );
    assert_eq!(
        s.ask(0, &start(&exe), "i", t),
        Reply::Line("got i".into(), 0),
        "the first binary was the least recently asked: started again"
    );
    assert_eq!(starts(&dir), 5 + KEEP + 1);
    drop(s);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_program_that_does_not_stay_says_so_at_its_start() {
    let dir = scratch("start");
    let t = Duration::from_secs(5);
    let s = Stayers::default();
    let one_shot = program(&dir, "one-shot", "echo '{\"line\":1}'");
    assert_eq!(
        s.ask(0, &start(&one_shot), "a", t),
        Reply::Started("{\"line\":1}".into())
    );
    let rejects = program(
        &dir,
        "rejects",
        "echo \"unknown flag \\`$1\\`\" >&2; exit 2",
    );
    match s.ask(0, &start(&rejects), "a", t) {
        Reply::Died {
            code: Some(2),
            stderr,
            ready: false,
            ..
        } => assert!(stderr.contains("unknown flag `--serve`"), "{stderr}"),
        other => panic!("{other:?}"),
    }
    // Dying after its ready line is not a refusal.
    let dies = program(&dir, "dies", "echo ready; read l; echo boom >&2; exit 2");
    match s.ask(0, &start(&dies), "a", t) {
        Reply::Died { ready: true, .. } => {}
        other => panic!("{other:?}"),
    }
    assert!(!s.refused(&rejects));
    s.refuse(&rejects);
    assert!(s.refused(&rejects) && !s.refused(&dies));
    std::fs::remove_dir_all(&dir).unwrap();
}
