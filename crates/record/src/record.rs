//! The per-trial record written as one JSON line of the results file.

use gridcheck_spec::{Spec, State, Verdict};
use serde::{Deserialize, Serialize};

use crate::{HardwareResult, Status, TrialId};

/// The model's side of a litmus trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelSummary {
    pub verdict: Verdict,
    pub expected: Verdict,
    pub states: Vec<State>,
    pub executions: u64,
    pub preemption_bound: Option<usize>,
    pub elapsed_s: f64,
    /// Both oracles' answers (absent in records made before the axiomatic
    /// model existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oracles: Option<Oracles>,
}

/// The loom model and the axiomatic model on one test: `verdict` and
/// `states` of the [`ModelSummary`] are those of `decided_by`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Oracles {
    /// `both`, `axiomatic` or `loom`.
    pub decided_by: String,
    /// `same`, `loom-orders-writes`, `loom-bounded`, `single` or `conflict`.
    pub agreement: String,
    /// What the agreement means, in words.
    pub note: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loom_verdict: Option<Verdict>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loom_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub axiomatic_verdict: Option<Verdict>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub axiomatic_error: Option<String>,
    /// Candidate executions the axiomatic model enumerated.
    #[serde(default)]
    pub candidates: u64,
    /// States only one oracle reaches (beyond a pinned limit, a conflict).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub only_loom: Vec<State>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub only_axiomatic: Vec<State>,
    /// The verdict if load buffering were allowed (the PTX memory model's
    /// reading), when it differs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_buffering_verdict: Option<Verdict>,
}

/// A compile test's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompileSummary {
    pub nvcc: String,
    pub command: String,
    pub success: bool,
    pub output: String,
    /// The toolchain that compiled it (absent in records made before
    /// toolchains were recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toolchain: Option<crate::ToolchainRecord>,
}

/// Where a GPU trial ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    pub gpu: String,
    pub sm: String,
    /// The CUDA driver API version (`13.0`).
    pub driver: String,
    pub nvcc: Option<String>,
    /// The installed driver's version (`580.159.04`), when the harness knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_version: Option<String>,
    /// The testing environment the run used (instances, launches,
    /// incantations), when the harness recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tuning: Option<crate::Tuning>,
    /// The tuned file the environment came from (`conformance/tuning/
    /// <gpu-slug>.toml`, else the architecture's, `sm_90.toml`, or
    /// `--tuning FILE`); absent: the built-in values, or a record made
    /// before the harness recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tuning_file: Option<String>,
    /// Which of the host's GPUs ran it (absent in records made before the
    /// harness ran on several GPUs; its name is `gpu`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<Device>,
    /// Which built binary ran (absent in records made before the harness
    /// chose among architectures: those ran the exact `sm` cubin).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary: Option<Binary>,
    /// The toolchain that built the kernels that ran (from their
    /// `toolchain.json`; absent where they had none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toolchain: Option<crate::ToolchainRecord>,
}

/// The binary a GPU trial ran: how it was chosen, for which architecture,
/// and the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binary {
    /// `cubin` (built for the device's architecture), `compatible-cubin`
    /// (same major, lower minor), `ptx-jit` (the driver's JIT of the PTX,
    /// linked with `libcudadevrt.a`), `executable` or
    /// `compatible-executable` (a host test's program).
    pub kind: String,
    /// The architecture it was built for: `sm_80`.
    pub arch: String,
    /// The file, as the harness named it.
    pub file: String,
}

/// One GPU of a host, by what tells it from a GPU of the same model.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Device {
    /// The harness's ordinal for it (as the harness process saw the host's
    /// GPUs).
    pub ordinal: u32,
    /// `GPU-8932f937-...`, as `nvidia-smi -L` shows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// `0000:3B:00.0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci_bus_id: Option<String>,
}

impl Device {
    /// How a report names it: its PCI bus id, else its UUID, else `#<ordinal>`.
    pub fn label(&self) -> String {
        self.pci_bus_id
            .clone()
            .or_else(|| self.uuid.clone())
            .unwrap_or_else(|| format!("#{}", self.ordinal))
    }
}

