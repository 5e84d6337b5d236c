//! The findings of the recorded campaigns: every
//! `records/<gpu>/campaigns/<date>/<name>/findings.jsonl` (one line a
//! distinct finding, as `gridcheck campaign` writes it), each with its
//! program where the campaign wrote one (`findings/NNN-<class>.yaml`,
//! context first, the finding's own test last; older records name the
//! file by the path it had on the GPU machine, `yaml`, and it is looked
//! for by its name under `findings/`). A finding closed before it was
//! shrunk, or whose folder was packed (`findings.tar.xz`), has no program
//! here, and says why.

use std::path::{Path, PathBuf};

use gridcheck_spec::Litmus;
use serde::{Deserialize, Serialize};

/// One recorded finding.
#[derive(Debug, Clone, Serialize)]
pub struct RecordedFinding {
    /// Its campaign's folder, relative to the root
    /// (`records/nvidia-h200/campaigns/2026-11-27/fuzz`).
    pub campaign: String,
    /// Its line in the campaign's `findings.jsonl`.
    pub line: usize,
    /// `hang`, `violation`, `unmodeled`, `launch-error`.
    pub class: String,
    /// The program's skeleton, as the campaign grouped it.
    pub shape: String,
    /// The first program of it the campaign found.
    pub first: String,
    /// How it ended (`known`, `alone`, `context`, `closed`, `harness`;
    /// `open` in a record older than endings).
    pub ended: String,
    /// The finding's own program, or why none is recorded.
    #[serde(skip)]
    pub program: Result<Litmus, String>,
}

/// The fields of a `findings.jsonl` line read here (the campaign's
/// `LeadEnd`, or the older line without an ending).
#[derive(Deserialize)]
struct Line {
    class: String,
    shape: String,
    first: String,
    #[serde(default)]
    ended: Option<String>,
    #[serde(default)]
    yaml: Option<String>,
    #[serde(default)]
    test: Option<TestOut>,
}

#[derive(Deserialize)]
struct TestOut {
    yaml: String,
}

/// Every campaign's `findings.jsonl` under `root/records`, in path order.
fn campaign_files(root: &Path) -> Result<Vec<PathBuf>, String> {
    let dirs = |d: &Path| -> Result<Vec<PathBuf>, String> {
        let mut v: Vec<PathBuf> = match std::fs::read_dir(d) {
            Ok(rd) => rd
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(format!("cannot read {}: {e}", d.display())),
        };
        v.sort();
        Ok(v)
    };
    let mut out = Vec::new();
    for gpu in dirs(&root.join("records"))? {
        for date in dirs(&gpu.join("campaigns"))? {
            for campaign in dirs(&date)? {
                let f = campaign.join("findings.jsonl");
                if f.is_file() {
                    out.push(f);
                }
            }
        }
    }
    Ok(out)
}

/// The findings of every campaign recorded under `root/records`; a line
/// that cannot be read is an error naming its file and line. A program
/// that cannot be loaded is that finding's `Err`, not the whole read's.
pub fn recorded_findings(root: &Path) -> Result<Vec<RecordedFinding>, String> {
    let mut out = Vec::new();
    for file in campaign_files(root)? {
        let text = std::fs::read_to_string(&file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let dir = file.parent().unwrap_or(root);
        let campaign = dir.strip_prefix(root).unwrap_or(dir).display().to_string();
        for (i, l) in text.lines().enumerate() {
            if l.trim().is_empty() {
                continue;
            }
            let line: Line = serde_json::from_str(l)
                .map_err(|e| format!("{}:{}: not a finding: {e}", file.display(), i + 1))?;
            out.push(RecordedFinding {
                campaign: campaign.clone(),
                line: i + 1,
                program: program(dir, &line),
                class: line.class,
                shape: line.shape,
                first: line.first,
                ended: line.ended.unwrap_or_else(|| "open".into()),
            });
        }
    }
    Ok(out)
}

/// The finding's own program: the last test of its file.
fn program(dir: &Path, line: &Line) -> Result<Litmus, String> {
    let rel = match (&line.test, &line.yaml) {
        (Some(t), _) => PathBuf::from(&t.yaml),
        (None, Some(y)) => {
            let name = Path::new(y).file_name().ok_or("its `yaml` names no file")?;
            Path::new("findings").join(name)
        }
        (None, None) => {
            return Err(format!(
                "no program written (it ended `{}` before it was shrunk)",
                line.ended.as_deref().unwrap_or("open")
            ));
        }
    };
    let path = dir.join(&rel);
    let text = std::fs::read_to_string(&path)
        .map_err(|_| format!("{} is not in the record", rel.display()))?;
    let tests = gridcheck_spec::render::load_litmus_tests(&path, &text)?;
    tests
        .into_iter()
        .next_back()
        .map(|(_, l)| l)
        .ok_or_else(|| format!("{}: no test", rel.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    #[test]
    fn the_recorded_findings_are_read_with_their_programs_or_why_not() {
        let all = recorded_findings(&root()).unwrap();
        let h200: Vec<&RecordedFinding> = all
            .iter()
            .filter(|f| f.campaign == "records/nvidia-h200/campaigns/2026-11-27/fuzz")
            .collect();
        assert!(h200.len() >= 15, "{}", h200.len());
        // A finding with a test written: its own program (the last test of
        // its file, after its context).
        let first = h200[0];
        assert_eq!((first.class.as_str(), first.line), ("violation", 1));
        let l = first.program.as_ref().expect("a program");
        assert_eq!(l.kernels.len(), 2, "the finding, not its context: {l:?}");
        // A finding closed before it was shrunk: why there is no program.
        let closed = h200.iter().find(|f| f.ended == "closed").unwrap();
        assert!(
            closed
                .program
                .as_ref()
                .unwrap_err()
                .contains("no program written (it ended `closed`"),
            "{:?}",
            closed.program
        );
        // An older record names its file by the GPU machine's path.
        let old = all
            .iter()
            .find(|f| f.campaign.ends_with("2026-11-26/random-confirmed"))
            .unwrap();
        assert!(old.program.is_ok(), "{:?}", old.program);
        assert_eq!(old.ended, "open");
        // A folder packed in a tarball: the program is not in the record.
        let packed = all
            .iter()
            .find(|f| f.campaign.ends_with("leads-random-10000") && f.ended == "alone")
            .unwrap();
        assert!(
            packed
                .program
                .as_ref()
                .unwrap_err()
                .contains("is not in the record"),
            "{:?}",
            packed.program
        );
    }

    #[test]
    fn a_bad_line_names_its_file_and_line() {
        let d = std::env::temp_dir().join(format!("gc-findings-{}", std::process::id()));
        let c = d.join("records/g/campaigns/2026-01-01/c");
        std::fs::create_dir_all(&c).unwrap();
        std::fs::write(c.join("findings.jsonl"), "{\"class\":\"hang\"}\n").unwrap();
        let e = recorded_findings(&d).unwrap_err();
        assert!(e.contains("c/findings.jsonl:1: not a finding"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
        // No records at all: no finding, not an error.
        assert!(recorded_findings(&d).unwrap().is_empty());
    }
}
