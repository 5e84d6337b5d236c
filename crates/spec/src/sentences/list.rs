//! `spec/sentences.yaml`: the seeds' sentences that are not claims and why,
//! read with every problem located.

use std::path::Path;

use super::NotAClaim;
use crate::error::{SpecError, SpecErrors};
use crate::locate::Text;
use crate::raw::RawSentenceList;
use crate::seeds::normalize;

/// The list of sentences that are not claims, under `spec/`. The spec loader
/// skips it; [`load_list`] reads it.
pub const LIST_FILE: &str = "sentences.yaml";

/// One entry of `spec/sentences.yaml`: a sentence (or every sentence of the
/// seed starting with `text`) that is not a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedNonClaim {
    pub seed: String,
    /// A prefix of the sentence, compared after normalization.
    pub text: String,
    pub kind: NotAClaim,
    pub reason: String,
    /// 1-based line of the entry in the list file.
    pub line: usize,
}

/// Reads `spec/sentences.yaml`; every problem is located by line and
/// column, with the entry and the field.
pub fn load_list(path: &Path, src: &str) -> Result<Vec<ListedNonClaim>, SpecErrors> {
    let raw: RawSentenceList =
        serde_yaml::from_str(src).map_err(|e| SpecErrors(vec![SpecError::of_yaml(path, &e)]))?;
    let text = Text::new(src);
    let starts = text.entries("seed");
    let aligned = starts.len() == raw.sentences.len();
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for (i, r) in raw.sentences.into_iter().enumerate() {
        let line = if aligned { starts[i].line } else { 1 };
        let until = if aligned {
            starts.get(i + 1).map(|e| e.line)
        } else {
            None
        };
        let err = |field: &str, msg: String| {
            let pos = text.field(field, line, until).unwrap_or((line, 1));
            SpecError::new(path, msg)
                .at(pos.0, pos.1)
                .item(format!("sentence {}", i + 1))
                .field(field)
        };
        let kind = NotAClaim::parse(&r.kind);
        if kind.is_none() {
            errors.push(err(
                "kind",
                format!(
                    "unknown kind `{}`: expected one of {}",
                    r.kind,
                    NotAClaim::ALL.map(NotAClaim::as_str).join(", ")
                ),
            ));
        }
        if normalize(&r.text).split_whitespace().count() < 2 {
            errors.push(err(
                "text",
                "the text must hold at least two words of the sentence".into(),
            ));
        }
        if r.reason.trim().is_empty() {
            errors.push(err("reason", "the reason is empty".into()));
        }
        if let Some(kind) = kind {
            out.push(ListedNonClaim {
                seed: r.seed,
                text: r.text,
                kind,
                reason: r.reason,
                line,
            });
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(SpecErrors(errors))
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_file_is_validated_with_locations() {
        let src = "sentences:\n  - seed: a.txt\n    text: This document\n    kind: meta\n    reason: about the document\n  - seed: a.txt\n    text: x\n    kind: musing\n    reason: ''\n";
        let e = load_list(Path::new("spec/sentences.yaml"), src).unwrap_err();
        let msgs: Vec<String> = e.0.iter().map(|e| e.to_string()).collect();
        assert_eq!(msgs.len(), 3, "{msgs:?}");
        assert!(msgs[0].starts_with(
            "spec/sentences.yaml:8:5: sentence 2: field `kind`: unknown kind `musing`"
        ));
        assert!(msgs[1].contains(":7:5: sentence 2: field `text`"));
        assert!(msgs[2].contains(":9:5: sentence 2: field `reason`"));
        let bad =
            load_list(Path::new("s.yaml"), "sentences:\n  - seed: a\n    txt: b\n").unwrap_err();
        assert!(
            bad.to_string().contains("s.yaml:3:5")
                && bad.to_string().contains("unknown field `txt`"),
            "{bad}"
        );
        let ok = load_list(
            Path::new("s.yaml"),
            &src[..src.find("  - seed: a.txt\n    text: x").unwrap()],
        )
        .unwrap();
        assert_eq!(
            ok,
            vec![ListedNonClaim {
                seed: "a.txt".into(),
                text: "This document".into(),
                kind: NotAClaim::Meta,
                reason: "about the document".into(),
                line: 2,
            }]
        );
    }
}
