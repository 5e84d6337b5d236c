//! A binary's cases in its staying process (`--serve`): one process for
//! case after case, a fresh one after a CUDA error, and a process of its
//! own for each case of a binary that does not stay.

use super::*;

fn starts(root: &Path) -> usize {
    std::fs::read_to_string(root.join("starts"))
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

/// A stand-in that stays when asked: it answers each case line with a
/// right run, or (once `fail-next` exists) with a CUDA error and exit 3.
fn serving(root: &Path) -> String {
    let r = root.display();
    format!(
        "echo \"$*\" >> {r}/starts
if [ \"$1\" = --serve ]; then
  echo gridcheck-serve
  while read l; do
    if [ -f {r}/fail-next ]; then rm {r}/fail-next; {}; exit 3; fi
    {}
  done
  exit 0
fi
{}",
        line(0, "\"cudaErrorIllegalAddress\"", "4"),
        line(0, "null", "null"),
        line(0, "null", "null")
    )
}

#[test]
fn a_binarys_cases_share_its_staying_process_until_one_errs() {
    let root = scratch("served");
    program(&root, "merge_sort", &serving(&root));
    let ctx = ctx(&root, 30);
    let it = item(&ctx, "sm_90", "merge_sort_keys");
    for earlier in 0..2 {
        let rec = run(&ctx, &it);
        assert_eq!(rec.status, Status::Pass, "{}", rec.message);
        assert_eq!(rec.library.unwrap().run.earlier_cases, Some(earlier));
    }
    assert_eq!(starts(&root), 1, "two cases, one process");
    std::fs::write(root.join("fail-next"), "").unwrap();
    let rec = run(&ctx, &it);
    assert_eq!(rec.status, Status::Fail);
    assert!(
        rec.message.contains(
            "cudaErrorIllegalAddress after 4 calls (in a staying process, after 2 other cases)"
        ),
        "{}",
        rec.message
    );
    // The reproducer is a process of its own, as a user runs it.
    let lib = rec.library.unwrap();
    assert!(
        lib.reproducer
            .unwrap()
            .command
            .ends_with("--env back-to-back --seed 1"),
        "no --serve in the reproducer"
    );
    // The error ended the process: the next case starts a fresh one.
    let rec = run(&ctx, &it);
    assert_eq!(rec.status, Status::Pass, "{}", rec.message);
    assert_eq!(rec.library.unwrap().run.earlier_cases, Some(0));
    assert_eq!(starts(&root), 2);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_binary_built_before_serve_runs_each_case_in_a_process_of_its_own() {
    let root = scratch("no-serve");
    let r = root.display();
    program(
        &root,
        "merge_sort",
        &format!(
            "echo \"$*\" >> {r}/starts
if [ \"$1\" = --serve ]; then echo \"error: unknown flag \\`--serve\\`\" >&2; exit 2; fi
{}",
            line(0, "null", "null")
        ),
    );
    let ctx = ctx(&root, 30);
    let it = item(&ctx, "sm_90", "merge_sort_keys");
    for _ in 0..2 {
        let rec = run(&ctx, &it);
        assert_eq!(rec.status, Status::Pass, "{}", rec.message);
        assert_eq!(rec.library.unwrap().run.earlier_cases, None);
    }
    let lines = std::fs::read_to_string(root.join("starts")).unwrap();
    assert_eq!(
        lines.lines().filter(|l| l.starts_with("--serve")).count(),
        1,
        "asked to stay once a run: {lines}"
    );
    assert_eq!(starts(&root), 3, "the refusal, then a process a case");
    std::fs::remove_dir_all(&root).unwrap();
}
