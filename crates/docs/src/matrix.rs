//! `cargo xtask report merge`: result files merged into a conformance
//! matrix, one row a trial, one column a run (`gridcheck_report::runs`:
//! a file the harness appended to several times holds several runs, and
//! two runs are never one column, whatever their GPU), labelled with its
//! GPU, driver, nvcc, start date and run id, as Markdown or JSON. When the
//! records of one run come from several GPUs (`--devices`, or the shards
//! of a fleet sharing `GRIDCHECK_RUN_ID`), its column is followed by one
//! column a device, with the trials that device ran.
//!
//! `--by-toolchain` ([`MergeOptions::by_toolchain`]): one row a trial across
//! toolchains, a machine-code trial keyed without its toolchain
//! (`sass/13.0/sm_90/r/t` and `sass/13.5/sm_90/r/t` share the row
//! `sass/sm_90/r/t`); each `--toolchain` run of `cargo xtask conformance` is
//! a harness invocation of its own, so a run of its own, a column. Two
//! trials on one row of one column is an error naming both, never one
//! hiding the other (a resumed trial, the same trial twice, is its later
//! record, as without the option).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use gridcheck_report::runs::short_id;
use gridcheck_report::{Device, Status, Tier, TrialId, TrialRecord};
use gridcheck_spec::Spec;
use serde::Serialize;

use crate::Result;
use crate::results::{Machine, load_jsonl, machine_txt_driver};
use crate::text::cell;

/// One cell: a trial's status in a run, with its message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    pub status: Status,
    pub message: String,
    /// The record's own trial where the row's key is not it (a
    /// machine-code trial under `--by-toolchain`: `sass/13.5/sm_90/r/t` in
    /// the row `sass/sm_90/r/t`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trial: Option<TrialId>,
}

/// How result files are merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MergeOptions {
    /// One row a trial across toolchains: machine-code trials keyed
    /// without their toolchain.
    pub by_toolchain: bool,
    /// One column an input (the records given together) rather than a run:
    /// for inputs already chosen one a column (the site's table of
    /// toolchains).
    pub column_an_input: bool,
}

/// A trial's row under `opts`: itself, or a machine-code trial without its
/// toolchain.
pub fn row_key(trial: &TrialId, opts: MergeOptions) -> TrialId {
    if opts.by_toolchain {
        trial.without_toolchain()
    } else {
        trial.clone()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MatrixRow {
    pub trial: TrialId,
    pub tier: Tier,
    pub rule: String,
    /// One a column; `None` where the run has no result for the trial.
    pub cells: Vec<Option<Cell>>,
    /// The runs that have the trial gave it different statuses.
    pub differs: bool,
}

/// A column: a run, or one device of a run that ran on several.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Column {
    #[serde(flatten)]
    pub machine: Machine,
    pub run_id: String,
    /// When the run started (RFC 3339), or, for a run recorded before
    /// start times were, its folder's date (`records/<gpu>/<date>/`) with
    /// `(folder)`, else `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started: Option<String>,
    /// The device, in a per-device column; `None` in the run's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<Device>,
    /// `R1`, or `R1.2` for the second device of `R1`.
    pub label: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Matrix {
    pub columns: Vec<Column>,
    /// The result files each column came from.
    pub sources: Vec<Vec<String>>,
    pub rows: Vec<MatrixRow>,
    /// Rows are trials across toolchains (`--by-toolchain`).
    pub by_toolchain: bool,
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
            toolchain: Machine::toolchain_of(records),
        })
}

/// The date of a results file's folder (`records/<gpu>/<date>/`), marked
/// as the folder's.
fn folder_date(path: &Path) -> Option<String> {
    let name = path.parent()?.file_name()?.to_str()?;
    crate::results::is_date(name).then(|| format!("{name} (folder)"))
}

impl Matrix {
    /// Reads and merges result files (see [`Matrix::from_records`]). With
    /// the spec, a record written under a test's former name is the test's
    /// now (see [`TrialRecord::under_current_name`]), so that a run before
    /// the rename and one after share a row.
    pub fn merge_files(files: &[PathBuf], spec: Option<&Spec>) -> Result<Matrix> {
        Matrix::merge_files_with(files, spec, MergeOptions::default())
    }

    /// [`Matrix::merge_files`] under `opts` (`--by-toolchain`).
    pub fn merge_files_with(
        files: &[PathBuf],
        spec: Option<&Spec>,
        opts: MergeOptions,
    ) -> Result<Matrix> {
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
        Matrix::from_records(&loaded, opts)
    }

