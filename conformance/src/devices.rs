//! The GPUs the GPU tier runs on (`--devices all|0,1,...`): which ones,
//! which test runs on which, and one worker at a time on each.
//!
//! Without the flag the tier runs on device 0 as it always has: workers
//! inherit the harness's environment. With it, every selected device gets
//! its own lock (one worker process at a time on each, several devices at
//! once), and the GPU tests of the run are dealt out over the devices in
//! name order, round robin: a test listed by two rules runs once, on one
//! device, and the same selection puts it on the same device in every run.
//! A worker sees its device as ordinal 0 through `CUDA_VISIBLE_DEVICES`
//! (the device's UUID first, then the host's other GPUs, so that a host
//! test that needs a second device finds one), and checks that it got it.
//! Every selected device must be of one model: trial names (`gpu/<sm>/..`)
//! and the tuned environments are per model.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, MutexGuard, OnceLock};

use gridcheck_gpu::DeviceInfo;

/// `--devices`: every device the harness sees, or these ordinals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Devices {
    All,
    List(Vec<usize>),
}

impl Devices {
    /// `all`, or ordinals separated by commas (`0,1`), each at most once.
    pub fn parse(s: &str) -> Result<Devices, String> {
        if s == "all" {
            return Ok(Devices::All);
        }
        let mut list = Vec::new();
        for part in s.split(',') {
            let n: usize = part.trim().parse().map_err(|_| {
                format!(
                    "`--devices {s}`: `{part}` is not a device ordinal (expected all or 0,1,...)"
                )
            })?;
            if list.contains(&n) {
                return Err(format!("`--devices {s}`: device {n} is named twice"));
            }
            list.push(n);
        }
        Ok(Devices::List(list))
    }

    /// The ordinals selected among `count` devices.
    pub fn resolve(&self, count: usize) -> Result<Vec<usize>, String> {
        match self {
            Devices::All => Ok((0..count).collect()),
            Devices::List(l) => match l.iter().find(|&&n| n >= count) {
                Some(n) => Err(format!(
                    "--devices: there is no device {n}: the harness sees {count} (ordinals 0 to {})",
                    count.saturating_sub(1)
                )),
                None => Ok(l.clone()),
            },
        }
    }
}

/// Deals `tests` out over `slots` devices: in name order, round robin.
/// Every test gets exactly one slot.
pub fn shard(tests: &[String], slots: usize) -> HashMap<String, usize> {
    let names: BTreeSet<&String> = tests.iter().collect();
    names
        .into_iter()
        .enumerate()
        .map(|(i, t)| (t.clone(), i % slots.max(1)))
        .collect()
}

/// Where a GPU worker runs: the environment it gets, and the UUID its
/// device 0 must have.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Place {
    pub env: Vec<(String, String)>,
    pub expect_uuid: Option<String>,
}

/// The selected devices, their locks and the tests dealt to each.
#[derive(Debug)]
pub struct Pool {
    /// The selected devices; slot `k` is `selected[k]`.
    selected: Vec<DeviceInfo>,
    /// Every device the harness sees, in ordinal order.
    all: Vec<DeviceInfo>,
    /// Whether `--devices` chose them (workers are then placed by UUID).
    explicit: bool,
    locks: Vec<Mutex<()>>,
    assignment: OnceLock<HashMap<String, usize>>,
}

impl Pool {
    /// The devices for this run. `Ok(Err(reason))`: the GPU tier cannot run
    /// here (no driver, no device), and its trials say why; `Err`: the
    /// selection is wrong (a device that does not exist, two models).
    pub fn new(selection: Option<&Devices>) -> Result<Result<Pool, String>, String> {
        // Without the flag only device 0 is probed, as it always was.
        let probed = match selection {
            None => gridcheck_gpu::probe().map(|d| vec![d]),
            Some(_) => gridcheck_gpu::probe_all(),
        };
        let all = match probed {
            Ok(all) if all.is_empty() => return Ok(Err("no CUDA device".into())),
            Ok(all) => all,
            Err(reason) => return Ok(Err(reason)),
        };
        Pool::of(all, selection).map(Ok)
    }

