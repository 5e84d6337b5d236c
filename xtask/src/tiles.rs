//! `cargo xtask tiles sweep|table`: the tile tests tried at every size and
//! with every kind of reader, on a GPU through the campaign's machinery.
//!
//! - `tiles sweep [--sizes 4B,16B,...] [--readers generic,bulk] [--out DIR]
//!   [TEST...]`: each tile test (default: every test of
//!   `spec/pdl/tiles.yaml`) made again at each size
//!   (`gridcheck_spec::sized::resized`: its largest tile at that size, every
//!   range scaled with it) and with each reader (`generic`: as written;
//!   `bulk`: each generic read of a global tile made a bulk copy into shared
//!   memory, waited for on an mbarrier, `sized::bulk_reads`), its states
//!   the axiomatic model's, written as a campaign's batches under DIR
//!   (default `.gpu-bundle/tiles`) with `sweep.jsonl`, which names each
//!   program's test, size and reader. A size a test's ranges do not scale
//!   to (half of a one-word tile) is skipped and said. On the GPU machine:
//!   `gridcheck campaign run DIR --instances 256 --launches L --tuning FILE`.
//! - `tiles table DIR RES`: from the programs and the campaign's records
//!   (`RES/campaign.jsonl`), a Markdown table a row per test, size and
//!   reader: instances, those whose state satisfies the test's condition,
//!   and the stale words the GPU counted.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gridcheck_campaign::{self as campaign, CampaignProgram, Outcome, ProgramRecord};
use gridcheck_spec::sized::{bulk_reads, resized};
use gridcheck_spec::{Profile, TestBody};
use serde::{Deserialize, Serialize};

use crate::{Result, root};

const USAGE: &str = "usage: cargo xtask tiles sweep [--sizes 4B,16B,1KiB] [--readers generic,bulk] [--out DIR] [TEST...]
       cargo xtask tiles table DIR RES";

const SIZES: &str = "4B,16B,256B,1KiB,4KiB,16KiB,32KiB";
const SWEEP: &str = "sweep.jsonl";

/// One program of a sweep: which test, at what size, read how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct SweepEntry {
    program: String,
    test: String,
    bytes: u32,
    reader: String,
}

pub fn run(args: &[String]) -> Result<()> {
    match args.first().map(String::as_str) {
        Some("sweep") => sweep(&args[1..]),
        Some("table") if args.len() == 3 => {
            print!("{}", table(Path::new(&args[1]), Path::new(&args[2]))?);
            Ok(())
        }
        _ => Err(USAGE.into()),
    }
}

/// `4B`, `256B`, `4KiB` in bytes: a whole number of words.
fn bytes(s: &str) -> Result<u32> {
    let (n, mul) = match s.strip_suffix("KiB") {
        Some(n) => (n, 1024),
        None => (s.strip_suffix('B').unwrap_or(s), 1),
    };
    let b = n
        .trim()
        .parse::<u32>()
        .ok()
        .and_then(|n| n.checked_mul(mul))
        .filter(|b| *b > 0 && b.is_multiple_of(4))
        .ok_or_else(|| format!("`{s}` is not a size of whole words (4B, 256B, 4KiB)"))?;
    Ok(b)
}

