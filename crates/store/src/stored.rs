//! Record files as they are stored: JSON lines as the harness writes them
//! (`results.jsonl`), or compressed with gzip as a recorded run keeps them
//! (`results.jsonl.gz`, `cargo xtask record`). Every reader of records
//! opens them through [`read_stored`], which tells the two apart by the
//! gzip magic bytes (not by the name), decompresses in pure Rust and stops
//! at [`MAX_DECOMPRESSED`] bytes; [`find_stored`] finds a run folder's file
//! under either name.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// The most a recorded run's folder may hold, every file in it and its
/// subfolders (toolchain variants, a campaign's findings) counted: what is
/// only evidence is compressed or packed (`cargo xtask record`), so that
/// each further GPU, toolchain or campaign adds little to the checkout
/// (`crates/report/tests/records.rs` checks every folder of `records/`).
pub const RUN_BUDGET: u64 = 1_000_000;

/// The suffix of a compressed record file.
pub const GZ_SUFFIX: &str = ".gz";

/// The most a compressed record file may decompress to: a recorded
/// results file is about a megabyte; more is damage or a bomb, an error.
pub const MAX_DECOMPRESSED: u64 = 256 << 20;

/// The first two bytes of every gzip member.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The bytes of a record file, decompressed if it is gzip (one member or
/// several concatenated: a compressed file appended to stays readable).
/// An error names the file: unreadable, not valid gzip, or decompressing
/// to more than [`MAX_DECOMPRESSED`] bytes.
pub fn read_stored(path: &Path) -> io::Result<Vec<u8>> {
    let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
    let mut raw = Vec::new();
    File::open(path)
        .and_then(|mut f| f.read_to_end(&mut raw))
        .map_err(named)?;
    decompress_if_gzip(raw, MAX_DECOMPRESSED).map_err(named)
}

/// `bytes` as they are, or decompressed (at most `limit` bytes) when they
/// start as gzip does.
fn decompress_if_gzip(bytes: Vec<u8>, limit: u64) -> io::Result<Vec<u8>> {
    if !bytes.starts_with(&GZIP_MAGIC) {
        return Ok(bytes);
    }
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes.as_slice())
        .take(limit + 1)
        .read_to_end(&mut out)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("not valid gzip: {e}")))?;
    if out.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "decompresses to more than {} KiB, more than any record file",
                limit >> 10
            ),
        ));
    }
    Ok(out)
}

/// `bytes` compressed with gzip (best compression), as a recorded run
/// keeps its record files.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    // Writing into a Vec cannot fail.
    let _ = e.write_all(bytes);
    e.finish().unwrap_or_default()
}

/// The file `name` of `dir` as stored: `dir/name` when it exists, else
/// `dir/name.gz`, else `None`.
pub fn find_stored(dir: &Path, name: &str) -> Option<PathBuf> {
    [name.to_string(), format!("{name}{GZ_SUFFIX}")]
        .into_iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
}

/// A file's name without the [`GZ_SUFFIX`] of a compressed one
/// (`mutants.jsonl.gz` is `mutants.jsonl`).
pub fn stored_name(file_name: &str) -> &str {
    file_name.strip_suffix(GZ_SUFFIX).unwrap_or(file_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("gc-stored-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn plain_and_compressed_files_read_the_same() {
        let d = temp("same");
        let text = b"{\"a\":1}\n{\"a\":2}\n".repeat(100);
        std::fs::write(d.join("r.jsonl"), &text).unwrap();
        std::fs::write(d.join("c.jsonl.gz"), gzip(&text)).unwrap();
        // By content, not by name: a compressed file under a plain name.
        std::fs::write(d.join("odd.jsonl"), gzip(&text)).unwrap();
        for f in ["r.jsonl", "c.jsonl.gz", "odd.jsonl"] {
            assert_eq!(read_stored(&d.join(f)).unwrap(), text, "{f}");
        }
        assert!(gzip(&text).len() < text.len() / 4);
        // Two members appended: both read.
        let mut two = gzip(b"one\n");
        two.extend(gzip(b"two\n"));
        std::fs::write(d.join("two.gz"), two).unwrap();
        assert_eq!(read_stored(&d.join("two.gz")).unwrap(), b"one\ntwo\n");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn damage_and_bombs_are_errors_naming_the_file() {
        let d = temp("bad");
        let mut cut = gzip(&b"x".repeat(10_000));
        cut.truncate(cut.len() / 2);
        std::fs::write(d.join("cut.gz"), &cut).unwrap();
        let e = read_stored(&d.join("cut.gz")).unwrap_err().to_string();
        assert!(e.contains("cut.gz") && e.contains("not valid gzip"), "{e}");
        // A bomb: more zeros than the limit, compressed to a few kilobytes;
        // exactly the limit is still read.
        let zeros = gzip(&vec![0u8; 1 << 20]);
        assert!(zeros.len() < 4096);
        let e = decompress_if_gzip(zeros.clone(), (1 << 20) - 1).unwrap_err();
        assert!(e.to_string().contains("more than 1023 KiB"), "{e}");
        assert_eq!(decompress_if_gzip(zeros, 1 << 20).unwrap().len(), 1 << 20);
        let e = read_stored(&d.join("missing")).unwrap_err().to_string();
        assert!(e.contains("missing"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_folders_file_is_found_under_either_name() {
        let d = temp("find");
        assert_eq!(find_stored(&d, "results.jsonl"), None);
        std::fs::write(d.join("results.jsonl.gz"), gzip(b"")).unwrap();
        assert_eq!(
            find_stored(&d, "results.jsonl"),
            Some(d.join("results.jsonl.gz"))
        );
        std::fs::write(d.join("results.jsonl"), b"").unwrap();
        assert_eq!(
            find_stored(&d, "results.jsonl"),
            Some(d.join("results.jsonl"))
        );
        assert_eq!(stored_name("mutants.jsonl.gz"), "mutants.jsonl");
        assert_eq!(stored_name("mutants.jsonl"), "mutants.jsonl");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
