//! The check's result as data: the options it ran with, each file's
//! units, kernels, PTX entries and errors, the findings, and the exit
//! status they make.

use serde::Serialize;

use crate::cubin::{CubinResult, Tools};
use crate::kernel::Kernel;
use crate::pair::{Launch, Produced};

/// How to run the check.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub tools: Tools,
    pub jobs: usize,
    /// A launch trace and its file name.
    pub trace: Option<(Vec<Launch>, String)>,
    /// The produced parameters and their file name.
    pub produced: Option<(Produced, String)>,
}

/// A PTX entry, its waits, and whether the same kernel's SASS (in any file
/// checked: a library built for compute_80 only is compared with its sm_90
/// build) has a wait.
#[derive(Debug, Clone, Serialize)]
pub struct PtxEntry {
    pub unit: String,
    pub arch: String,
    pub kernel: String,
    /// The wait's lines, empty when it has none; or why the PTX cannot say.
    pub waits: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undecided: Option<String>,
    /// Whether the same kernel's SASS has a wait, in any file checked.
    pub sass_wait: bool,
}

/// One module (cubin) of a file, with its kernels that hold PDL
/// instructions.
#[derive(Debug, Clone, Serialize)]
pub struct Unit {
    pub label: String,
    pub arch: String,
    pub kernels: Vec<Kernel>,
    /// Kernels without PDL instructions (counted, not listed).
    pub other_kernels: usize,
}

/// One file's result.
#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    pub path: String,
    pub errors: Vec<String>,
    pub units: Vec<Unit>,
    pub ptx: Vec<PtxEntry>,
    /// Every kernel's stores, for pairing (not printed).
    #[serde(skip)]
    pub all: Vec<Kernel>,
}

/// A finding: a stale read is possible, or a target lost its wait.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// `pdl-early-load` or `pdl-ptx-missing-wait`.
    pub rule: String,
    pub path: String,
    pub unit: String,
    pub arch: String,
    pub kernel: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub addr: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loc: Option<String>,
    pub message: String,
}

/// The whole result.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub files: Vec<FileReport>,
    pub findings: Vec<Finding>,
    /// `trace FILE`, `produced FILE`, or `none`.
    pub pairing: String,
}

impl Report {
    pub fn has_errors(&self) -> bool {
        self.files.iter().any(|f| !f.errors.is_empty())
    }

    /// 2 on an error, else 1 on findings, else 0.
    pub fn exit_code(&self) -> u8 {
        if self.has_errors() {
            2
        } else if self.findings.is_empty() {
            0
        } else {
            1
        }
    }
}

impl FileReport {
    /// The report of a file holding one cubin (its result already made).
    pub fn of_cubin(path: &str, c: CubinResult) -> FileReport {
        let (pdl, other): (Vec<Kernel>, Vec<Kernel>) =
            c.kernels.iter().cloned().partition(Kernel::has_pdl);
        FileReport {
            path: path.to_string(),
            errors: Vec::new(),
            units: vec![Unit {
                label: "cubin".into(),
                arch: c.arch,
                kernels: pdl,
                other_kernels: other.len(),
            }],
            ptx: Vec::new(),
            all: c.kernels,
        }
    }
}
