//! Documents other than the seeds that rules quote: the PTX ISA, the CUDA
//! runtime API reference, public issues and pull requests.
//!
//! `spec/documents/<name>.txt` holds the passages a rule quotes, copied
//! verbatim from the public document, under a header in the seeds' manner:
//!
//! ```text
//! Title: <the document's title>
//! URL Source: <its address>
//! Read: <the date the passages were copied>
//! ```
//!
//! A rule names it with `source: { document: <name>.txt, section: ... }`;
//! `spec check` verifies its quote and section title against the file as it
//! does a seed's. The site says that such a rule comes from a document other
//! than the seeds, with its title and address. The file is a copy of the
//! passages, not the document: the address is where to check it.

use std::path::Path;

/// The folder of the documents, under the spec folder.
pub const DIR: &str = "documents";

/// A document's title and address, from its header.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DocumentHeader {
    pub title: Option<String>,
    pub url: Option<String>,
    pub read: Option<String>,
}

/// Reads the header lines (`Title:`, `URL Source:`, `Read:`) before the
/// first blank line of a document's text.
pub fn header(text: &str) -> DocumentHeader {
    let mut h = DocumentHeader::default();
    for line in text.lines().take_while(|l| !l.trim().is_empty()) {
        let field = |prefix: &str| {
            line.strip_prefix(prefix)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        h.title = h.title.or_else(|| field("Title:"));
        h.url = h.url.or_else(|| field("URL Source:"));
        h.read = h.read.or_else(|| field("Read:"));
    }
    h
}

/// The header of `spec_dir/documents/<file>`, if the file is there.
pub fn read_header(spec_dir: &Path, file: &str) -> Option<DocumentHeader> {
    let text = std::fs::read(spec_dir.join(DIR).join(file)).ok()?;
    Some(header(&String::from_utf8_lossy(&text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_ends_at_the_first_blank_line() {
        let h = header(
            "Title: PTX ISA 9.0\nURL Source: https://docs.nvidia.com/cuda/parallel-thread-execution/\nRead: 2026-11-27\n\nTitle: not a header\n",
        );
        assert_eq!(h.title.as_deref(), Some("PTX ISA 9.0"));
        assert_eq!(
            h.url.as_deref(),
            Some("https://docs.nvidia.com/cuda/parallel-thread-execution/")
        );
        assert_eq!(h.read.as_deref(), Some("2026-11-27"));
        assert_eq!(header("no header\n\nTitle: x").title, None);
    }
}