/// One finished trial: a line of the results file. Its key is
/// [`TrialId`]; the file also carries the key's parts (`tier`, `rule`,
/// `test`) for readers without this crate, which must agree with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "RecordLine", try_from = "RecordLine")]
pub struct TrialRecord {
    pub trial: TrialId,
    pub status: Status,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub model: Option<ModelSummary>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub hardware: Option<HardwareResult>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub compile: Option<CompileSummary>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub environment: Option<Environment>,
    /// `gridcheck_kernelgen::test_hash` of the test that ran, as herd's
    /// `Hash=`: a result whose test has changed since is stale.
    pub test_hash: Option<String>,
    /// The checkout's commit when the trial ran (`+dirty` with local
    /// changes), when git could say.
    pub commit: Option<String>,
    /// The test's name when the record was written, where the spec has
    /// renamed the test since (the test's `formerly:` lists it): `trial`
    /// names the test as it is called now (see
    /// [`TrialRecord::under_current_name`]). `test_hash` is the hash of the
    /// test under this name.
    pub recorded_as: Option<String>,
    /// The harness invocation that wrote the record (see `gridcheck_report::runs`):
    /// one id a run, shared by every record of it, a `--resume` included.
    /// A record written before the harness recorded it is given a synthetic
    /// id when read (`legacy-...`, `gridcheck_report::runs::fill_legacy_run_ids`).
    pub run_id: Option<String>,
    /// When that run started, RFC 3339 UTC (`2026-11-25T14:03:07Z`).
    pub run_started: Option<String>,
    /// What was done after the suite to provoke an outcome the trial never
    /// showed, and what came of it (absent: not escalated, and in every
    /// record written before escalations).
    pub escalation: Option<crate::Escalation>,
    /// A library trial's counts, controls and reproducer (absent on other
    /// tiers and in records written before the library tier).
    pub library: Option<crate::LibraryResult>,
}

/// A [`TrialRecord`] as the results file spells it.
#[derive(Serialize, Deserialize)]
struct RecordLine {
    trial: String,
    tier: String,
    rule: String,
    test: String,
    status: Status,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    model: Option<ModelSummary>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    hardware: Option<HardwareResult>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    compile: Option<CompileSummary>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    environment: Option<Environment>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    test_hash: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    commit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    recorded_as: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    run_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    run_started: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    escalation: Option<crate::Escalation>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    library: Option<crate::LibraryResult>,
}

impl From<TrialRecord> for RecordLine {
    fn from(r: TrialRecord) -> RecordLine {
        RecordLine {
            trial: r.trial.to_string(),
            tier: r.trial.tier.as_str().to_string(),
            rule: r.trial.rule,
            test: r.trial.test,
            status: r.status,
            message: r.message,
            model: r.model,
            hardware: r.hardware,
            compile: r.compile,
            environment: r.environment,
            test_hash: r.test_hash,
            commit: r.commit,
            recorded_as: r.recorded_as,
            run_id: r.run_id,
            run_started: r.run_started,
            escalation: r.escalation,
            library: r.library,
        }
    }
}

impl TryFrom<RecordLine> for TrialRecord {
    type Error = String;

    fn try_from(l: RecordLine) -> Result<TrialRecord, String> {
        let trial: TrialId = l.trial.parse()?;
        if (
            trial.tier.as_str(),
            trial.rule.as_str(),
            trial.test.as_str(),
        ) != (l.tier.as_str(), l.rule.as_str(), l.test.as_str())
        {
            return Err(format!(
                "the record of `{trial}` says tier `{}`, rule `{}`, test `{}`",
                l.tier, l.rule, l.test
            ));
        }
        Ok(TrialRecord {
            trial,
            status: l.status,
            message: l.message,
            model: l.model,
            hardware: l.hardware,
            compile: l.compile,
            environment: l.environment,
            test_hash: l.test_hash,
            commit: l.commit,
            recorded_as: l.recorded_as,
            run_id: l.run_id,
            run_started: l.run_started,
            escalation: l.escalation,
            library: l.library,
        })
    }
}

impl TrialRecord {
    /// A record with nothing but its key, status and message.
    pub fn new(trial: TrialId, status: Status, message: impl Into<String>) -> TrialRecord {
        TrialRecord {
            trial,
            status,
            message: message.into(),
            model: None,
            hardware: None,
            compile: None,
            environment: None,
            test_hash: None,
            commit: None,
            recorded_as: None,
            run_id: None,
            run_started: None,
            escalation: None,
            library: None,
        }
    }

