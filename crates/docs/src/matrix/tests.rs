//! Tests of the conformance matrix: columns a run, a device, rows a trial.

use super::*;
use gridcheck_report::Environment;

fn rec(trial: &str, status: Status, gpu: Option<&str>) -> TrialRecord {
    TrialRecord {
        trial: trial.parse().unwrap(),
        status,
        message: format!("{status} msg"),
        model: None,
        hardware: None,
        compile: None,
        environment: gpu.map(|g| Environment {
            gpu: g.into(),
            sm: "sm_90".into(),
            driver: "13.0".into(),
            nvcc: Some("13.0.88".into()),
            driver_version: Some("580.1".into()),
            tuning: None,
            tuning_file: None,
            binary: None,
            toolchain: None,
            device: None,
        }),
        test_hash: None,
        commit: None,
        recorded_as: None,
        run_id: None,
        run_started: None,
        escalation: None,
        library: None,
    }
}

/// Records of one run: the run's id and start time on each.
fn run(secs: u64, records: Vec<TrialRecord>) -> Vec<TrialRecord> {
    let s = gridcheck_report::RunStamp::at(secs, secs);
    records
        .into_iter()
        .map(|mut r| {
            s.stamp(&mut r);
            r
        })
        .collect()
}

#[test]
fn merges_machines_into_columns() {
    let a = run(
        86_400,
        vec![
            rec("model/r.a/t", Status::Pass, None),
            rec("gpu/sm_90/r.a/t", Status::Pass, Some("H100")),
        ],
    );
    // One run that ran a trial twice (resumed): the later record wins.
    let b = run(
        2 * 86_400,
        vec![
            rec("gpu/sm_90/r.a/t", Status::Fail, Some("H200")),
            rec("gpu/sm_90/r.b/t", Status::NotRun, Some("H200")),
            rec("gpu/sm_90/r.b/t", Status::Pass, Some("H200")),
        ],
    );
    let m = Matrix::from_records(
        &[("a/results.jsonl".into(), a), ("b/results.jsonl".into(), b)],
        MergeOptions::default(),
    )
    .unwrap();
    let gpus: Vec<&str> = m.columns.iter().map(|c| c.machine.gpu.as_str()).collect();
    assert_eq!(gpus, ["H100", "H200"]);
    assert_eq!(m.columns[0].machine.driver, "580.1");
    let trials: Vec<String> = m.rows.iter().map(|r| r.trial.to_string()).collect();
    assert_eq!(
        trials,
        ["gpu/sm_90/r.a/t", "gpu/sm_90/r.b/t", "model/r.a/t"]
    );
    let st = |row: usize, col: usize| m.rows[row].cells[col].as_ref().map(|c| c.status);
    assert_eq!(st(0, 0), Some(Status::Pass));
    assert_eq!(st(0, 1), Some(Status::Fail));
    assert_eq!(st(1, 0), None);
    assert_eq!(st(1, 1), Some(Status::Pass), "the later record wins");
    // The model record has no environment: it belongs to its file's GPU.
    assert_eq!(st(2, 0), Some(Status::Pass));
    assert_eq!(st(2, 1), None);
    assert_eq!(m.counts(1)[&Status::Fail], 1);

    let md = m.to_markdown();
    assert!(
        md.contains(
            "| R1 | H100 | 580.1 | 13.0.88 | not recorded | 1970-01-02T00:00:00Z | `00015180` | a/results.jsonl | 2 pass |"
        ),
        "{md}"
    );
    assert!(md.contains("| gpu/sm\\_90/r.b/t | — | pass |"), "{md}");
    assert!(md.contains("| trial | R1 | R2 |\n|---|---|---|\n"), "{md}");
    assert!(
        md.contains("| gpu/sm\\_90/r.a/t **≠** | pass | fail |"),
        "{md}"
    );
    assert!(md.contains("1 trial(s) have different statuses"), "{md}");
    assert_eq!(m.rows.iter().filter(|r| r.differs).count(), 1);

    let json: serde_json::Value = serde_json::from_str(&m.to_json()).unwrap();
    assert_eq!(json["columns"][1]["gpu"], "H200");
    assert_eq!(json["columns"][1]["run_id"], "19700103T000000Z-0002a300");
    assert_eq!(json["rows"][0]["cells"][1]["status"], "fail");
    assert!(json["rows"][1]["cells"][0].is_null());
}

