//! The YAML shapes exactly as written, before validation. Every struct denies
//! unknown fields, so a misspelt key is an error located by the YAML parser.

use std::collections::BTreeMap;

use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFile {
    #[serde(default)]
    pub rules: Vec<RawRule>,
    #[serde(default)]
    pub tests: Vec<RawTest>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRule {
    pub id: String,
    pub source: RawSource,
    pub quote: String,
    pub profile: String,
    #[serde(default)]
    pub tests: Vec<String>,
    /// Why the rule has no runnable test: `untestable`, `needs-older-gpu`,
    /// `needs-multi-gpu`, `needs-harness`, `benchmarked`, `definition`,
    /// `erratum`. Requires `reason`.
    pub status: Option<String>,
    pub reason: Option<String>,
    pub decision: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSource {
    /// A seed's file name; exactly one of `seed` and `document`.
    pub seed: Option<String>,
    /// A file of `spec/documents/`: a document other than the seeds.
    pub document: Option<String>,
    pub section: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTest {
    pub name: String,
    pub kind: String,
    pub description: Option<String>,
    /// Names the test had before (a copy of it under another name merged
    /// into it): recorded results under those names are this test's.
    pub formerly: Option<Vec<String>>,
    /// litmus: `forbidden` / `allowed` / `required`;
    /// compile: `accept` / `reject` / `warn`;
    /// runtime: a mapping from output name to value, or absent with `load_error`.
    pub expect: Option<serde_yaml::Value>,
    // litmus
    pub memory: Option<BTreeMap<String, u32>>,
    /// Shared memory locations, one copy per block.
    pub shared: Option<BTreeMap<String, u32>>,
    pub kernels: Option<Vec<RawKernel>>,
    pub condition: Option<String>,
    // compile
    pub arch: Option<String>,
    pub flags: Option<Vec<String>>,
    pub source: Option<String>,
    /// compile, runtime, host: the program's file, relative to the YAML
    /// file's directory, instead of `source` (the loader reads it into
    /// `source`).
    pub source_file: Option<String>,
    pub diagnostic: Option<String>,
    // runtime (also arch, flags, source)
    pub entry: Option<String>,
    pub grid: Option<u32>,
    pub block: Option<u32>,
    pub limits: Option<BTreeMap<String, u64>>,
    pub outputs: Option<Vec<String>>,
    pub load_error: Option<String>,
    /// litmus, runtime, host: the GPU trial's timeout in seconds, when
    /// shorter than the harness's `--timeout` (a test that can hang).
    pub gpu_timeout: Option<u64>,
    /// host: outcomes the source allows and a run should show, as
    /// `expect` writes checks: one that never holds makes the trial a
    /// quality-warning, not a failure.
    pub may: Option<serde_yaml::Value>,
}

impl RawTest {
    /// The field that gives the program: `source_file` when the program
    /// was read from a file, else `source` (the field an error about the
    /// program's text names).
    pub fn source_field(&self) -> &'static str {
        if self.source_file.is_some() {
            "source_file"
        } else {
            "source"
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawKernel {
    pub kernel: String,
    /// `host`, `host-pdl` or `device`.
    pub launch: String,
    pub threads: BTreeMap<String, Vec<String>>,
}

/// `spec/shapes.yaml`: the shapes public code failed in and the tests and
/// programs that cover each.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawShapeList {
    #[serde(default)]
    pub shapes: Vec<RawShape>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawShape {
    pub id: String,
    pub title: String,
    pub sources: Vec<String>,
    pub summary: String,
    #[serde(default)]
    pub tests: Vec<String>,
    #[serde(default)]
    pub programs: Vec<String>,
}

/// `spec/sentences.yaml`: the seeds' sentences that are not claims.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSentenceList {
    #[serde(default)]
    pub sentences: Vec<RawListedSentence>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawListedSentence {
    pub seed: String,
    /// The sentence, or its beginning.
    pub text: String,
    /// `meta`, `motivation`, `opinion`, `legal`, `repetition`, ...
    pub kind: String,
    pub reason: String,
}