    /// Moves a record written under a test's former name to the test's
    /// name now: the spec merged a copy of the test into it, or renamed it,
    /// and lists the old name in the test's `formerly:`. The trial keeps its
    /// tier, architecture and rule; `recorded_as` keeps the old name, so that
    /// the record's hash is still compared with what ran under that name.
    /// A record of a test the spec has under its name, or has not at all,
    /// is left as it is. Returns whether the record moved.
    pub fn under_current_name(&mut self, spec: &Spec) -> bool {
        if spec.test(&self.trial.test).is_some() {
            return false;
        }
        let Some(now) = spec.test_now_or_formerly(&self.trial.test) else {
            return false;
        };
        let old = std::mem::replace(&mut self.trial.test, now.name.clone());
        self.recorded_as.get_or_insert(old);
        true
    }

    /// The toolchain that built what the trial ran, where the record names
    /// it: a GPU record's kernels (`environment.toolchain`), else a compile
    /// or machine-code record's compiler (`compile.toolchain`). Not
    /// `environment.nvcc`: that is the nvcc found where the harness ran.
    pub fn kernels_toolchain(&self) -> Option<&crate::ToolchainRecord> {
        self.environment
            .as_ref()
            .and_then(|e| e.toolchain.as_ref())
            .or_else(|| self.compile.as_ref().and_then(|c| c.toolchain.as_ref()))
    }

    /// The name the test had when the record was written.
    pub fn recorded_test_name(&self) -> &str {
        self.recorded_as.as_deref().unwrap_or(&self.trial.test)
    }

    pub fn to_json_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!(
                "{{\"trial\":{:?},\"error\":\"cannot serialize: {e}\"}}",
                self.trial.to_string()
            )
        })
    }
}

