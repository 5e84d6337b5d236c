//! `cargo xtask report merge`: result files from several machines merged
//! into a conformance matrix, one row a trial, one column a machine
//! (GPU × driver × nvcc), as Markdown or JSON. When the records of one
//! machine come from several GPUs (`--devices`, or a fleet of machines of
//! one model), its column is followed by one column a device, with the
//! trials that device ran.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use gridcheck_report::{Device, Status, Tier, TrialId, TrialRecord};
use gridcheck_spec::Spec;
use serde::Serialize;

use crate::Result;
use crate::results::{Machine, load_jsonl, machine_txt_driver};
use crate::text::cell;

/// One cell: a trial's status on a machine, with its message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    pub status: Status,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MatrixRow {
    pub trial: TrialId,
    pub tier: Tier,
    pub rule: String,
    /// One a column; `None` where the machine has no result for the trial.
    pub cells: Vec<Option<Cell>>,
}

/// A column: a machine, or one device of a machine that ran on several.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Column {
    #[serde(flatten)]
    pub machine: Machine,
    /// The device, in a per-device column; `None` in the machine's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<Device>,
    /// `M1`, or `M1.2` for the second device of `M1`.
    pub label: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Matrix {
    pub columns: Vec<Column>,
    /// The result files each column came from.
    pub sources: Vec<Vec<String>>,
    pub rows: Vec<MatrixRow>,
}

/// The machine of a results file: the first record with an environment,
/// with `machine.txt` beside the file for the driver version. A file with
/// no GPU record (a model or compile run) is a machine named `no GPU`, with
/// the nvcc its compile records name.
pub fn file_machine(path: &Path, records: &[TrialRecord]) -> Machine {
    let fallback = path
        .parent()
        .and_then(|d| std::fs::read_to_string(d.join("machine.txt")).ok())
        .as_deref()
        .and_then(machine_txt_driver);
    records
        .iter()
        .find_map(|r| Machine::of(r, fallback.as_deref()))
        .unwrap_or_else(|| Machine {
            gpu: "no GPU".into(),
            driver: fallback.unwrap_or_else(|| "-".into()),
            nvcc: records
                .iter()
                .find_map(|r| r.compile.as_ref().map(|c| c.nvcc.clone()))
                .unwrap_or_else(|| "-".into()),
        })
}

impl Matrix {
    /// Reads and merges result files (see [`Matrix::from_records`]). With
    /// the spec, a record written under a test's former name is the test's
    /// now (see [`TrialRecord::under_current_name`]), so that a run before
    /// the rename and one after share a row.
    pub fn merge_files(files: &[PathBuf], spec: Option<&Spec>) -> Result<Matrix> {
        if files.is_empty() {
            return Err("no results files given".into());
        }
        let mut loaded = Vec::new();
        for f in files {
            let mut records = load_jsonl(f)?;
            if let Some(spec) = spec {
                gridcheck_report::under_current_names(&mut records, spec);
            }
            loaded.push((f.clone(), records));
        }
        Ok(Matrix::from_records(&loaded))
    }

    /// Merges the records of several files. A record goes to its own
    /// environment's column, or, without one (model and compile trials), to
    /// its file's machine. Files of one machine share a column; where a
    /// column has a trial twice, the later record wins (a rerun). A machine
    /// whose records name several devices also gets a column a device.
    pub fn from_records(files: &[(PathBuf, Vec<TrialRecord>)]) -> Matrix {
        // Each record with its machine and device, in file order.
        let mut placed: Vec<(&PathBuf, &TrialRecord, Machine, Option<Device>)> = Vec::new();
        for (path, records) in files {
            let default = file_machine(path, records);
            let fallback = path
                .parent()
                .and_then(|d| std::fs::read_to_string(d.join("machine.txt")).ok())
                .as_deref()
                .and_then(machine_txt_driver);
            for r in records {
                let m = Machine::of(r, fallback.as_deref()).unwrap_or_else(|| default.clone());
                let d = r.environment.as_ref().and_then(|e| e.device.clone());
                placed.push((path, r, m, d));
            }
        }
        let mut machines: Vec<Machine> = Vec::new();
        let mut devices: BTreeMap<Machine, BTreeSet<Device>> = BTreeMap::new();
        for (_, _, m, d) in &placed {
            if !machines.contains(m) {
                machines.push(m.clone());
            }
            if let Some(d) = d {
                devices.entry(m.clone()).or_default().insert(d.clone());
            }
        }
        let mut columns: Vec<Column> = Vec::new();
        for (i, m) in machines.iter().enumerate() {
            let label = format!("M{}", i + 1);
            columns.push(Column {
                machine: m.clone(),
                device: None,
                label: label.clone(),
            });
            let of_m = devices
                .get(m)
                .filter(|ds| ds.len() > 1)
                .into_iter()
                .flatten();
            for (k, d) in of_m.enumerate() {
                columns.push(Column {
                    machine: m.clone(),
                    device: Some(d.clone()),
                    label: format!("{label}.{}", k + 1),
                });
            }
        }
        let mut sources: Vec<Vec<String>> = vec![Vec::new(); columns.len()];
        let mut cells: BTreeMap<TrialId, BTreeMap<usize, Cell>> = BTreeMap::new();
        for (path, r, m, d) in &placed {
            let own = columns
                .iter()
                .position(|c| c.machine == *m && c.device.is_none());
            let per_device = columns
                .iter()
                .position(|c| c.machine == *m && c.device.is_some() && c.device == *d);
            for col in own.into_iter().chain(per_device) {
                let src = path.display().to_string();
                if !sources[col].contains(&src) {
                    sources[col].push(src);
                }
                cells.entry(r.trial.clone()).or_default().insert(
                    col,
                    Cell {
                        status: r.status,
                        message: r.message.clone(),
                    },
                );
            }
        }
        let rows = cells
            .into_iter()
            .map(|(trial, by_col)| MatrixRow {
                tier: trial.tier,
                rule: trial.rule.clone(),
                trial,
                cells: (0..columns.len())
                    .map(|i| by_col.get(&i).cloned())
                    .collect(),
            })
            .collect();
        Matrix {
            columns,
            sources,
            rows,
        }
    }

