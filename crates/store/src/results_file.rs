//! The JSON-lines results file, written so that a run killed at any byte
//! loses at most the record it was writing, and read so that every line
//! left out is named with the reason.
//!
//! - Each record is one `write_all` of its line and `\n`; a write error is
//!   returned, never ignored.
//! - Before appending, [`repair_tail`] cuts an incomplete last line (no
//!   `\n`: a write the kill interrupted), so no record is ever appended
//!   onto it.
//! - [`read_results`] keeps every complete line that is a record and lists
//!   the others: not UTF-8, not a record, or the incomplete last line.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};

use gridcheck_record::TrialRecord;

/// A line a reader left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// 1-based.
    pub line: usize,
    pub reason: String,
}

/// What a JSON-lines file of records holds.
#[derive(Debug)]
pub struct LinesRead<T> {
    /// In file order.
    pub records: Vec<T>,
    pub skipped: Vec<Skipped>,
}

impl<T> Default for LinesRead<T> {
    fn default() -> Self {
        LinesRead {
            records: Vec::new(),
            skipped: Vec::new(),
        }
    }
}

/// What a results file holds.
pub type ResultsRead = LinesRead<TrialRecord>;

/// Reads results-file bytes. Blank lines are ignored quietly; every other
/// line that is not a record is in `skipped`. A record written before runs
/// were recorded is given a synthetic run id
/// ([`crate::runs::fill_legacy_run_ids`]).
pub fn read_results(bytes: &[u8]) -> ResultsRead {
    let mut read: ResultsRead = read_json_lines(bytes, "a trial record");
    crate::runs::fill_legacy_run_ids(&mut read.records);
    read
}

/// Reads JSON-lines bytes of records of type `T` (`what` names one in the
/// reasons lines are skipped for), as [`read_results`] does.
pub fn read_json_lines<T: serde::de::DeserializeOwned>(bytes: &[u8], what: &str) -> LinesRead<T> {
    let mut out = LinesRead::default();
    let mut lines = bytes.split(|&b| b == b'\n').enumerate().peekable();
    while let Some((i, line)) = lines.next() {
        let last = lines.peek().is_none();
        let skip = |reason: String| Skipped {
            line: i + 1,
            reason,
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if last {
            // Bytes after the final `\n`: a record whose write was cut.
            out.skipped.push(skip(format!(
                "an incomplete last line ({} bytes without an end of line): a write the run did not finish",
                line.len()
            )));
            break;
        }
        let text = match std::str::from_utf8(line) {
            Ok(t) => t,
            Err(e) => {
                out.skipped.push(skip(format!(
                    "not UTF-8 (a bad byte at column {})",
                    e.valid_up_to() + 1
                )));
                continue;
            }
        };
        match serde_json::from_str::<T>(text) {
            Ok(r) => out.records.push(r),
            Err(e) => out.skipped.push(skip(format!("not {what}: {e}"))),
        }
    }
    out
}

/// Reads a whole results file, as written or compressed
/// ([`crate::read_stored`]).
pub fn read_results_file(path: &std::path::Path) -> io::Result<ResultsRead> {
    Ok(read_results(&crate::read_stored(path)?))
}

/// Cuts an incomplete last line off a results file opened for writing, so
/// that the next record starts on a line of its own. Returns the number of
/// bytes cut (0 when the file ends with `\n`, is empty or is not a regular
/// file).
pub fn repair_tail(file: &mut File) -> io::Result<u64> {
    let meta = file.metadata()?;
    if !meta.is_file() || meta.len() == 0 {
        return Ok(0);
    }
    let len = meta.len();
    // Search backwards, a block at a time, for the last `\n`.
    let mut end = len;
    let mut keep = 0;
    let mut buf = vec![0u8; 64 * 1024];
    'search: while end > 0 {
        let start = end.saturating_sub(buf.len() as u64);
        let n = (end - start) as usize;
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buf[..n])?;
        if end == len && buf[n - 1] == b'\n' {
            return Ok(0);
        }
        if let Some(i) = buf[..n].iter().rposition(|&b| b == b'\n') {
            keep = start + i as u64 + 1;
            break 'search;
        }
        end = start;
    }
    file.set_len(keep)?;
    file.seek(SeekFrom::End(0))?;
    Ok(len - keep)
}