fn on(mut r: TrialRecord, ordinal: u32) -> TrialRecord {
    if let Some(e) = r.environment.as_mut() {
        e.device = Some(Device {
            ordinal,
            uuid: Some(format!("GPU-{ordinal}")),
            pci_bus_id: Some(format!("0000:{ordinal:02X}:00.0")),
        });
    }
    r
}

#[test]
fn a_run_on_several_devices_gets_a_column_a_device() {
    let two = run(
        1,
        vec![
            rec("model/r.a/t", Status::Pass, None),
            on(rec("gpu/sm_90/r.a/t", Status::Pass, Some("H200")), 0),
            on(rec("gpu/sm_90/r.b/t", Status::Fail, Some("H200")), 1),
            on(rec("gpu/sm_90/r.c/t", Status::Pass, Some("H200")), 1),
        ],
    );
    let one = run(
        2,
        vec![on(rec("gpu/sm_90/r.a/t", Status::Pass, Some("H100")), 0)],
    );
    let m = Matrix::from_records(
        &[
            ("two/results.jsonl".into(), two),
            ("one/results.jsonl".into(), one),
        ],
        MergeOptions::default(),
    )
    .unwrap();
    let labels: Vec<&str> = m.columns.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, ["R1", "R1.1", "R1.2", "R2"]);
    let devs: Vec<Option<u32>> = m
        .columns
        .iter()
        .map(|c| c.device.as_ref().map(|d| d.ordinal))
        .collect();
    assert_eq!(
        devs,
        [None, Some(0), Some(1), None],
        "one device: no device column"
    );
    let row = |t: &str| {
        let r = m.rows.iter().find(|r| r.trial.to_string() == t).unwrap();
        r.cells
            .iter()
            .map(|c| c.as_ref().map(|c| c.status))
            .collect::<Vec<_>>()
    };
    // The machine's column has every trial, each device's those it ran.
    assert_eq!(
        row("gpu/sm_90/r.a/t"),
        [
            Some(Status::Pass),
            Some(Status::Pass),
            None,
            Some(Status::Pass)
        ]
    );
    assert_eq!(
        row("gpu/sm_90/r.b/t"),
        [Some(Status::Fail), None, Some(Status::Fail), None]
    );
    // A trial without a device (the model tier) is the machine's only.
    assert_eq!(row("model/r.a/t"), [Some(Status::Pass), None, None, None]);
    assert_eq!(m.counts(0).values().sum::<usize>(), 4);
    assert_eq!(m.counts(2).values().sum::<usize>(), 2);

    let md = m.to_markdown();
    assert!(
        md.contains("| R1.2 | H200, device 0000:01:00.0 (GPU-1) | 580.1 | 13.0.88 | not recorded | 1970-01-01T00:00:01Z | `00000001` | two/results.jsonl | 1 pass, 1 fail |"),
        "{md}"
    );
    assert!(
        md.contains("| trial | R1 | R1.1 | R1.2 | R2 |\n|---|---|---|---|---|\n"),
        "{md}"
    );
    assert!(
        md.contains("| gpu/sm\\_90/r.b/t | fail | — | fail | — |"),
        "{md}"
    );
    let json: serde_json::Value = serde_json::from_str(&m.to_json()).unwrap();
    assert_eq!(json["columns"][0]["gpu"], "H200");
    assert!(json["columns"][0].get("device").is_none());
    assert_eq!(json["columns"][2]["device"]["uuid"], "GPU-1");
    assert_eq!(json["columns"][2]["label"], "R1.2");
}

