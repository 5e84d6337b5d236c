//! The per-trial record written as one JSON line of the results file.

use gridcheck_spec::{State, Verdict};
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
    /// Which of the host's GPUs ran it (absent in records made before the
    /// harness ran on several GPUs; its name is `gpu`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<Device>,
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
        }
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

#[cfg(test)]
mod tests {
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
            device,
        });
        r
    }

    #[test]
    fn a_record_without_the_device_still_reads() {
        let r: TrialRecord = serde_json::from_str(OLD).unwrap();
        let env = r.environment.as_ref().unwrap();
        assert_eq!(env.gpu, "NVIDIA H100 80GB HBM3");
        assert_eq!(env.device, None);
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
