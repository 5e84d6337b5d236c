//! The library tier against stand-in programs (shell scripts that print a
//! program's JSON line, exit 3 after a CUDA error, hang or say they cannot
//! run) in a scratch checkout with its own catalog and builds, on a
//! stand-in device: the statuses, the messages, the controls, the
//! reproducer, the timeline's holds and the reasons a trial does not run.

use std::path::{Path, PathBuf};

use super::*;

const CATALOG: &str = r#"
[[release]]
name = "13.3"
cccl = "3.3.0"

[[release.algorithm]]
name = "merge_sort_keys"
entry = "cub::DeviceMergeSort::SortKeysCopy"
program = "merge_sort"
waits = ["cub/agent/agent_merge_sort.cuh:301"]
triggers = ["cub/agent/agent_merge_sort.cuh:350"]

[[release.algorithm]]
name = "find_if"
entry = "cub::DeviceFind::FindIf"
program = ""
waits = []
triggers = []
"#;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gridcheck-library-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("spec")).unwrap();
    std::fs::write(dir.join("spec/a.yaml"), gridcheck_fixture::SPEC).unwrap();
    std::fs::create_dir_all(dir.join("kernels/cccl")).unwrap();
    std::fs::write(dir.join(library_contract::CATALOG), CATALOG).unwrap();
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("library.toml");
    std::fs::create_dir_all(dir.join("conformance")).unwrap();
    std::fs::copy(cases, dir.join(cases::CASES_FILE)).unwrap();
    dir
}

/// A stand-in program at `target/library/13.3/sm_90/<file>`.
fn program(root: &Path, file: &str, body: &str) {
    program_at(root, "sm_90", file, body)
}

/// A stand-in program at `target/library/13.3/<target>/<file>`.
fn program_at(root: &Path, target: &str, file: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let dir = root.join("target/library/13.3").join(target);
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join(file);
    std::fs::write(&exe, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        root.join("target/library/13.3/build.json"),
        r#"{"nvcc":"13.3.73","cccl":"3.3.0","builds":[{"program":"merge_sort","target":"sm_90","variant":"","error":null,"command":"nvcc -std=c++17 -gencode arch=compute_90,code=sm_90 kernels/cccl/merge_sort.cu -o merge_sort"}]}"#,
    )
    .unwrap();
}

/// A program's line for the case `n100000-back-to-back` with 10 calls.
fn line(wrong: u64, error: &str, after: &str) -> String {
    format!(
        "echo '{{\"algorithm\":\"merge_sort_keys\",\"size\":100000,\"env\":\"back-to-back\",\"reps\":10,\"calls\":10,\"wrong\":{wrong},\"first_wrong\":{},\"error\":{error},\"after_calls\":{after},\"pdl\":true,\"ptx_version\":900,\"cccl\":\"3.3.0\",\"gpu_ms\":1.5}}'",
        if wrong > 0 {
            "\"index 17: got 5 want 3\""
        } else {
            "null"
        }
    )
}

/// Each control's variant and outcome, in the order they ran.
fn outcomes(lib: &LibraryResult) -> Vec<(&str, &str)> {
    lib.controls
        .iter()
        .map(|c| (c.variant.as_str(), c.outcome.as_str()))
        .collect()
}

fn device(sm: &str) -> gridcheck_gpu::DeviceInfo {
    gridcheck_gpu::DeviceInfo {
        name: "NVIDIA H200".into(),
        compute_capability: (9, 0),
        driver_version: "13.0".into(),
        driver_release: Some("580.159.04".into()),
        sm: sm.into(),
        ordinal: 0,
        uuid: None,
        pci_bus_id: None,
    }
}