#[test]
fn two_runs_of_one_gpu_on_two_dates_are_two_runs_not_two_devices() {
    // As the H100 runs in records/ were written (no run id): one GPU model
    // and driver, a machine a day (its own UUID), a commit a day.
    let day = |commit: &str, uuid: &str, status: Status| {
        let mut v = vec![
            rec("model/r.a/t", Status::Pass, None),
            rec("gpu/sm_90/r.a/t", status, Some("H100")),
        ];
        for r in &mut v {
            r.commit = Some(commit.into());
            if let Some(e) = r.environment.as_mut() {
                e.device = Some(Device {
                    ordinal: 0,
                    uuid: Some(uuid.into()),
                    pci_bus_id: Some("0000:00:06.0".into()),
                });
            }
        }
        v
    };
    let m = Matrix::from_records(
        &[
            (
                "records/h100/2026-11-24/results.jsonl".into(),
                day("aaaa", "GPU-a", Status::Pass),
            ),
            (
                "records/h100/2026-11-25/results.jsonl".into(),
                day("bbbb", "GPU-b", Status::Fail),
            ),
        ],
        MergeOptions::default(),
    )
    .unwrap();
    let labels: Vec<&str> = m.columns.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, ["R1", "R2"], "two runs, no device columns");
    assert!(m.columns.iter().all(|c| c.device.is_none()));
    assert!(m.columns.iter().all(|c| c.run_id.starts_with("legacy-")));
    assert_ne!(m.columns[0].run_id, m.columns[1].run_id);
    assert_eq!(m.columns[0].started.as_deref(), Some("2026-11-24 (folder)"));
    let row = &m.rows[0];
    assert_eq!(row.trial.to_string(), "gpu/sm_90/r.a/t");
    let st: Vec<Option<Status>> = row
        .cells
        .iter()
        .map(|c| c.as_ref().map(|c| c.status))
        .collect();
    assert_eq!(
        st,
        [Some(Status::Pass), Some(Status::Fail)],
        "no record hides another"
    );
    let md = m.to_markdown();
    assert!(
        md.contains(
            "| R2 | H100 | 580.1 | 13.0.88 | not recorded | 2026-11-25 (folder) | `legacy-"
        ),
        "{md}"
    );

    // Two runs appended to one file are two columns too; one run in two
    // files (the shards of a fleet, one GRIDCHECK_RUN_ID) is one.
    let both: Vec<TrialRecord> = run(10, day("c", "GPU-a", Status::Pass))
        .into_iter()
        .chain(run(20, day("c", "GPU-a", Status::Fail)))
        .collect();
    let m = Matrix::from_records(
        &[("target/gridcheck/results.jsonl".into(), both)],
        MergeOptions::default(),
    )
    .unwrap();
    assert_eq!(m.columns.len(), 2);
    let all = run(30, day("c", "GPU-a", Status::Pass));
    let m = Matrix::from_records(
        &[
            ("shard-1.jsonl".into(), all[..1].to_vec()),
            ("shard-2.jsonl".into(), all[1..].to_vec()),
        ],
        MergeOptions::default(),
    )
    .unwrap();
    assert_eq!(m.columns.len(), 1);
    assert_eq!(m.sources[0], ["shard-1.jsonl", "shard-2.jsonl"]);
}

#[test]
fn a_file_without_gpu_records_is_named_so() {
    let m = file_machine(
        Path::new("x/results.jsonl"),
        &[rec("model/r.a/t", Status::Pass, None)],
    );
    assert_eq!(m.gpu, "no GPU");
    assert!(Matrix::merge_files(&[], None).is_err());
    let e = Matrix::merge_files(&["/nonexistent/results.jsonl".into()], None).unwrap_err();
    assert!(e.contains("/nonexistent/results.jsonl"), "{e}");
}