    /// Status counts of one column.
    pub fn counts(&self, col: usize) -> BTreeMap<Status, usize> {
        let mut m = BTreeMap::new();
        for r in &self.rows {
            if let Some(Some(c)) = r.cells.get(col) {
                *m.entry(c.status).or_default() += 1;
            }
        }
        m
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// The matrix as Markdown: the machines with their status counts, then
    /// one row a trial (`—` where a machine has no result for it).
    pub fn to_markdown(&self) -> String {
        let mut s = String::from("# Conformance matrix\n\n");
        s += "| machine | GPU | driver | nvcc | results | statuses |\n|---|---|---|---|---|---|\n";
        for (i, c) in self.columns.iter().enumerate() {
            let counts: Vec<String> = self
                .counts(i)
                .iter()
                .map(|(st, n)| format!("{n} {st}"))
                .collect();
            let gpu = match &c.device {
                Some(d) => format!(
                    "{}, device {}{}",
                    c.machine.gpu,
                    d.label(),
                    d.uuid
                        .as_ref()
                        .filter(|u| Some(*u) != d.pci_bus_id.as_ref())
                        .map(|u| format!(" ({u})"))
                        .unwrap_or_default()
                ),
                None => c.machine.gpu.clone(),
            };
            s += &format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                c.label,
                cell(&gpu),
                cell(&c.machine.driver),
                cell(&c.machine.nvcc),
                cell(&self.sources[i].join(", ")),
                counts.join(", ")
            );
        }
        s += "\n| trial |";
        for c in &self.columns {
            s += &format!(" {} |", c.label);
        }
        s += "\n|---|";
        s += &"---|".repeat(self.columns.len());
        s += "\n";
        for r in &self.rows {
            s += &format!("| {} |", cell(&r.trial.to_string()));
            for c in &r.cells {
                match c {
                    Some(c) => s += &format!(" {} |", c.status),
                    None => s += " — |",
                }
            }
            s += "\n";
        }
        s
    }
}

#[cfg(test)]
mod tests {
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
                device: None,
                toolchain: None,
            }),
            test_hash: None,
            commit: None,
            recorded_as: None,
        }
    }

    #[test]
    fn merges_machines_into_columns() {
        let a = vec![
            rec("model/r.a/t", Status::Pass, None),
            rec("gpu/sm_90/r.a/t", Status::Pass, Some("H100")),
        ];
        let b = vec![
            rec("gpu/sm_90/r.a/t", Status::Fail, Some("H200")),
            rec("gpu/sm_90/r.b/t", Status::Xfail, Some("H200")),
            rec("gpu/sm_90/r.b/t", Status::Pass, Some("H200")),
        ];
        let m =
            Matrix::from_records(&[("a/results.jsonl".into(), a), ("b/results.jsonl".into(), b)]);
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
            md.contains("| M1 | H100 | 580.1 | 13.0.88 | a/results.jsonl | 2 pass |"),
            "{md}"
        );
        assert!(md.contains("| gpu/sm\\_90/r.b/t | — | pass |"), "{md}");
        assert!(md.contains("| trial | M1 | M2 |\n|---|---|---|\n"), "{md}");

        let json: serde_json::Value = serde_json::from_str(&m.to_json()).unwrap();
        assert_eq!(json["columns"][1]["gpu"], "H200");
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
    fn a_machine_that_ran_on_several_devices_gets_a_column_a_device() {
        let two = vec![
            rec("model/r.a/t", Status::Pass, None),
            on(rec("gpu/sm_90/r.a/t", Status::Pass, Some("H200")), 0),
            on(rec("gpu/sm_90/r.b/t", Status::Fail, Some("H200")), 1),
            on(rec("gpu/sm_90/r.c/t", Status::Pass, Some("H200")), 1),
        ];
        let one = vec![on(rec("gpu/sm_90/r.a/t", Status::Pass, Some("H100")), 0)];
        let m = Matrix::from_records(&[
            ("two/results.jsonl".into(), two),
            ("one/results.jsonl".into(), one),
        ]);
        let labels: Vec<&str> = m.columns.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["M1", "M1.1", "M1.2", "M2"]);
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
            md.contains("| M1.2 | H200, device 0000:01:00.0 (GPU-1) | 580.1 | 13.0.88 | two/results.jsonl | 1 pass, 1 fail |"),
            "{md}"
        );
        assert!(
            md.contains("| trial | M1 | M1.1 | M1.2 | M2 |\n|---|---|---|---|---|\n"),
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
        assert_eq!(json["columns"][2]["label"], "M1.2");
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
        let yaml = "rules:
  - id: cdp2.a.b
    source: { seed: s.txt, section: \"1 S\" }
    quote: q
    profile: cdp2
    tests: [t]
tests:
  - name: t
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
";
        let spec =
            gridcheck_spec::load_sources(&[("spec/a.yaml".into(), yaml.into())], None).unwrap();
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
        let cell = m.rows[0].cells[0].as_ref().map(|c| c.status);
        assert_eq!(cell, Some(Status::Pass), "the later record wins");
    }
}
