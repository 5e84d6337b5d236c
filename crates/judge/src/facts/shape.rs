//! A fact's `shape` (the mechanism, as patterns of `gridcheck_shape` over a
//! litmus program: the fact covers every program one of them matches, not
//! only its key's test) and an `unobserved` fact's `envelope` (what was
//! tried: a program outside it is not covered).
//!
//! ```toml
//! shape = ["""
//! P: host, launch C tail
//! P.a: trigger, store x
//! C: device
//! C.b: load x
//! """]
//! envelope = { gpus = ["NVIDIA H200"], environments = ["conformance/tuning/nvidia-h200.toml"], instances = 4869392, words = 1 }
//! ```

use gridcheck_record::{Tier, TrialId};
use gridcheck_shape::Pattern;
use gridcheck_spec::Litmus;
use serde::Deserialize;

use crate::{Fact, FactKind, slug};

/// A one-word location's size in words: what an envelope's `words` bounds
/// when a program has no tile (`Litmus::largest_location_words` gives a
/// program's own).
pub const LOCATION_WORDS: u32 = 1;

/// What an `unobserved` fact's experiments tried: a program run outside it
/// is not covered (its survival is not the fact's).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Envelope {
    /// The GPU models it was tried on, as the driver names them.
    pub gpus: Vec<String>,
    /// The testing environments it was tried under: tuned files
    /// (`conformance/tuning/<gpu>.toml`, with the environments they name)
    /// and searches (`conformance/tuning/search.toml`).
    pub environments: Vec<String>,
    /// The most instances of one of its programs tried, in all: the rate
    /// bound its evidence gives rests on them.
    pub instances: u64,
    /// The largest location tried, in 32-bit words.
    pub words: u32,
    /// The largest location tried on a GPU where it is larger than
    /// `words` (a sweep of sizes run on one GPU model: `words_on = {
    /// "NVIDIA H200" = 8192 }`).
    #[serde(default)]
    pub words_on: std::collections::BTreeMap<String, u32>,
}

impl Envelope {
    /// Whether a program run on `gpu` under the tuned file `tuning` with
    /// locations of `words` words is inside; if not, why.
    pub fn covers(&self, gpu: &str, tuning: Option<&str>, words: u32) -> Result<(), String> {
        if !self.gpus.iter().any(|g| slug(g) == slug(gpu)) {
            return Err(format!(
                "{gpu} is not a GPU it was tried on ({})",
                self.gpus.join(", ")
            ));
        }
        match tuning {
            Some(t) if self.environments.iter().any(|e| e == t) => {}
            Some(t) => {
                return Err(format!(
                    "the environment {t} is not one it was tried under ({})",
                    self.environments.join(", ")
                ));
            }
            None => return Err("the run names no testing environment".into()),
        }
        let tried = self
            .words_on
            .iter()
            .find(|(g, _)| slug(g) == slug(gpu))
            .map_or(self.words, |(_, w)| *w);
        if words > tried {
            return Err(format!(
                "locations of {words} words, larger than the {tried} tried on {gpu}"
            ));
        }
        Ok(())
    }
}

/// `shape` as written: one pattern or a list of alternatives.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(super) enum ShapeText {
    One(String),
    Many(Vec<String>),
}

impl ShapeText {
    /// The patterns, or the alternative that does not parse and why.
    pub(super) fn parse(&self) -> Result<Vec<Pattern>, String> {
        let texts: Vec<&String> = match self {
            ShapeText::One(s) => vec![s],
            ShapeText::Many(v) => v.iter().collect(),
        };
        if texts.is_empty() {
            return Err("an empty list: give at least one pattern".into());
        }
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                Pattern::parse(t).map_err(|e| {
                    if texts.len() > 1 {
                        format!("alternative {}: {e}", i + 1)
                    } else {
                        e
                    }
                })
            })
            .collect()
    }
}

/// The checks of `shape` and `envelope` against the fact's kind and tier.
pub(super) fn check(
    tier: Tier,
    kind: FactKind,
    shape: bool,
    envelope: Option<&Envelope>,
) -> Result<(), (&'static str, String)> {
    if shape && tier != Tier::Gpu {
        return Err((
            "shape",
            "a shape is a litmus program's, run on the GPU tier: a fact of another tier covers its key only".into(),
        ));
    }
    if kind == FactKind::LaunchError && !shape {
        return Err((
            "shape",
            "a `launch-error` fact states the calls that fail as a shape (`K: any, record _ _`): a campaign knows its findings by it".into(),
        ));
    }
    match (kind, envelope) {
        (FactKind::Unobserved, None) => Err((
            "envelope",
            "an `unobserved` fact states what was tried: `envelope = { gpus, environments, instances, words }`".into(),
        )),
        (FactKind::Unobserved, Some(e)) if e.gpus.is_empty() || e.environments.is_empty() => Err((
            "envelope",
            "name the GPUs and the environments it was tried on".into(),
        )),
        (FactKind::Unobserved, Some(e))
            if e.words == 0 || e.instances == 0 || e.words_on.values().any(|w| *w < e.words) =>
        {
            Err((
                "envelope",
                "`instances` and `words` are at least 1, and `words_on` a GPU at least `words`"
                    .into(),
            ))
        }
        (FactKind::Unobserved, Some(_)) | (_, None) => Ok(()),
        (_, Some(_)) => Err((
            "envelope",
            "only an `unobserved` fact has an envelope (what a never-seen outcome was tried with)".into(),
        )),
    }
}

impl Fact {
    /// Whether the fact's shape covers `program`, a GPU trial `trial`'s (on
    /// the key's architecture, or one of the fact's range): one of its
    /// patterns matches.
    pub fn shape_covers(&self, trial: &TrialId, program: &Litmus) -> bool {
        trial.tier == Tier::Gpu
            && self.subject.tier() == Tier::Gpu
            && self.covers_arch(trial.sm.as_deref())
            && self.shape.iter().any(|p| p.matches(program))
    }

    /// The pattern of its shape that matches `program`, if any.
    pub fn shape_of(&self, program: &Litmus) -> Option<&Pattern> {
        self.shape.iter().find(|p| p.matches(program))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_envelope_covers_the_sizes_tried_on_each_gpu() {
        let e: Envelope = toml::from_str(
            r#"gpus = ["NVIDIA H200", "NVIDIA H100 80GB HBM3"]
environments = ["tuned.toml"]
instances = 1000
words = 1
words_on = { "NVIDIA H200" = 8192 }"#,
        )
        .unwrap();
        assert_eq!(e.covers("NVIDIA H200", Some("tuned.toml"), 1024), Ok(()));
        assert_eq!(e.covers("NVIDIA H200", Some("tuned.toml"), 8192), Ok(()));
        let past = e
            .covers("NVIDIA H200", Some("tuned.toml"), 16384)
            .unwrap_err();
        assert!(
            past.contains("larger than the 8192 tried on NVIDIA H200"),
            "{past}"
        );
        let other = e
            .covers("NVIDIA H100 80GB HBM3", Some("tuned.toml"), 1024)
            .unwrap_err();
        assert!(other.contains("larger than the 1 tried"), "{other}");
        assert_eq!(
            e.covers("NVIDIA H100 80GB HBM3", Some("tuned.toml"), 1),
            Ok(())
        );
    }
}