#[test]
fn a_run_before_a_rename_and_one_after_share_a_row() {
    let yaml = gridcheck_fixture::OneRule::new().id("cdp2.a.b").tests(
        "  - name: t
    formerly: [old-t]
    kind: litmus
    memory: { x: 0 }
    kernels:
      - kernel: k
        launch: host
        threads:
          t0: [store x 1]
    condition: exists x == 1
    expect: required
",
    );
    let spec = gridcheck_spec::load_sources(&[("spec/a.yaml".into(), yaml.yaml())], None).unwrap();
    let dir = std::env::temp_dir().join(format!("gridcheck-matrix-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, r: TrialRecord| {
        let p = dir.join(name);
        std::fs::write(&p, r.to_json_line() + "\n").unwrap();
        p
    };
    let files = [
        write(
            "before.jsonl",
            rec("gpu/sm_90/cdp2.a.b/old-t", Status::Fail, Some("H100")),
        ),
        write(
            "after.jsonl",
            rec("gpu/sm_90/cdp2.a.b/t", Status::Pass, Some("H100")),
        ),
    ];
    let as_written = Matrix::merge_files(&files, None).unwrap();
    assert_eq!(as_written.rows.len(), 2);
    let m = Matrix::merge_files(&files, Some(&spec)).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(m.rows.len(), 1);
    assert_eq!(m.rows[0].trial.to_string(), "gpu/sm_90/cdp2.a.b/t");
    // Two runs: a column each, on one row.
    let cells: Vec<Option<Status>> = m.rows[0]
        .cells
        .iter()
        .map(|c| c.as_ref().map(|c| c.status))
        .collect();
    assert_eq!(cells, [Some(Status::Fail), Some(Status::Pass)]);
}

fn toolchain(release: &str) -> gridcheck_report::ToolchainRecord {
    gridcheck_report::ToolchainRecord {
        release: release.into(),
        nvcc: format!("{release}.9"),
        devrt: format!("nvidia-cuda-runtime {release}.9, /x/libcudadevrt.a (1 bytes, fnv1a64 0b)"),
        source: format!(".toolchains/{release}"),
        disassembler: None,
    }
}

/// A machine-code record of `release`, with the compile summary it carries.
fn sass(release: &str, test: &str, status: Status) -> TrialRecord {
    let mut r = rec(&format!("sass/{release}/sm_90/r.a/{test}"), status, None);
    r.compile = Some(gridcheck_report::CompileSummary {
        nvcc: format!("{release}.9"),
        command: "nvcc -cubin".into(),
        success: true,
        output: String::new(),
        toolchain: Some(toolchain(release)),
    });
    r
}

/// A GPU record whose kernels `release` built.
fn gpu_built_by(release: &str, status: Status) -> TrialRecord {
    let mut r = rec("gpu/sm_90/r.a/t", status, Some("H100"));
    if let Some(e) = r.environment.as_mut() {
        e.toolchain = Some(toolchain(release));
    }
    r
}

#[test]
fn by_toolchain_one_row_a_trial_across_toolchains() {
    // Two `--toolchain` runs: each a harness invocation, so a run id each.
    let old = run(
        10,
        vec![
            sass("13.0", "t", Status::Pass),
            sass("13.0", "u", Status::Pass),
            gpu_built_by("13.0", Status::Pass),
        ],
    );
    let new = run(
        20,
        vec![
            sass("13.5", "t", Status::Fail),
            gpu_built_by("13.5", Status::Pass),
        ],
    );
    let files = [
        ("a/results.jsonl".into(), old.clone()),
        ("b/results.jsonl".into(), new.clone()),
    ];
    // Without the option: a row a toolchain's trial.
    let plain = Matrix::from_records(&files, MergeOptions::default()).unwrap();
    assert_eq!(plain.rows.len(), 4);
    let opts = MergeOptions {
        by_toolchain: true,
        ..Default::default()
    };
    let m = Matrix::from_records(&files, opts).unwrap();
    let rows: Vec<String> = m.rows.iter().map(|r| r.trial.to_string()).collect();
    assert_eq!(
        rows,
        ["gpu/sm_90/r.a/t", "sass/sm_90/r.a/t", "sass/sm_90/r.a/u"]
    );
    let t = &m.rows[1];
    assert!(t.differs);
    let cell = |c: usize| t.cells[c].as_ref().unwrap();
    assert_eq!(
        (cell(0).status, cell(1).status),
        (Status::Pass, Status::Fail)
    );
    assert_eq!(
        cell(1).trial.as_ref().map(|t| t.to_string()).as_deref(),
        Some("sass/13.5/sm_90/r.a/t"),
        "the cell keeps its record's trial"
    );
    assert!(m.rows[2].cells[1].is_none(), "13.5 did not run u");
    let tcs: Vec<Option<&str>> = m
        .columns
        .iter()
        .map(|c| c.machine.toolchain.as_deref())
        .collect();
    assert_eq!(
        tcs,
        [Some("13.0 (nvcc 13.0.9)"), Some("13.5 (nvcc 13.5.9)")]
    );
    let md = m.to_markdown();
    assert!(md.contains("One row a trial across toolchains"), "{md}");
    assert!(
        md.contains("| R2 | H100 | 580.1 | 13.0.88 | 13.5 (nvcc 13.5.9) | 1970-01-01T00:00:20Z |"),
        "{md}"
    );
    assert!(
        md.contains("| sass/sm\\_90/r.a/t **≠** | pass | fail |"),
        "{md}"
    );
    let json: serde_json::Value = serde_json::from_str(&m.to_json()).unwrap();
    assert_eq!(json["by_toolchain"], true);
    assert_eq!(json["columns"][1]["toolchain"], "13.5 (nvcc 13.5.9)");
    assert_eq!(
        json["rows"][1]["cells"][1]["trial"],
        "sass/13.5/sm_90/r.a/t"
    );
    assert!(json["rows"][0]["cells"][0].get("trial").is_none());

    // A run without GPU records takes its toolchain from its compile records.
    let m = Matrix::from_records(
        &[(
            "c/results.jsonl".into(),
            run(30, vec![sass("13.2", "t", Status::Pass)]),
        )],
        opts,
    )
    .unwrap();
    assert_eq!(m.columns[0].machine.gpu, "no GPU");
    assert_eq!(
        m.columns[0].machine.toolchain.as_deref(),
        Some("13.2 (nvcc 13.2.9)")
    );

    // One run id for two toolchains (one GRIDCHECK_RUN_ID given to both):
    // two trials on one row of one column, an error naming both.
    let shared = run(40, vec![sass("13.0", "t", Status::Pass)]);
    let mut other = run(40, vec![sass("13.5", "t", Status::Fail)]);
    other[0].run_id = shared[0].run_id.clone();
    let e = Matrix::from_records(
        &[
            ("x/results.jsonl".into(), shared.clone()),
            ("y/results.jsonl".into(), other.clone()),
        ],
        opts,
    )
    .unwrap_err();
    assert!(
        e.contains("`sass/13.0/sm_90/r.a/t` (x/results.jsonl)")
            && e.contains("`sass/13.5/sm_90/r.a/t` (y/results.jsonl)")
            && e.contains("row `sass/sm_90/r.a/t`"),
        "{e}"
    );
    // Without the option they are two rows; a resumed trial (the same
    // trial twice in a run) is still its later record.
    assert!(
        Matrix::from_records(
            &[("x".into(), shared.clone()), ("y".into(), other)],
            MergeOptions::default()
        )
        .is_ok()
    );
    let mut twice = shared.clone();
    twice.extend(run(40, vec![sass("13.0", "t", Status::Fail)]));
    let m = Matrix::from_records(&[("x".into(), twice)], opts).unwrap();
    assert_eq!(m.rows[0].cells[0].as_ref().unwrap().status, Status::Fail);
}

#[test]
fn a_column_an_input_keeps_inputs_of_one_run_apart() {
    let both = run(
        50,
        vec![
            sass("13.0", "t", Status::Pass),
            sass("13.5", "t", Status::Fail),
        ],
    );
    let opts = MergeOptions {
        by_toolchain: true,
        column_an_input: true,
    };
    let m = Matrix::from_records(
        &[
            ("13.0".into(), both[..1].to_vec()),
            ("13.5".into(), both[1..].to_vec()),
        ],
        opts,
    )
    .unwrap();
    assert_eq!(m.columns.len(), 2);
    assert_eq!(m.columns[0].run_id, m.columns[1].run_id);
    assert_eq!(m.rows.len(), 1);
    assert!(m.rows[0].differs);
    assert_eq!(
        m.columns[1].machine.toolchain.as_deref(),
        Some("13.5 (nvcc 13.5.9)")
    );
}
