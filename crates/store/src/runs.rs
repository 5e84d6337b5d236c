//! Runs: one invocation of the harness is one run, with one id and one
//! start time that every record it writes carries (`run_id`,
//! `run_started`), so that a results file the harness appended to several
//! times is split back into its runs and no report mixes two of them.
//!
//! - A new run's id is its start time and a random part,
//!   `20261125T140307Z-3fa9c2d1` ([`RunStamp::new`]); the start time is
//!   RFC 3339 UTC. Only the harness process writes records (its workers
//!   hand their results back), so the id is one for all of a run's
//!   processes. `--resume` continues the last run of the file, id and
//!   start time; `GRIDCHECK_RUN_ID` names the run instead (the shards of
//!   one fleet run share it).
//! - A record written before runs were recorded has neither field. When a
//!   file is read ([`crate::read_results`]) such records get a synthetic
//!   id, [`fill_legacy_run_ids`]: consecutive records (in file order) are
//!   one run until the commit changes, the GPU environment changes (a
//!   field known in both records and different; the device aside: one run
//!   may use several GPUs), a device is another host's (an ordinal or PCI
//!   bus id seen with another UUID) or a trial comes again that
//!   already had a final status (a second run of it; a trial that did not
//!   run, `not-run` or `not-supported`, is what `--resume` runs again). The
//!   id is `legacy-<commit, 8 characters, or nocommit>-<hash of the
//!   group's records, 8 hex digits>`: the same records give the same id,
//!   in any file (a copy of a run is the same run), and two runs never
//!   share one. Such a run has no start time.
//! - [`split_runs`] groups records by id in the order each run first
//!   appears; the latest run is the last to appear ([`RunChoice`]).

use std::collections::{BTreeSet, HashMap};
use std::hash::{BuildHasher, Hasher};
use std::time::{SystemTime, UNIX_EPOCH};

use gridcheck_record::{Device, Environment, Status, TrialId, TrialRecord};

/// The prefix of a synthetic run id.
pub const LEGACY_PREFIX: &str = "legacy-";

/// The environment variable that names a run (the shards of a fleet).
pub const RUN_ID_VAR: &str = "GRIDCHECK_RUN_ID";

/// A run's id and start time, as every record of it carries them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunStamp {
    pub id: String,
    /// RFC 3339 UTC.
    pub started: String,
}

impl RunStamp {
    /// A new run starting now: its id is the UTC start time and a random
    /// part (the process id and the clock's nanoseconds through a randomly
    /// keyed hash).
    pub fn new() -> RunStamp {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        h.write_u128(now.as_nanos());
        RunStamp::at(now.as_secs(), h.finish())
    }

    /// The run starting at `secs` after the epoch, `salt` its random part.
    pub fn at(secs: u64, salt: u64) -> RunStamp {
        let started = rfc3339(secs);
        let compact: String = started.chars().filter(|c| *c != '-' && *c != ':').collect();
        RunStamp {
            id: format!("{compact}-{:08x}", salt as u32),
            started,
        }
    }

    /// The run a harness invocation records: with `--resume` the file's
    /// last run, `resumed` (started now if it has no start time), else the
    /// one `named` (`GRIDCHECK_RUN_ID`: a fleet's shards), else a new one.
    pub fn for_invocation(
        resumed: Option<(String, Option<String>)>,
        named: Option<String>,
    ) -> RunStamp {
        let fresh = RunStamp::new();
        let named = named
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .map(|v| (v, None));
        match resumed.or(named) {
            Some((id, started)) => RunStamp {
                id,
                started: started.unwrap_or(fresh.started),
            },
            None => fresh,
        }
    }

    /// Puts the run on a record.
    pub fn stamp(&self, r: &mut TrialRecord) {
        r.run_id = Some(self.id.clone());
        r.run_started = Some(self.started.clone());
    }
}

impl Default for RunStamp {
    fn default() -> Self {
        RunStamp::new()
    }
}