/// Appends one record as one line, in one write.
pub fn append_record(out: &mut impl Write, r: &TrialRecord) -> io::Result<()> {
    append_line(out, r.to_json_line())
}

/// Appends any record as one JSON line, in one write.
pub fn append_json_line<T: serde::Serialize>(out: &mut impl Write, r: &T) -> io::Result<()> {
    let line = serde_json::to_string(r).map_err(io::Error::other)?;
    append_line(out, line)
}

fn append_line(out: &mut impl Write, mut line: String) -> io::Result<()> {
    line.push('\n');
    out.write_all(line.as_bytes())?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use gridcheck_record::Status;

    fn rec(i: usize) -> TrialRecord {
        TrialRecord {
            trial: format!("model/r.a.b/t{i}").parse().expect("a trial name"),
            status: Status::Pass,
            message: "m é".into(),
            model: None,
            hardware: None,
            compile: None,
            environment: None,
            test_hash: None,
            commit: None,
            recorded_as: None,
            // With a run id, read back as written (a record without one
            // is given a synthetic one: `runs.rs` tests that).
            run_id: Some("r1".into()),
            run_started: None,
            escalation: None,
            library: None,
        }
    }

    fn file_of(n: usize) -> Vec<u8> {
        let mut v = Vec::new();
        for i in 0..n {
            append_record(&mut v, &rec(i)).unwrap();
        }
        v
    }

    #[test]
    fn a_cut_at_any_byte_loses_at_most_the_record_in_flight() {
        let whole = file_of(4);
        let ends: Vec<usize> = whole
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(i, _)| i + 1)
            .collect();
        for cut in 0..=whole.len() {
            let r = read_results(&whole[..cut]);
            let complete = ends.iter().filter(|&&e| e <= cut).count();
            assert_eq!(r.records.len(), complete, "cut at {cut}");
            assert_eq!(r.records, (0..complete).map(rec).collect::<Vec<_>>());
            let partial = !ends.contains(&cut) && cut > 0;
            assert_eq!(r.skipped.len(), usize::from(partial), "cut at {cut}");
            if partial {
                assert!(r.skipped[0].reason.contains("incomplete last line"));
                assert_eq!(r.skipped[0].line, complete + 1);
            }
        }
    }

    #[test]
    fn bad_lines_are_skipped_with_their_reason() {
        let mut bytes = file_of(1);
        bytes.extend_from_slice(b"\xff\xfe not utf-8\n{\"trial\": 3}\n\n");
        bytes.extend_from_slice(&file_of(1));
        let r = read_results(&bytes);
        assert_eq!(r.records.len(), 2);
        let why: Vec<(usize, bool)> = r
            .skipped
            .iter()
            .map(|s| (s.line, s.reason.starts_with("not UTF-8")))
            .collect();
        assert_eq!(why, [(2, true), (3, false)]);
        assert!(r.skipped[1].reason.starts_with("not a trial record"));
    }

    #[test]
    fn repair_cuts_only_an_incomplete_last_line() {
        let dir = std::env::temp_dir().join(format!("gridcheck-repair-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.jsonl");
        let whole = file_of(3);
        for cut in [0, 1, whole.len() - 1, whole.len()] {
            std::fs::write(&path, &whole[..cut]).unwrap();
            let mut f = std::fs::OpenOptions::new()
                .read(true)
                .append(true)
                .open(&path)
                .unwrap();
            let cut_off = repair_tail(&mut f).unwrap();
            append_record(&mut f, &rec(9)).unwrap();
            drop(f);
            let r = read_results_file(&path).unwrap();
            assert!(r.skipped.is_empty(), "cut at {cut}: {:?}", r.skipped);
            assert_eq!(r.records.last(), Some(&rec(9)));
            let complete = whole[..cut].iter().filter(|&&b| b == b'\n').count();
            assert_eq!(r.records.len(), complete + 1, "cut at {cut}");
            let kept: usize = whole[..cut]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            assert_eq!(cut_off as usize, cut - kept);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn write_errors_are_returned() {
        let mut full = std::fs::OpenOptions::new().write(true).open("/dev/full");
        if let Ok(f) = full.as_mut() {
            assert!(append_record(f, &rec(0)).is_err());
        }
    }
}