    /// Merges the records of several files, one column a run (records of
    /// one run id, in whichever files; with
    /// [`MergeOptions::column_an_input`], one an input); a record without
    /// an environment (model and compile trials) has its file's machine
    /// when its run has none. Where a run has a trial twice (a resumed
    /// trial), the later record wins; two trials on one row of a column
    /// (see [`MergeOptions::by_toolchain`]) are an error naming both. A run
    /// whose records name several devices also gets a column a device.
    pub fn from_records(
        files: &[(PathBuf, Vec<TrialRecord>)],
        opts: MergeOptions,
    ) -> Result<Matrix> {
        let p = Placement::of(files, opts);
        let (columns, col_key) = p.columns();
        let mut sources: Vec<Vec<String>> = vec![Vec::new(); columns.len()];
        // Row → column → (cell, the record's trial, its file).
        let mut cells: BTreeMap<TrialId, BTreeMap<usize, PlacedCell>> = BTreeMap::new();
        for (path, r, key, d) in &p.placed {
            let here = |c: &usize| col_key[*c] == key;
            let own = (0..columns.len()).find(|c| here(c) && columns[*c].device.is_none());
            let per_device = (0..columns.len())
                .find(|c| here(c) && columns[*c].device.is_some() && columns[*c].device == *d);
            let row = row_key(&r.trial, opts);
            for col in own.into_iter().chain(per_device) {
                let src = path.display().to_string();
                if !sources[col].contains(&src) {
                    sources[col].push(src);
                }
                let by_col = cells.entry(row.clone()).or_default();
                if let Some((_, other, other_path)) = by_col.get(&col)
                    && *other != r.trial
                {
                    return Err(format!(
                        "`{other}` ({}) and `{}` ({}) would both be the row `{row}` of column {} \
                         (run `{}`): a column holds one record a row (under --by-toolchain, each \
                         toolchain's trials must come from a run of their own: was one \
                         GRIDCHECK_RUN_ID given to several toolchains?)",
                        other_path.display(),
                        r.trial,
                        path.display(),
                        columns[col].label,
                        short_id(&columns[col].run_id)
                    ));
                }
                let cell = Cell {
                    status: r.status,
                    message: r.message.clone(),
                    trial: (row != r.trial).then(|| r.trial.clone()),
                };
                by_col.insert(col, (cell, r.trial.clone(), path.clone()));
            }
        }
        let rows = cells
            .into_iter()
            .map(|(trial, by_col)| row(&columns, trial, by_col))
            .collect();
        Ok(Matrix {
            columns,
            sources,
            rows,
            by_toolchain: opts.by_toolchain,
        })
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

    /// The matrix as Markdown: the runs with their status counts, then
    /// one row a trial (`—` where a run has no result for it).
    pub fn to_markdown(&self) -> String {
        let mut s = String::from("# Conformance matrix\n\n");
        s += "One column a run (a harness invocation: its records share a run id; `legacy-` ids are \
              given to records written before runs were recorded).\n\n";
        if self.by_toolchain {
            s += "One row a trial across toolchains: a machine-code trial is keyed without its \
                  toolchain (`sass/13.0/sm_90/r/t` and `sass/13.5/sm_90/r/t` are the row \
                  `sass/sm_90/r/t`); each run's kernels' toolchain is in the table below.\n\n";
        }
        s += "| run | GPU | driver | nvcc where the harness ran | kernels built by | started | run id | results | statuses |\n\
              |---|---|---|---|---|---|---|---|---|\n";
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
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                c.label,
                cell(&gpu),
                cell(&c.machine.driver),
                cell(&c.machine.nvcc),
                cell(c.machine.toolchain.as_deref().unwrap_or("not recorded")),
                cell(c.started.as_deref().unwrap_or("not recorded")),
                crate::text::code(&short_id(&c.run_id)),
                cell(&self.sources[i].join(", ")),
                counts.join(", ")
            );
        }
        let differ = self.rows.iter().filter(|r| r.differs).count();
        if differ > 0 {
            s += &format!(
                "\n{differ} trial(s) have different statuses in different runs, marked **≠** \
                 (`cargo xtask report diff BASE NEW` says what changed).\n"
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
            let mark = if r.differs { " **≠**" } else { "" };
            s += &format!("| {}{mark} |", cell(&r.trial.to_string()));
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

/// A cell with the record's own trial and file, for the error that names
/// two records on one row of a column.
type PlacedCell = (Cell, TrialId, PathBuf);

/// A row from its cells: `differs` where the columns of runs (not those of
/// single devices) that have it gave it different statuses.
fn row(columns: &[Column], trial: TrialId, by_col: BTreeMap<usize, PlacedCell>) -> MatrixRow {
    let statuses: BTreeSet<Status> = by_col
        .iter()
        .filter(|(i, _)| columns[**i].device.is_none())
        .map(|(_, c)| c.0.status)
        .collect();
    MatrixRow {
        tier: trial.tier,
        rule: trial.rule.clone(),
        trial,
        cells: (0..columns.len())
            .map(|i| by_col.get(&i).map(|c| c.0.clone()))
            .collect(),
        differs: statuses.len() > 1,
    }
}

/// The records of the inputs, each with the key of its column (its run
/// id, or its input's index), and what each key's columns are labelled
/// with.
struct Placement {
    /// Each record with its file, column key and device, in file order.
    placed: Vec<(PathBuf, TrialRecord, String, Option<Device>)>,
    keys: Vec<String>,
    run_of: BTreeMap<String, String>,
    machine: BTreeMap<String, Machine>,
    toolchain: BTreeMap<String, String>,
    started: BTreeMap<String, String>,
    devices: BTreeMap<String, BTreeSet<Device>>,
}

impl Placement {
    fn of(files: &[(PathBuf, Vec<TrialRecord>)], opts: MergeOptions) -> Placement {
        let mut p = Placement {
            placed: Vec::new(),
            keys: Vec::new(),
            run_of: BTreeMap::new(),
            machine: BTreeMap::new(),
            toolchain: BTreeMap::new(),
            started: BTreeMap::new(),
            devices: BTreeMap::new(),
        };
        for (i, (path, records)) in files.iter().enumerate() {
            let default = file_machine(path, records);
            let fallback = path
                .parent()
                .and_then(|d| std::fs::read_to_string(d.join("machine.txt")).ok())
                .as_deref()
                .and_then(machine_txt_driver);
            let folder = folder_date(path);
            let mut records = records.clone();
            gridcheck_report::runs::fill_legacy_run_ids(&mut records);
            for r in records {
                let run = r.run_id.clone().unwrap_or_default();
                let key = if opts.column_an_input {
                    format!("input {i}")
                } else {
                    run.clone()
                };
                if !p.keys.contains(&key) {
                    p.keys.push(key.clone());
                    p.run_of.insert(key.clone(), run);
                }
                if let Some(m) = Machine::of(&r, fallback.as_deref()) {
                    p.machine.entry(key.clone()).or_insert(m);
                }
                if let Some(t) = r.kernels_toolchain() {
                    p.toolchain.entry(key.clone()).or_insert(t.label());
                }
                let when = r.run_started.clone().or_else(|| folder.clone());
                if let Some(w) = when {
                    p.started.entry(key.clone()).or_insert(w);
                }
                let d = r.environment.as_ref().and_then(|e| e.device.clone());
                if let Some(d) = &d {
                    p.devices.entry(key.clone()).or_default().insert(d.clone());
                }
                p.placed.push((path.clone(), r, key, d));
            }
            for key in &p.keys {
                p.machine
                    .entry(key.clone())
                    .or_insert_with(|| default.clone());
            }
        }
        p
    }

    /// The columns, a key's own and one a device where its records name
    /// several, with each column's key.
    fn columns(&self) -> (Vec<Column>, Vec<&String>) {
        let mut columns: Vec<Column> = Vec::new();
        let mut col_key: Vec<&String> = Vec::new();
        for (i, key) in self.keys.iter().enumerate() {
            let label = format!("R{}", i + 1);
            let mut m = self.machine[key].clone();
            if m.toolchain.is_none() {
                m.toolchain = self.toolchain.get(key).cloned();
            }
            let column = |device: Option<Device>, label: String| Column {
                machine: m.clone(),
                run_id: self.run_of[key].clone(),
                started: self.started.get(key).cloned(),
                device,
                label,
            };
            columns.push(column(None, label.clone()));
            col_key.push(key);
            let of_run = self
                .devices
                .get(key)
                .filter(|ds| ds.len() > 1)
                .into_iter()
                .flatten();
            for (k, d) in of_run.enumerate() {
                columns.push(column(Some(d.clone()), format!("{label}.{}", k + 1)));
                col_key.push(key);
            }
        }
        (columns, col_key)
    }
}

#[cfg(test)]
mod tests;