    /// [`Pool::new`] on devices already probed.
    pub fn of(all: Vec<DeviceInfo>, selection: Option<&Devices>) -> Result<Pool, String> {
        let ordinals = match selection {
            None => vec![0],
            Some(s) => s.resolve(all.len())?,
        };
        if ordinals.is_empty() {
            return Err("--devices: no device selected".into());
        }
        let selected: Vec<DeviceInfo> = ordinals.iter().map(|&n| all[n].clone()).collect();
        let first = &selected[0];
        if let Some(d) = selected
            .iter()
            .find(|d| d.name != first.name || d.sm != first.sm)
        {
            return Err(format!(
                "--devices: device {} is {} ({}) and device {} is {} ({}): one run is for one GPU \
                 model (its trial names and tuned environment); run each model with its own --devices \
                 and --results, then `cargo xtask report merge` the files",
                first.ordinal, first.name, first.sm, d.ordinal, d.name, d.sm
            ));
        }
        if selection.is_some()
            && let Some(d) = all.iter().find(|d| d.uuid.is_none())
        {
            return Err(format!(
                "--devices: the driver gives no UUID for device {} ({}), and workers are placed \
                 on their device by UUID (CUDA_VISIBLE_DEVICES)",
                d.ordinal, d.name
            ));
        }
        Ok(Pool {
            locks: selected.iter().map(|_| Mutex::new(())).collect(),
            selected,
            all,
            explicit: selection.is_some(),
            assignment: OnceLock::new(),
        })
    }

    /// The selected devices, slot by slot.
    pub fn selected(&self) -> &[DeviceInfo] {
        &self.selected
    }

    /// Deals the run's GPU tests out over the devices (once; see [`shard`]).
    pub fn assign(&self, tests: &[String]) {
        let _ = self.assignment.set(shard(tests, self.selected.len()));
    }

    /// The slot of a test; one not dealt out (a test outside the selection
    /// run anyway) goes to the first device.
    pub fn slot(&self, test: &str) -> usize {
        self.assignment
            .get()
            .and_then(|a| a.get(test).copied())
            .unwrap_or(0)
    }

    /// The device that runs a test.
    pub fn device(&self, test: &str) -> &DeviceInfo {
        &self.selected[self.slot(test)]
    }

    /// Waits until a slot's device is free; it stays taken while the guard
    /// lives.
    pub fn lock(&self, slot: usize) -> MutexGuard<'_, ()> {
        self.locks[slot].lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Where a worker for slot `slot` runs.
    pub fn place(&self, slot: usize) -> Place {
        if !self.explicit {
            return Place::default();
        }
        let own = &self.selected[slot];
        let order = std::iter::once(own)
            .chain(self.all.iter().filter(|d| d.ordinal != own.ordinal))
            .filter_map(|d| d.uuid.clone())
            .collect::<Vec<_>>()
            .join(",");
        Place {
            env: vec![("CUDA_VISIBLE_DEVICES".into(), order)],
            expect_uuid: own.uuid.clone(),
        }
    }
}