fn sweep(args: &[String]) -> Result<()> {
    let mut sizes = SIZES.to_string();
    let mut readers = "generic,bulk".to_string();
    let mut out = root().join(".gpu-bundle/tiles");
    let mut tests = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .ok_or(format!("{a} needs a value\n{USAGE}"))
        };
        match a.as_str() {
            "--sizes" => sizes = value()?,
            "--readers" => readers = value()?,
            "--out" => out = PathBuf::from(value()?),
            t if !t.starts_with("--") => tests.push(t.to_string()),
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    let sizes: Vec<u32> = sizes.split(',').map(bytes).collect::<Result<_>>()?;
    let readers: Vec<&str> = readers.split(',').collect();
    if let Some(r) = readers.iter().find(|r| !matches!(**r, "generic" | "bulk")) {
        return Err(format!("unknown reader `{r}`: generic or bulk"));
    }
    let spec = crate::workspace::load_spec(&root())?;
    if tests.is_empty() {
        let file = Path::new("pdl/tiles.yaml");
        tests = spec
            .tests
            .iter()
            .filter(|t| t.origin.file.ends_with(file))
            .map(|t| t.name.clone())
            .collect();
    }
    let (mut programs, mut entries) = (Vec::new(), Vec::new());
    for name in &tests {
        let test = spec
            .tests
            .iter()
            .find(|t| &t.name == name)
            .ok_or_else(|| format!("no test `{name}` in spec/"))?;
        let TestBody::Litmus(l) = &test.body else {
            return Err(format!("`{name}` is not a litmus test"));
        };
        for &b in &sizes {
            let sized = match resized(l, b / 4) {
                Ok(s) => s,
                Err(e) => {
                    println!("skipped {name} at {b} B: {e}");
                    continue;
                }
            };
            for reader in &readers {
                let l = match *reader {
                    "generic" => sized.clone(),
                    _ => match bulk_reads(&sized)? {
                        Some(l) => l,
                        None => {
                            println!(
                                "skipped {name} at {b} B, bulk: it reads no global tile generically"
                            );
                            continue;
                        }
                    },
                };
                let program = format!("{name}-{b}b-{reader}");
                let yaml = gridcheck_spec::render::litmus_spec_yaml(Profile::Pdl, &program, &l);
                let l = gridcheck_spec::render::load_litmus(&yaml)
                    .map_err(|e| format!("{program}: {e}"))?;
                let p = CampaignProgram::decided(Profile::Pdl, &program, &l)
                    .ok_or_else(|| format!("{program}: the axiomatic model gives no verdict"))?;
                programs.push(p);
                entries.push(SweepEntry {
                    program,
                    test: name.clone(),
                    bytes: b,
                    reader: reader.to_string(),
                });
            }
        }
    }
    let batches = out.join(campaign::BATCHES);
    if batches.exists() {
        std::fs::remove_dir_all(&batches)
            .map_err(|e| format!("cannot clear {}: {e}", batches.display()))?;
    }
    campaign::write_batch(&campaign::batch_dir(&out, 0), &programs)?;
    let lines: Vec<String> = entries
        .iter()
        .map(|e| serde_json::to_string(e).map_err(|e| e.to_string()))
        .collect::<Result<_>>()?;
    let f = out.join(SWEEP);
    std::fs::write(&f, lines.join("\n") + "\n")
        .map_err(|e| format!("cannot write {}: {e}", f.display()))?;
    println!(
        "{} programs ({} tests, sizes {}, readers {}) in {}",
        programs.len(),
        tests.len(),
        sizes.len(),
        readers.join(" "),
        out.display()
    );
    Ok(())
}

/// The sweep's table: a row a program, in test, reader and size order.
fn table(dir: &Path, res: &Path) -> Result<String> {
    let entries: Vec<SweepEntry> = campaign::read_lines(&dir.join(SWEEP))?;
    if entries.is_empty() {
        return Err(format!("no sweep in {} ({SWEEP})", dir.display()));
    }
    let programs: Vec<CampaignProgram> =
        campaign::read_lines(&campaign::batch_dir(dir, 0).join("programs.jsonl"))?;
    let records: Vec<ProgramRecord> = campaign::read_lines(&res.join("campaign.jsonl"))?;
    let records: BTreeMap<&str, &ProgramRecord> =
        records.iter().map(|r| (r.name.as_str(), r)).collect();
    let mut rows: Vec<&SweepEntry> = entries.iter().collect();
    rows.sort_by(|a, b| (&a.test, &a.reader, a.bytes).cmp(&(&b.test, &b.reader, b.bytes)));
    let mut s = String::from(
        "| test | reader | size | instances | condition holds | stale words (instances with any; most in one; in all) | class |\n|---|---|---|---|---|---|---|\n",
    );
    for e in rows {
        let cells = match (
            records.get(e.program.as_str()),
            programs.iter().find(|p| p.name == e.program),
        ) {
            (Some(r), Some(p)) => row(r, p)?,
            _ => "not run | | | |".to_string(),
        };
        s += &format!(
            "| {} | {} | {} | {cells} |\n",
            e.test,
            e.reader,
            size_text(e.bytes)
        );
    }
    Ok(s)
}

/// A record's cells: instances, how many satisfy the condition, the stale
/// words and the class.
fn row(r: &ProgramRecord, p: &CampaignProgram) -> Result<String> {
    let Outcome::Ran {
        histogram,
        instances,
        stale,
        ..
    } = &r.outcome
    else {
        return Ok(format!("{:?} | | | {:?}", r.outcome, r.class));
    };
    let (_, l) = p.litmus()?;
    let mut holds = 0u64;
    for (state, n) in histogram {
        if l.condition.holds(state)? {
            holds += n;
        }
    }
    let words: Vec<String> = stale
        .iter()
        .map(|s| format!("{}: {}; {}; {}", s.name, s.with_stale(), s.max(), s.total))
        .collect();
    Ok(format!(
        "{instances} | {holds} | {} | {:?}",
        words.join("<br>"),
        r.class
    ))
}

fn size_text(b: u32) -> String {
    if b >= 1024 && b.is_multiple_of(1024) {
        format!("{} KiB", b / 1024)
    } else {
        format!("{b} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_whole_words() {
        assert_eq!(bytes("4B").unwrap(), 4);
        assert_eq!(bytes("32KiB").unwrap(), 32768);
        for bad in ["3B", "0B", "KiB", "x"] {
            assert!(bytes(bad).is_err(), "{bad}");
        }
        assert_eq!(size_text(16384), "16 KiB");
        assert_eq!(size_text(256), "256 B");
    }
}
