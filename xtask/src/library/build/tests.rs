//! The build's options, its error lines and when a binary is rebuilt.
use super::*;

#[test]
fn a_binary_built_by_another_command_is_rebuilt() {
    let job = Job {
        release: 0,
        out: PathBuf::from("target/library/13.0/compute_80/merge_sort-nopdl"),
        program: "merge_sort".into(),
        target: "compute_80".into(),
        variant: "-nopdl".into(),
        include: PathBuf::from("headers-nopdl"),
    };
    let record = |command: &str, ok: bool| {
        json!({"builds": [{"program": "merge_sort", "target": "compute_80",
            "variant": "-nopdl", "ok": ok, "command": command}]})
        .to_string()
    };
    let now = "nvcc -Iheaders-nopdl -DCCCL_DISABLE_PDL merge_sort.cu";
    assert!(recorded_alike(&record(now, true), &job, now));
    // The same binary once built against the unpatched headers.
    let before = "nvcc -Iinclude/cccl -DCCCL_DISABLE_PDL merge_sort.cu";
    assert!(!recorded_alike(&record(before, true), &job, now));
    assert!(!recorded_alike(&record(now, false), &job, now));
    assert!(!recorded_alike("not json", &job, now));
    let other = Job {
        variant: "".into(),
        ..job
    };
    assert!(!recorded_alike(&record(now, true), &other, now));
}

#[test]
fn the_first_located_error_is_found() {
    let log = "warning: x\n/a/cub/agent/b.cuh(12): error: identifier \"q\" is undefined\nmore\n";
    assert_eq!(
        first_error(log).unwrap(),
        "/a/cub/agent/b.cuh(12): error: identifier \"q\" is undefined"
    );
    assert!(first_error("all fine\n").is_none());
}

#[test]
fn build_options_are_checked() {
    let a: Vec<String> = ["--target", "sm_75"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert!(parse_build(&a).unwrap_err().contains("sm_75"));
    let a: Vec<String> = ["--release", "13.0,13.3", "--force"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let b = parse_build(&a).unwrap();
    assert_eq!(b.releases, ["13.0", "13.3"]);
    assert!(b.force);
    assert!(parse_build(&["--jobs".to_string(), "0".to_string()]).is_err());
    let v = parse_build(&["--variant".to_string(), "shipped,-sass80".to_string()]).unwrap();
    assert_eq!(v.variants, ["shipped", "-sass80"]);
}