/// [`TrialRecord::under_current_name`] on every record; returns how many
/// moved.
pub fn under_current_names(records: &mut [TrialRecord], spec: &Spec) -> usize {
    records
        .iter_mut()
        .map(|r| r.under_current_name(spec))
        .filter(|&moved| moved)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Status;

    /// `live` lists `old` as its former name.
    fn spec() -> Spec {
        let yaml = gridcheck_fixture::OneRule::new().id("cdp1.a.b").tests(
            "  - name: live
    formerly: [old]
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
        gridcheck_spec::load_sources(&[("spec/a.yaml".into(), yaml.yaml())], None).unwrap()
    }

    #[test]
    fn a_record_under_a_former_name_moves_to_the_test_now() {
        let spec = spec();
        let mut r = TrialRecord::new("gpu/sm_90/cdp1.a.b/old".parse().unwrap(), Status::Pass, "m");
        r.test_hash = Some("0123456789abcdef".into());
        assert!(r.under_current_name(&spec));
        assert_eq!(r.trial.to_string(), "gpu/sm_90/cdp1.a.b/live");
        assert_eq!(r.recorded_as.as_deref(), Some("old"));
        assert_eq!(r.recorded_test_name(), "old");
        assert_eq!(r.test_hash.as_deref(), Some("0123456789abcdef"));
        // Once moved it stays; the name it was recorded under survives a
        // write and a read.
        assert!(!r.under_current_name(&spec));
        let line = r.to_json_line();
        assert!(line.contains("\"recorded_as\":\"old\""), "{line}");
        let back: TrialRecord = serde_json::from_str(&line).unwrap();
        assert_eq!(back, r);
        // The test's own name, and a name the spec never had, stay.
        for name in ["live", "gone"] {
            let mut r = TrialRecord::new(TrialId::model("cdp1.a.b", name), Status::Pass, "m");
            assert!(!r.under_current_name(&spec));
            assert_eq!((r.trial.test.as_str(), r.recorded_as), (name, None));
        }
        let mut all = vec![
            TrialRecord::new(TrialId::model("cdp1.a.b", "old"), Status::Pass, "m"),
            TrialRecord::new(TrialId::model("cdp1.a.b", "live"), Status::Pass, "m"),
        ];
        assert_eq!(under_current_names(&mut all, &spec), 1);
        assert!(all.iter().all(|r| r.trial.test == "live"));
        // A line written before the field existed reads without it.
        let plain = TrialRecord::new(TrialId::model("r", "t"), Status::Pass, "m");
        assert!(!plain.to_json_line().contains("recorded_as"));
    }
}

#[cfg(test)]
mod device_tests {
    use super::*;

    /// A GPU record as the harness wrote it before it recorded the device.
    const OLD: &str = r#"{"trial":"gpu/sm_90/cdp2.r/t","tier":"gpu","rule":"cdp2.r","test":"t","status":"pass","message":"m","environment":{"gpu":"NVIDIA H100 80GB HBM3","sm":"sm_90","driver":"13.0","nvcc":"13.0.88","driver_version":"580.159.04"}}"#;

    fn gpu_record(device: Option<Device>) -> TrialRecord {
        let mut r = TrialRecord::new("gpu/sm_90/cdp2.r/t".parse().unwrap(), Status::Pass, "m");
        r.environment = Some(Environment {
            gpu: "NVIDIA H200".into(),
            sm: "sm_90".into(),
            driver: "13.0".into(),
            nvcc: None,
            driver_version: None,
            tuning: None,
            tuning_file: Some("conformance/tuning/sm_90.toml".into()),
            device,
            binary: None,
            toolchain: None,
        });
        r
    }

    #[test]
    fn the_binary_round_trips_and_old_records_read_without_it() {
        let r: TrialRecord = serde_json::from_str(OLD).unwrap();
        assert_eq!(r.environment.as_ref().unwrap().binary, None);
        let mut r = gpu_record(None);
        r.environment.as_mut().unwrap().binary = Some(Binary {
            kind: "compatible-cubin".into(),
            arch: "sm_80".into(),
            file: "target/kernels/sm_80/t.cubin".into(),
        });
        let line = r.to_json_line();
        assert!(
            line.contains(r#""binary":{"kind":"compatible-cubin","arch":"sm_80","file":"target/kernels/sm_80/t.cubin"}"#),
            "{line}"
        );
        assert_eq!(serde_json::from_str::<TrialRecord>(&line).unwrap(), r);
        assert!(!gpu_record(None).to_json_line().contains("binary"));
    }

    #[test]
    fn a_record_without_the_device_still_reads() {
        let r: TrialRecord = serde_json::from_str(OLD).unwrap();
        let env = r.environment.as_ref().unwrap();
        assert_eq!(env.gpu, "NVIDIA H100 80GB HBM3");
        assert_eq!(env.device, None);
        assert_eq!(env.tuning_file, None);
        // Written back, it stays without one.
        assert!(!r.to_json_line().contains("device"), "{}", r.to_json_line());
        let again: TrialRecord = serde_json::from_str(&r.to_json_line()).unwrap();
        assert_eq!(again, r);
    }

    #[test]
    fn the_device_round_trips() {
        let d = Device {
            ordinal: 1,
            uuid: Some("GPU-8932f937-d72c-4106-c12f-20bd9faed9f6".into()),
            pci_bus_id: Some("0000:3B:00.0".into()),
        };
        let r = gpu_record(Some(d.clone()));
        let line = r.to_json_line();
        assert!(
            line.contains(r#""device":{"ordinal":1,"uuid":"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6","pci_bus_id":"0000:3B:00.0"}"#),
            "{line}"
        );
        assert!(
            line.contains(r#""tuning_file":"conformance/tuning/sm_90.toml""#),
            "{line}"
        );
        let back: TrialRecord = serde_json::from_str(&line).unwrap();
        assert_eq!(back, r);
        assert_eq!(d.label(), "0000:3B:00.0");
        // What a driver could not say is left out, and read back as absent.
        let bare = Device {
            ordinal: 2,
            uuid: None,
            pci_bus_id: None,
        };
        let r = gpu_record(Some(bare.clone()));
        assert!(r.to_json_line().contains(r#""device":{"ordinal":2}"#));
        assert_eq!(
            serde_json::from_str::<TrialRecord>(&r.to_json_line()).unwrap(),
            r
        );
        assert_eq!(bare.label(), "#2");
        assert_eq!(
            serde_json::from_str::<TrialRecord>(&gpu_record(None).to_json_line()).unwrap(),
            gpu_record(None)
        );
    }
}