/// A harness context on the scratch checkout, `--tier library`, with a
/// stand-in device (none probed: no program here touches a GPU).
fn ctx(root: &Path, timeout: u64) -> Ctx {
    let argv: Vec<String> = [
        "conformance",
        "--spec",
        &root.join("spec").display().to_string(),
        "--results",
        &root.join("results.jsonl").display().to_string(),
        "--timeout",
        &timeout.to_string(),
        "--tier",
        "library",
        "--no-progress",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let opts = crate::flags::parse(argv, root.to_path_buf()).unwrap();
    let mut ctx = Ctx::new(opts).unwrap();
    ctx.runner.device = Ok(device("sm_90"));
    ctx
}

fn item(ctx: &Ctx, target: &str, algorithm: &str) -> Item {
    let catalog = Catalog::load(&ctx.plan.opts.root).unwrap();
    Item {
        release: "13.3".into(),
        target: target.into(),
        algorithm: catalog.releases[0]
            .algorithms
            .iter()
            .find(|a| a.name == algorithm)
            .unwrap()
            .clone(),
        case: Case {
            size: 100000,
            env: "back-to-back".into(),
            reps: 10,
            control_rounds: 1,
        },
    }
}

#[test]
fn a_wrong_result_fails_and_its_controls_name_what_removes_it() {
    let root = scratch("wrong");
    program(&root, "merge_sort", &line(2, "null", "null"));
    program(&root, "merge_sort-nopdl", &line(0, "null", "null"));
    program(&root, "merge_sort-waitfirst", &line(0, "null", "null"));
    program(&root, "merge_sort-ptx90", &line(1, "null", "null"));
    let ctx = ctx(&root, 30);
    let rec = run(&ctx, &item(&ctx, "sm_90", "merge_sort_keys"));
    assert_eq!(rec.status, Status::Fail, "{}", rec.message);
    let m = &rec.message;
    assert!(
        m.starts_with(
            "CCCL 13.3 (3.3.0), sm_90, merge_sort_keys, n=100000, env back-to-back: wrong in 2 of 10 calls (first: index 17: got 5 want 3)"
        ),
        "{m}"
    );
    let lib = rec.library.as_ref().unwrap();
    let variants = outcomes(lib);
    assert_eq!(
        variants,
        [
            ("-nopdl", "pass"),
            ("-ptx90", "fail"),
            ("-waitfirst", "pass")
        ]
    );
    assert!(
        lib.controls[2].message.contains(
            "patch `waitfirst`; the algorithm's waits: cub/agent/agent_merge_sort.cuh:301"
        ),
        "{:?}",
        lib.controls[2]
    );
    assert!(
        m.contains("-nopdl pass (`-nopdl` removes the failure: PDL off"),
        "{m}"
    );
    let r = lib.reproducer.as_ref().unwrap();
    assert!(
        r.command.ends_with(
            "target/library/13.3/sm_90/merge_sort --algorithm merge_sort_keys --size 100000 --reps 10 --env back-to-back --seed 1"
        ),
        "{}",
        r.command
    );
    assert_eq!(r.source, "kernels/cccl/merge_sort.cu");
    assert_eq!(
        r.build,
        "nvcc -std=c++17 -gencode arch=compute_90,code=sm_90 kernels/cccl/merge_sort.cu -o merge_sort"
    );
    assert_eq!(lib.run.ptx_version, Some(900));
    let env = rec.environment.as_ref().unwrap();
    assert_eq!(env.nvcc.as_deref(), Some("13.3.73"));
    assert_eq!(env.binary.as_ref().unwrap().kind, "executable");
    // Every run held the device, on the timeline, counted per release.
    let spans = ctx.runner.timeline.spans();
    assert_eq!(spans.len(), 4, "the case and its three controls");
    assert!(spans.iter().all(|s| s.what == "library"));
    let lines = time_per_release(&spans);
    assert_eq!(lines.len(), 1);
    assert!(
        lines[0].starts_with("library tier, CCCL 13.3: ") && lines[0].ends_with("(4 runs)"),
        "{lines:?}"
    );
    // A right answer passes, with no control run.
    program(&root, "merge_sort", &line(0, "null", "null"));
    let rec = run(&ctx, &item(&ctx, "sm_90", "merge_sort_keys"));
    assert_eq!(rec.status, Status::Pass, "{}", rec.message);
    assert!(rec.message.ends_with("right in 10 of 10 calls"));
    assert!(rec.library.unwrap().controls.is_empty());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_cuda_error_a_hang_and_a_crash_each_fail_only_their_trial() {
    let root = scratch("errors");
    program(
        &root,
        "merge_sort",
        &format!("{}; exit 3", line(0, "\"cudaErrorIllegalAddress\"", "4")),
    );
    let ctx = ctx(&root, 1);
    let it = item(&ctx, "sm_90", "merge_sort_keys");
    let rec = run(&ctx, &it);
    assert_eq!(rec.status, Status::Fail);
    assert!(
        rec.message.contains(
            "back-to-back: cudaErrorIllegalAddress after 4 calls; controls: -nopdl not-run"
        ),
        "{}",
        rec.message
    );
    program(&root, "merge_sort", "sleep 20");
    let start = std::time::Instant::now();
    let rec = run(&ctx, &it);
    assert!(start.elapsed().as_secs() < 10, "killed at the timeout");
    assert_eq!(rec.status, Status::Fail);
    assert!(
        rec.message.contains(": no answer within 1 s"),
        "{}",
        rec.message
    );
    program(&root, "merge_sort", "echo boom >&2; kill -SEGV $$");
    let rec = run(&ctx, &it);
    assert_eq!(rec.status, Status::Fail);
    assert!(
        rec.message.contains("the program died (") && rec.message.contains("boom"),
        "{}",
        rec.message
    );
    // A line for another case is not this case's answer.
    program(
        &root,
        "merge_sort",
        &line(0, "null", "null").replace("100000", "7"),
    );
    let rec = run(&ctx, &it);
    assert!(
        rec.message
            .contains("answered size 7 env back-to-back reps 10 for size 100000"),
        "{}",
        rec.message
    );
    // No GPU where the program runs: not run, with its reason.
    program(
        &root,
        "merge_sort",
        "echo 'gridcheck-not-run no CUDA device'",
    );
    let rec = run(&ctx, &it);
    assert_eq!(rec.status, Status::NotSupported);
    assert_eq!(rec.message, "not run: no CUDA device");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_trial_that_cannot_run_says_why_and_what_makes_it_run() {
    let root = scratch("why-not");
    let mut ctx = ctx(&root, 5);
    let (status, why) = why_not(&ctx, &item(&ctx, "sm_90", "find_if")).unwrap();
    assert_eq!(status, Status::NotRun);
    assert!(
        why.contains("no program covers find_if of CCCL 13.3 yet"),
        "{why}"
    );
    let (status, why) = why_not(&ctx, &item(&ctx, "sm_90", "merge_sort_keys")).unwrap();
    assert_eq!(status, Status::NotSupported);
    assert!(
        why.contains("cargo xtask library build --release 13.3"),
        "{why}"
    );
    assert!(
        unavailable(&ctx).unwrap().contains("no CCCL release"),
        "asked for, nothing built: the harness stops"
    );
    program(&root, "merge_sort", &line(0, "null", "null"));
    assert_eq!(why_not(&ctx, &item(&ctx, "sm_90", "merge_sort_keys")), None);
    assert_eq!(unavailable(&ctx), None);
    // SASS for sm_90 runs on sm_90 only; compute_80 PTX from sm_80 on.
    assert!(target_runs_on("sm_90", "sm_90") && !target_runs_on("sm_90", "sm_100"));
    assert!(target_runs_on("compute_80", "sm_90") && !target_runs_on("compute_80", "sm_75"));
    ctx.runner.device = Ok(device("sm_100"));
    let (_, why) = why_not(&ctx, &item(&ctx, "sm_90", "merge_sort_keys")).unwrap();
    assert!(
        why.contains("sm_90 code does not run on NVIDIA H200 (sm_100)"),
        "{why}"
    );
    ctx.runner.device = Err("no CUDA driver".into());
    assert_eq!(
        why_not(&ctx, &item(&ctx, "sm_90", "merge_sort_keys")),
        Some((Status::NotSupported, "no CUDA driver".into()))
    );
    assert_eq!(unavailable(&ctx).as_deref(), Some("no CUDA driver"));
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn trials_are_named_by_release_target_algorithm_and_case() {
    let root = scratch("names");
    let ctx = std::sync::Arc::new(ctx(&root, 5));
    let names: Vec<String> = trials(&ctx).iter().map(|t| t.name().to_string()).collect();
    let cases = Cases::load(&root).unwrap();
    let per_alg = cases.cases(true, "x").len() * cases.set(true).targets.len();
    assert_eq!(names.len(), 2 * per_alg, "{names:?}");
    assert!(names.contains(&"lib/13.3/sm_90/merge_sort_keys/n1000-back-to-back".to_string()));
    assert!(names.contains(&"lib/13.3/compute_80/find_if/n1000000-delay".to_string()));
    for n in &names {
        assert_eq!(n.parse::<TrialId>().unwrap().to_string(), *n);
    }
    // A fact names an algorithm of the catalog, in its release.
    let ok: gridcheck_report::Subject = "lib/13.3/sm_90/merge_sort_keys".parse().unwrap();
    assert_eq!(names_an_algorithm(&root, &ok), Ok(()));
    let bad: gridcheck_report::Subject = "lib/13.0/sm_90/merge_sort_keys/n1-quiet".parse().unwrap();
    assert!(
        names_an_algorithm(&root, &bad)
            .unwrap_err()
            .contains("names no algorithm of CCCL 13.0")
    );
    std::fs::write(
        root.join(library_contract::CATALOG),
        "[[release]]\nname = 13\n",
    )
    .unwrap();
    let e = Catalog::load(&root).unwrap_err();
    assert!(e.contains("algorithms.toml") && e.contains("line 2"), "{e}");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_nopdl_build_that_still_launches_with_pdl_controls_nothing() {
    let root = scratch("nopdl-pdl");
    program(&root, "merge_sort", &line(2, "null", "null"));
    // Right, but one captured call holds 2 programmatic edges: PDL is on.
    let edges = |n: u32| line(0, "null", "null").replace("}'", &format!(",\"pdl_edges\":{n}}}'"));
    program(&root, "merge_sort-nopdl", &edges(2));
    let ctx = ctx(&root, 30);
    let rec = run(&ctx, &item(&ctx, "sm_90", "merge_sort_keys"));
    let nopdl = &rec.library.as_ref().unwrap().controls[0];
    assert_eq!(
        (nopdl.variant.as_str(), nopdl.outcome.as_str()),
        ("-nopdl", "invalid")
    );
    assert!(
        nopdl
            .message
            .contains("still launches with PDL (2 programmatic edges"),
        "{nopdl:?}"
    );
    assert!(!nopdl.removes_failure());
    // Measured without PDL, the same right answer is a control that removes it.
    program(&root, "merge_sort-nopdl", &edges(0));
    let rec = run(&ctx, &item(&ctx, "sm_90", "merge_sort_keys"));
    let nopdl = &rec.library.as_ref().unwrap().controls[0];
    assert_eq!(nopdl.outcome, "pass", "{nopdl:?}");
    assert_eq!(nopdl.run.as_ref().unwrap().pdl_edges, Some(0));
}

#[test]
fn ptx_the_driver_cannot_jit_runs_as_nvccs_sass_of_the_same_code() {
    let root = scratch("sass80");
    let asked = root.join("asked");
    let unsupported = &format!(
        "echo \"$0\" >> {}; echo 'gridcheck-not-run cudaErrorUnsupportedPtxVersion for this device (sm_90)'",
        asked.display()
    );
    program_at(&root, "compute_80", "merge_sort", unsupported);
    let ctx = ctx(&root, 30);
    // Without a -sass80 build: not supported, with the driver's reason.
    let rec = run(&ctx, &item(&ctx, "compute_80", "merge_sort_keys"));
    assert_eq!(rec.status, Status::NotSupported, "{}", rec.message);
    assert!(
        rec.message.contains("cudaErrorUnsupportedPtxVersion"),
        "{}",
        rec.message
    );
    // With one: its result, said to be of -sass80, and not its own control.
    program_at(
        &root,
        "compute_80",
        "merge_sort-sass80",
        &line(1, "null", "null"),
    );
    program_at(&root, "compute_80", "merge_sort-nopdl", unsupported);
    program_at(
        &root,
        "compute_80",
        "merge_sort-sass80-nopdl",
        &line(0, "null", "null"),
    );
    let shipped_asked = || {
        std::fs::read_to_string(&asked)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.ends_with("compute_80/merge_sort"))
            .count()
    };
    let before = shipped_asked();
    let rec = run(&ctx, &item(&ctx, "compute_80", "merge_sort_keys"));
    // Another case: the shipped PTX is not asked again, and the message
    // still says why the case ran as -sass80.
    let again = run(&ctx, &item(&ctx, "compute_80", "merge_sort_keys"));
    assert_eq!(
        shipped_asked() - before,
        1,
        "the shipped PTX is asked once a run"
    );
    assert_eq!(again.message, rec.message);
    assert_eq!(rec.status, Status::Fail, "{}", rec.message);
    assert!(
        rec.message
            .starts_with("CCCL 13.3 (3.3.0), compute_80 as `-sass80` (this driver cannot JIT"),
        "{}",
        rec.message
    );
    let lib = rec.library.as_ref().unwrap();
    assert!(
        lib.reproducer
            .as_ref()
            .unwrap()
            .command
            .contains("compute_80/merge_sort-sass80 ")
    );
    let variants = outcomes(lib);
    // The PTX's own PDL-off build cannot run here either; nvcc's SASS of it can.
    assert_eq!(
        variants,
        [("-nopdl", "not-run"), ("-sass80-nopdl", "pass")],
        "{:?}",
        lib.controls
    );
    assert!(
        lib.controls[1]
            .message
            .contains("PDL off in the compute_80 code")
    );
}

#[test]
fn controls_run_in_rounds_beside_the_failing_build_and_a_rare_failure_is_not_separated() {
    let root = scratch("rounds");
    // The case's build fails at seeds 1 and 2; -nopdl is always right;
    // the patch is right at seed 1 and wrong at seed 2.
    let by_seed = |at2: &str, other: &str| {
        format!("case \"$*\" in *\"--seed 2\"*) {at2};; *) {other};; esac")
    };
    let (wrong, right) = (line(2, "null", "null"), line(0, "null", "null"));
    program(&root, "merge_sort", &wrong);
    program(&root, "merge_sort-nopdl", &right);
    program(&root, "merge_sort-waitfirst", &by_seed(&wrong, &right));
    let ctx = ctx(&root, 30);
    let mut it = item(&ctx, "sm_90", "merge_sort_keys");
    it.case.control_rounds = 4;
    let rec = run(&ctx, &it);
    let lib = rec.library.as_ref().unwrap();
    assert_eq!(outcomes(lib), [("-nopdl", "pass"), ("-waitfirst", "fail")]);
    // Round 2 ran the build (wrong again) and both controls; then -nopdl,
    // right in 2 runs against 2 of 2 failed, is separated: no round 3.
    assert_eq!(lib.beside.len(), 1);
    assert_eq!(lib.beside[0].wrong, 2);
    assert_eq!(lib.controls[0].rounds.len(), 1);
    assert!(
        lib.controls[0].message.contains(
            "right in all 2 runs (20 calls) while the case's build failed 2 of 2 beside it"
        ),
        "{:?}",
        lib.controls[0]
    );
    assert!(
        lib.controls[1]
            .message
            .contains("(in round 2, right in the 1 before)"),
        "{:?}",
        lib.controls[1]
    );
    assert_eq!(ctx.runner.timeline.spans().len(), 1 + 2 + 3);

    // A build that failed once and is right at every later seed: a
    // control right 4 times is no evidence ((3/4)^4 = 0.32).
    program(
        &root,
        "merge_sort",
        &by_seed(
            &right,
            &format!("case \"$*\" in *\"--seed 1\"*) {wrong};; *) {right};; esac"),
        ),
    );
    let rec = run(&ctx, &it);
    assert_eq!(rec.status, Status::Fail, "{}", rec.message);
    let lib = rec.library.as_ref().unwrap();
    assert_eq!(lib.beside.len(), 3, "every round ran: nothing separated");
    assert_eq!(
        lib.controls[0].outcome, "unseparated",
        "{:?}",
        lib.controls[0]
    );
    assert!(!lib.controls[0].removes_failure());
    assert!(
        lib.controls[0].message.contains("failed 1 of 4 beside it")
            && lib.controls[0]
                .message
                .contains("probability 0.32; not separated"),
        "{}",
        lib.controls[0].message
    );
    std::fs::remove_dir_all(&root).unwrap();
}

mod served;
