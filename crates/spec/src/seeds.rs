//! The source documents the rules quote, and the verbatim-quote check.
//!
//! The seeds were captured from the web and carry mojibake (`â€™` for `’`),
//! OCR line breaks and Markdown escapes. Quotes in the spec are written with
//! the intended characters; both sides are normalized before comparing:
//! known mojibake is repaired, typographic quotes and dashes become ASCII,
//! Markdown emphasis and code marks are dropped, and whitespace is folded.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The seed documents, by file name, normalized.
#[derive(Debug, Clone, Default)]
pub struct Seeds {
    pub dir: PathBuf,
    docs: BTreeMap<String, String>,
    /// The same documents as read (lossy UTF-8), for the sentence splitter.
    raw: BTreeMap<String, String>,
}

const MOJIBAKE: &[(&str, &str)] = &[
    ("â€™", "'"),
    ("â€˜", "'"),
    ("â€œ", "\""),
    ("â€¦", "..."),
    ("â€”", "-"),
    ("â€“", "-"),
    ("â€\u{9d}", "\""),
    ("â€", "\""),
    ("‚Äô", "'"),
    ("‚Äú", "\""),
    ("‚Äù", "\""),
    ("‚Ä¶", "..."),
    ("‚Äî", "-"),
    ("‚Äì", "-"),
    ("\u{2026}", "..."),
];

/// Folds a text for verbatim comparison (see the module docs).
pub fn normalize(s: &str) -> String {
    let mut t = s.to_string();
    for (bad, good) in MOJIBAKE {
        t = t.replace(bad, good);
    }
    let t: String = t
        .chars()
        .filter_map(|c| match c {
            '\u{2018}' | '\u{2019}' | '`' => Some('\''),
            '\u{201c}' | '\u{201d}' => Some('"'),
            '\u{2013}' | '\u{2014}' => Some('-'),
            '*' | '_' | '\\' => None,
            c => Some(c),
        })
        .collect();
    let t = t.replace("'", "");
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Where the seeds are for a checkout at `root`: `$GRIDCHECK_SEEDS`, else
/// `../shared/seeds` beside the checkout when it exists.
pub fn default_dir(root: &Path) -> Option<PathBuf> {
    std::env::var_os("GRIDCHECK_SEEDS")
        .map(PathBuf::from)
        .or_else(|| Some(root.join("../shared/seeds")).filter(|d| d.is_dir()))
}

impl Seeds {
    /// Reads every `*.txt` file of `dir`.
    pub fn load(dir: &Path) -> std::io::Result<Seeds> {
        let mut docs = BTreeMap::new();
        let mut raw = BTreeMap::new();
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "txt") {
                let name = path
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned();
                let bytes = std::fs::read(&path)?;
                let text = String::from_utf8_lossy(&bytes).into_owned();
                docs.insert(name.clone(), normalize(&text));
                raw.insert(name, text);
            }
        }
        Ok(Seeds {
            dir: dir.to_path_buf(),
            docs,
            raw,
        })
    }

    /// Every seed as read: (file name, text), by name.
    pub fn raw(&self) -> Vec<(String, String)> {
        self.raw
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.docs.keys().map(String::as_str)
    }

    pub fn has(&self, seed: &str) -> bool {
        self.docs.contains_key(seed)
    }

    /// Whether `quote` occurs verbatim (after normalization) in `seed`.
    pub fn contains(&self, seed: &str, quote: &str) -> bool {
        self.docs
            .get(seed)
            .is_some_and(|d| d.contains(&normalize(quote)))
    }

    /// The longest prefix of the quote's words that the seed contains, to
    /// show where a quote stops matching.
    pub fn matching_prefix(&self, seed: &str, quote: &str) -> String {
        let Some(doc) = self.docs.get(seed) else {
            return String::new();
        };
        let words: Vec<&str> = quote.split_whitespace().collect();
        let mut best = 0;
        for n in 1..=words.len() {
            if doc.contains(&normalize(&words[..n].join(" "))) {
                best = n;
            } else {
                break;
            }
        }
        words[..best].join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalization_repairs_mojibake_and_folds_space() {
        assert_eq!(
            normalize("child gridâ€™s\n   invocation"),
            normalize("child grid’s invocation")
        );
        assert_eq!(
            normalize("`cudaStreamTailLaunch`"),
            normalize("cudaStreamTailLaunch")
        );
        assert_eq!(normalize("doesn‚Äôt"), normalize("doesn't"));
    }
}