/// Seconds after the epoch as RFC 3339 UTC (`2026-11-25T14:03:07Z`).
pub fn rfc3339(secs: u64) -> String {
    let rem = secs % 86_400;
    format!(
        "{}T{:02}:{:02}:{:02}Z",
        crate::utc_date(secs),
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// A run id as a report's column shows it: the random part of a harness
/// id, `legacy-` and the hash of a synthetic one, else the id.
pub fn short_id(id: &str) -> String {
    let tail = |s: &str| s.rsplit('-').next().unwrap_or(s).to_string();
    if id.starts_with(LEGACY_PREFIX) {
        format!("{LEGACY_PREFIX}{}", tail(id))
    } else if id.contains('-') {
        tail(id)
    } else {
        id.to_string()
    }
}

/// Whether a record's status is final: one `--resume` does not run again.
fn is_final(s: Status) -> bool {
    !matches!(s, Status::NotRun | Status::NotSupported)
}

/// Whether two GPU environments are of two runs: a field known in both
/// and different (the device aside: one run may use several GPUs of a
/// host; a field one record lacks, as nvcc in a run that found none, is
/// no evidence).
fn env_conflicts(a: &Environment, b: &Environment) -> bool {
    fn differ<T: PartialEq>(x: &Option<T>, y: &Option<T>) -> bool {
        matches!((x, y), (Some(x), Some(y)) if x != y)
    }
    (&a.gpu, &a.sm, &a.driver) != (&b.gpu, &b.sm, &b.driver)
        || differ(&a.nvcc, &b.nvcc)
        || differ(&a.driver_version, &b.driver_version)
        || differ(&a.tuning, &b.tuning)
}

/// Whether a device is another host's than those of a run so far: one
/// they name by the same ordinal or PCI bus id with another UUID.
fn other_host(seen: &[Device], d: &Device) -> bool {
    seen.iter().any(|s| {
        let same_slot = s.ordinal == d.ordinal
            || matches!((&s.pci_bus_id, &d.pci_bus_id), (Some(a), Some(b)) if a == b);
        same_slot && matches!((&s.uuid, &d.uuid), (Some(a), Some(b)) if a != b)
    })
}

/// Gives every record without a run id a synthetic one (see the module
/// docs). Records with an id are left as they are.
pub fn fill_legacy_run_ids(records: &mut [TrialRecord]) {
    let legacy: Vec<usize> = (0..records.len())
        .filter(|&i| records[i].run_id.is_none())
        .collect();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut commit: Option<Option<String>> = None;
    let mut env: Option<Environment> = None;
    let mut devices: Vec<Device> = Vec::new();
    let mut seen: HashMap<TrialId, Status> = HashMap::new();
    for i in legacy {
        let r = &records[i];
        let this_env = r.environment.clone();
        let device = this_env.as_ref().and_then(|e| e.device.clone());
        let new_run = groups.is_empty()
            || commit.as_ref() != Some(&r.commit)
            || matches!((&env, &this_env), (Some(a), Some(b)) if env_conflicts(a, b))
            || device.as_ref().is_some_and(|d| other_host(&devices, d))
            || seen.get(&r.trial).is_some_and(|s| is_final(*s));
        if new_run {
            groups.push(Vec::new());
            commit = Some(r.commit.clone());
            env = None;
            devices.clear();
            seen.clear();
        }
        if let Some(d) = device.filter(|d| !devices.contains(d)) {
            devices.push(d);
        }
        if env.is_none() {
            env = this_env;
        }
        seen.insert(r.trial.clone(), r.status);
        if let Some(g) = groups.last_mut() {
            g.push(i);
        }
    }
    for g in groups {
        // FNV-1a over the group's lines.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &i in &g {
            for b in records[i].to_json_line().bytes().chain([b'\n']) {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
        let commit: String = records[g[0]]
            .commit
            .as_deref()
            .map(|c| c.chars().take(8).collect())
            .unwrap_or_else(|| "nocommit".into());
        let id = format!("{LEGACY_PREFIX}{commit}-{:08x}", (h ^ (h >> 32)) as u32);
        for i in g {
            records[i].run_id = Some(id.clone());
        }
    }
}

/// The records of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecords {
    pub id: String,
    /// RFC 3339 UTC; `None` for a run recorded before start times were.
    pub started: Option<String>,
    /// In file order.
    pub records: Vec<TrialRecord>,
}

impl RunRecords {
    /// A run of synthetic id (recorded before run ids were).
    pub fn is_legacy(&self) -> bool {
        self.id.starts_with(LEGACY_PREFIX)
    }

    /// The devices its GPU records name.
    pub fn devices(&self) -> BTreeSet<Device> {
        self.records
            .iter()
            .filter_map(|r| r.environment.as_ref()?.device.clone())
            .collect()
    }
}

/// Records grouped by run, in the order each run first appears. A record
/// without an id (not read through [`crate::read_results`]) is given a
/// synthetic one first.
pub fn split_runs(mut records: Vec<TrialRecord>) -> Vec<RunRecords> {
    fill_legacy_run_ids(&mut records);
    let mut runs: Vec<RunRecords> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for r in records {
        let id = r.run_id.clone().unwrap_or_default();
        let i = *index.entry(id.clone()).or_insert_with(|| {
            runs.push(RunRecords {
                id,
                started: None,
                records: Vec::new(),
            });
            runs.len() - 1
        });
        let run = &mut runs[i];
        if run.started.is_none() {
            run.started = r.run_started.clone();
        }
        run.records.push(r);
    }
    runs
}

/// Which runs of a file a report is about.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum RunChoice {
    /// The last run to appear in the file.
    #[default]
    Latest,
    /// The run whose id is this, ends with it or starts with it (one run
    /// only).
    Id(String),
    /// Every run.
    All,
}

impl RunChoice {
    /// The chosen runs of `runs` (in file order), or why none: no run at
    /// all, no run of that id, or several.
    pub fn pick(&self, runs: Vec<RunRecords>) -> Result<Vec<RunRecords>, String> {
        if runs.is_empty() {
            return Err("it holds no trial record".into());
        }
        match self {
            RunChoice::All => Ok(runs),
            RunChoice::Latest => Ok(runs.into_iter().last().into_iter().collect()),
            RunChoice::Id(want) => {
                let ids: Vec<String> = runs.iter().map(|r| r.id.clone()).collect();
                let exact = runs.iter().position(|r| r.id == *want);
                let matching: Vec<usize> = (0..runs.len())
                    .filter(|&i| {
                        ids[i].ends_with(want.as_str()) || ids[i].starts_with(want.as_str())
                    })
                    .collect();
                let i = match (exact, matching.as_slice()) {
                    (Some(i), _) | (None, &[i]) => i,
                    (None, []) => {
                        return Err(format!(
                            "no run `{want}` in it (its runs: {})",
                            ids.join(", ")
                        ));
                    }
                    (None, _) => {
                        return Err(format!(
                            "`{want}` names several of its runs: {}",
                            matching
                                .iter()
                                .map(|&i| ids[i].as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ));
                    }
                };
                Ok(runs.into_iter().nth(i).into_iter().collect())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(trial: &str, status: Status, commit: Option<&str>) -> TrialRecord {
        let mut r = TrialRecord::new(trial.parse().unwrap(), status, "m");
        r.commit = commit.map(str::to_string);
        r
    }

    fn ids(rs: &[TrialRecord]) -> Vec<String> {
        rs.iter().map(|r| r.run_id.clone().unwrap()).collect()
    }

    #[test]
    fn times_and_ids() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_795_615_387), "2026-11-25T14:03:07Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        let s = RunStamp::at(1_795_615_387, 0x3fa9_c2d1);
        assert_eq!(s.id, "20261125T140307Z-3fa9c2d1");
        assert_eq!(s.started, "2026-11-25T14:03:07Z");
        assert_eq!(short_id(&s.id), "3fa9c2d1");
        assert_eq!(short_id("legacy-c4844728-0a1b2c3d"), "legacy-0a1b2c3d");
        assert_eq!(short_id("fleet42"), "fleet42");
        // An invocation: resumed, named, or new.
        let resumed = Some(("r1".to_string(), Some("2026-01-01T00:00:00Z".to_string())));
        let r = RunStamp::for_invocation(resumed.clone(), Some("fleet".into()));
        assert_eq!(
            (r.id.as_str(), r.started.as_str()),
            ("r1", "2026-01-01T00:00:00Z")
        );
        let r = RunStamp::for_invocation(Some(("legacy-x".into(), None)), None);
        assert_eq!(r.id, "legacy-x");
        assert!(r.started.ends_with('Z'));
        assert_eq!(
            RunStamp::for_invocation(None, Some(" fleet ".into())).id,
            "fleet"
        );
        assert!(
            !RunStamp::for_invocation(None, Some(" ".into()))
                .id
                .is_empty()
        );
        assert!(RunStamp::for_invocation(None, None).id.contains('T'));
        // Two runs started in one second still differ.
        assert_ne!(RunStamp::new().id, RunStamp::new().id);
        let mut r = rec("model/r/t", Status::Pass, None);
        s.stamp(&mut r);
        let back: TrialRecord = serde_json::from_str(&r.to_json_line()).unwrap();
        assert_eq!(back.run_id.as_deref(), Some(s.id.as_str()));
        assert_eq!(back.run_started.as_deref(), Some("2026-11-25T14:03:07Z"));
    }

    #[test]
    fn old_records_are_split_into_runs_by_commit_environment_and_repeats() {
        let env = |gpu: &str, ordinal: u32| Environment {
            gpu: gpu.into(),
            sm: "sm_90".into(),
            driver: "13.0".into(),
            nvcc: None,
            driver_version: Some("580.1".into()),
            tuning: None,
            tuning_file: None,
            binary: None,
            toolchain: None,
            device: Some(Device {
                ordinal,
                uuid: Some(format!("GPU-{gpu}-{ordinal}")),
                pci_bus_id: Some(format!("0000:0{ordinal}:00.0")),
            }),
        };
        let on = |mut r: TrialRecord, gpu: &str, ordinal: u32| {
            r.environment = Some(env(gpu, ordinal));
            r
        };
        let mut rs = vec![
            // Run 1: two devices of one host, a trial not supported, then
            // resumed (the not-supported trial runs again: same run).
            rec("model/r/a", Status::Pass, Some("aaaa")),
            on(rec("gpu/sm_90/r/a", Status::Pass, Some("aaaa")), "H100", 0),
            on(
                rec("gpu/sm_90/r/b", Status::NotSupported, Some("aaaa")),
                "H100",
                1,
            ),
            on(rec("gpu/sm_90/r/b", Status::Fail, Some("aaaa")), "H100", 1),
            // Run 2: the same commit, a trial again.
            rec("model/r/a", Status::Pass, Some("aaaa")),
            on(rec("gpu/sm_90/r/c", Status::Pass, Some("aaaa")), "H100", 0),
            // Run 3: another GPU (no trial again).
            on(rec("gpu/sm_90/r/d", Status::Pass, Some("aaaa")), "H200", 0),
            // Run 4: another commit.
            rec("model/r/b", Status::Pass, Some("bbbb")),
            on(rec("gpu/sm_90/r/f", Status::Pass, Some("bbbb")), "H100", 0),
            // Run 5: the same GPU model in another host (its device 0 has
            // another UUID), a trial that did not run before.
            on(
                rec("gpu/sm_90/r/e", Status::NotSupported, Some("bbbb")),
                "H100",
                0,
            ),
            on(rec("gpu/sm_90/r/e", Status::Pass, Some("bbbb")), "H100", 0),
        ];
        for r in rs.iter_mut().skip(9) {
            if let Some(d) = r.environment.as_mut().and_then(|e| e.device.as_mut()) {
                d.uuid = Some("GPU-elsewhere".into());
            }
        }
        // A field one record lacks (nvcc) is no evidence of another run.
        if let Some(e) = rs[2].environment.as_mut() {
            e.nvcc = Some("13.0.88".into());
        }
        let mut copy = rs.clone();
        fill_legacy_run_ids(&mut rs);
        let got = ids(&rs);
        assert!(
            got.iter()
                .all(|i| i.starts_with("legacy-aaaa-") || i.starts_with("legacy-bbbb-")),
            "{got:?}"
        );
        let distinct: Vec<&String> = got.iter().fold(Vec::new(), |mut v, i| {
            if !v.contains(&i) {
                v.push(i);
            }
            v
        });
        assert_eq!(distinct.len(), 5, "{got:?}");
        assert_eq!(got[9], got[10], "a trial not run, then run: one run");
        assert!(got[..4].iter().all(|i| *i == got[0]), "{got:?}");
        // The same records give the same ids (a copy of a run is that run).
        fill_legacy_run_ids(&mut copy);
        assert_eq!(ids(&copy), got);
        // A record with an id keeps it.
        let mut kept = vec![rec("model/r/a", Status::Pass, None)];
        RunStamp::at(0, 1).stamp(&mut kept[0]);
        fill_legacy_run_ids(&mut kept);
        assert_eq!(ids(&kept), ["19700101T000000Z-00000001"]);
    }

    #[test]
    fn two_runs_in_one_file_are_split_and_chosen() {
        let (a, b) = (RunStamp::at(100, 0xa), RunStamp::at(200, 0xb));
        let mut rs = Vec::new();
        for (s, status) in [(&a, Status::Pass), (&b, Status::Fail)] {
            for t in ["model/r/x", "model/r/y"] {
                let mut r = rec(t, status, Some("c"));
                s.stamp(&mut r);
                rs.push(r);
            }
        }
        let runs = split_runs(rs);
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].id, a.id);
        assert_eq!(runs[1].started.as_deref(), Some("1970-01-01T00:03:20Z"));
        assert!(runs.iter().all(|r| r.records.len() == 2));
        let latest = RunChoice::Latest.pick(runs.clone()).unwrap();
        assert_eq!(latest.len(), 1);
        assert_eq!(latest[0].id, b.id);
        assert!(latest[0].records.iter().all(|r| r.status == Status::Fail));
        assert_eq!(
            RunChoice::Id("0000000a".into()).pick(runs.clone()).unwrap()[0].id,
            a.id
        );
        assert_eq!(RunChoice::All.pick(runs.clone()).unwrap().len(), 2);
        let e = RunChoice::Id("zz".into()).pick(runs.clone()).unwrap_err();
        assert!(e.contains("no run `zz`") && e.contains(&a.id), "{e}");
        let e = RunChoice::Id("1970".into()).pick(runs).unwrap_err();
        assert!(e.contains("several"), "{e}");
        assert!(RunChoice::Latest.pick(Vec::new()).is_err());
    }
}