/// The record's name for a device.
pub fn record_device(d: &DeviceInfo) -> gridcheck_report::Device {
    gridcheck_report::Device {
        ordinal: d.ordinal as u32,
        uuid: d.uuid.clone(),
        pci_bus_id: d.pci_bus_id.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(ordinal: usize, name: &str) -> DeviceInfo {
        DeviceInfo {
            name: name.into(),
            compute_capability: (9, 0),
            driver_version: "13.0".into(),
            driver_release: None,
            sm: "sm_90".into(),
            ordinal,
            uuid: Some(format!("GPU-{ordinal}")),
            pci_bus_id: Some(format!("0000:{ordinal:02X}:00.0")),
        }
    }

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_selection_parses_and_resolves() {
        assert_eq!(Devices::parse("all"), Ok(Devices::All));
        assert_eq!(Devices::parse("0,1"), Ok(Devices::List(vec![0, 1])));
        assert_eq!(Devices::parse("2"), Ok(Devices::List(vec![2])));
        assert!(
            Devices::parse("0,x")
                .unwrap_err()
                .contains("`x` is not a device ordinal")
        );
        assert!(Devices::parse("").is_err());
        assert!(Devices::parse("1,1").unwrap_err().contains("named twice"));
        assert_eq!(Devices::All.resolve(3), Ok(vec![0, 1, 2]));
        assert_eq!(Devices::List(vec![1, 0]).resolve(2), Ok(vec![1, 0]));
        let e = Devices::List(vec![0, 2]).resolve(2).unwrap_err();
        assert!(e.contains("no device 2") && e.contains("sees 2"), "{e}");
    }

    #[test]
    fn every_test_goes_to_exactly_one_device_and_the_devices_share_them() {
        let tests: Vec<String> = (0..9).map(|i| format!("t{i}")).rev().collect();
        let mut with_dup = tests.clone();
        with_dup.push("t3".into());
        let a = shard(&with_dup, 2);
        assert_eq!(a.len(), 9, "a test named twice is dealt once");
        let on = |slot| (0..9).filter(|i| a[&format!("t{i}")] == slot).count();
        assert_eq!((on(0), on(1)), (5, 4));
        // Name order, round robin: the same selection, the same devices.
        assert_eq!((a["t0"], a["t1"], a["t2"]), (0, 1, 0));
        assert_eq!(shard(&tests, 2), a);
        assert!(shard(&tests, 1).values().all(|&s| s == 0));
        assert!(shard(&tests, 0).values().all(|&s| s == 0));
        assert!(shard(&names(&["a", "b"]), 3).values().all(|&s| s < 2));
    }

    #[test]
    fn without_the_flag_the_tier_runs_on_device_zero_as_before() {
        let p = Pool::of(vec![gpu(0, "H200"), gpu(1, "H200")], None).unwrap();
        assert_eq!(p.selected().len(), 1);
        p.assign(&names(&["a", "b"]));
        assert_eq!((p.slot("a"), p.slot("b")), (0, 0));
        // Workers inherit the harness's environment.
        assert_eq!(p.place(0), Place::default());
    }

    #[test]
    fn with_the_flag_workers_see_their_device_first() {
        let all = vec![gpu(0, "H200"), gpu(1, "H200"), gpu(2, "H200")];
        let p = Pool::of(all.clone(), Some(&Devices::List(vec![2, 0]))).unwrap();
        p.assign(&names(&["b", "a", "c"]));
        assert_eq!(p.device("a").ordinal, 2);
        assert_eq!(p.device("b").ordinal, 0);
        assert_eq!(p.device("c").ordinal, 2);
        assert_eq!(p.device("not-dealt").ordinal, 2);
        let place = p.place(p.slot("a"));
        assert_eq!(
            place.env,
            vec![(
                "CUDA_VISIBLE_DEVICES".to_string(),
                "GPU-2,GPU-0,GPU-1".to_string()
            )]
        );
        assert_eq!(place.expect_uuid.as_deref(), Some("GPU-2"));
        assert_eq!(p.place(1).env[0].1, "GPU-0,GPU-1,GPU-2");
        assert_eq!(
            Pool::of(all, Some(&Devices::All)).unwrap().selected().len(),
            3
        );
    }

    #[test]
    fn a_wrong_selection_is_an_error_that_says_why() {
        let e = Pool::of(vec![gpu(0, "H200")], Some(&Devices::List(vec![1]))).unwrap_err();
        assert!(e.contains("no device 1"), "{e}");
        let e = Pool::of(vec![gpu(0, "H200"), gpu(1, "A100")], Some(&Devices::All)).unwrap_err();
        assert!(e.contains("one GPU model"), "{e}");
        let mut nameless = gpu(1, "H200");
        nameless.uuid = None;
        let e = Pool::of(vec![gpu(0, "H200"), nameless], Some(&Devices::All)).unwrap_err();
        assert!(e.contains("no UUID for device 1"), "{e}");
    }

    #[test]
    fn records_name_the_device() {
        let d = record_device(&gpu(1, "H200"));
        assert_eq!(d.ordinal, 1);
        assert_eq!(d.uuid.as_deref(), Some("GPU-1"));
        assert_eq!(d.label(), "0000:01:00.0");
    }
}
