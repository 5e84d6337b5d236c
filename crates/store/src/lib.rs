//! Records stored and read: the files and folders that hold them, in the
//! record vocabulary of `gridcheck-record` (`crates/record`) and nothing
//! that judges or renders them (`crates/judge` judges them, `crates/report`
//! renders them and re-exports this crate whole).
//!
//! - the JSON-lines results file, written so that a killed run loses at
//!   most its line in flight and read so that every line left out is
//!   named (`results_file.rs`);
//! - record files as a recorded run keeps them, compressed
//!   (`stored.rs`), and the runs a results file holds (`runs.rs`);
//! - the golden of a recorded run (`golden.rs`), the recorded campaigns'
//!   findings (`campaign_findings.rs`), the benchmarks' results and
//!   baselines (`baseline.rs`);
//! - dates as the records write them (`date.rs`).

pub mod baseline;
mod campaign_findings;
mod date;
mod golden;
mod results_file;
pub mod runs;
mod stored;

pub use campaign_findings::{RecordedFinding, recorded_findings};
pub use date::{now_secs, utc_date, valid_date};
pub use golden::{GOLDEN_HEADER, golden};
pub use results_file::{
    LinesRead, ResultsRead, Skipped, append_json_line, append_record, read_json_lines,
    read_results, read_results_file, repair_tail,
};
pub use runs::{RunChoice, RunRecords, RunStamp, split_runs};
pub use stored::{
    GZ_SUFFIX, MAX_DECOMPRESSED, RUN_BUDGET, find_stored, gzip, read_stored, stored_name,
};
