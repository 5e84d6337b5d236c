//! How many words of a tile were stale: the GPU's count beside the models'
//! yes or no.
//!
//! The models say whether a read of a tile saw some old word (the tile
//! register's value, the set of its words' values). The generated kernel
//! also counts, per segment of a tile register, the words that held the
//! tile's initial value; the harness sums them over the instances that
//! ran cleanly. Not an observable: no verdict reads it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One segment of a tile register's stale words over a run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StaleWords {
    /// The segment's register, as the state names it
    /// (`secondary.t0.r0[0..1024]`).
    pub name: String,
    /// Its words.
    pub words: u32,
    /// The instances counted (those that ran cleanly).
    pub instances: u64,
    /// Stale words over them.
    pub total: u64,
    /// Instances by their count of stale words, those with none left out.
    pub counts: BTreeMap<u32, u64>,
}

impl StaleWords {
    pub fn new(name: &str, words: u32) -> StaleWords {
        StaleWords {
            name: name.to_string(),
            words,
            ..StaleWords::default()
        }
    }

    /// Counts one instance that had `stale` stale words.
    pub fn add(&mut self, stale: u32) {
        self.instances += 1;
        self.total += u64::from(stale);
        if stale > 0 {
            *self.counts.entry(stale).or_default() += 1;
        }
    }

    /// Adds another run's counts of the same segment.
    pub fn merge(&mut self, other: &StaleWords) {
        self.instances += other.instances;
        self.total += other.total;
        for (k, n) in &other.counts {
            *self.counts.entry(*k).or_default() += n;
        }
    }

    /// Instances with at least one stale word.
    pub fn with_stale(&self) -> u64 {
        self.counts.values().sum()
    }

    /// The most stale words one instance had.
    pub fn max(&self) -> u32 {
        self.counts.keys().next_back().copied().unwrap_or(0)
    }

    /// One line: `r0[0..1024]: 12 of 4194304 instances had stale words
    /// (1 to 1024 of 1024; 5120 in all)`.
    pub fn summary(&self) -> String {
        let with = self.with_stale();
        if with == 0 {
            return format!(
                "{}: no stale word in {} instances of {} words",
                self.name, self.instances, self.words
            );
        }
        let min = self.counts.keys().next().copied().unwrap_or(0);
        format!(
            "{}: {with} of {} instances had stale words ({min} to {} of {}; {} in all)",
            self.name,
            self.instances,
            self.max(),
            self.words,
            self.total
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instances_are_counted_by_their_stale_words() {
        let mut s = StaleWords::new("k.t0.r0[0..8]", 8);
        for n in [0, 3, 0, 8, 3] {
            s.add(n);
        }
        assert_eq!(
            (s.instances, s.total, s.with_stale(), s.max()),
            (5, 14, 3, 8)
        );
        assert_eq!(s.counts, BTreeMap::from([(3, 2), (8, 1)]));
        let mut t = StaleWords::new("k.t0.r0[0..8]", 8);
        t.add(1);
        t.merge(&s);
        assert_eq!((t.instances, t.total, t.with_stale()), (6, 15, 4));
        assert_eq!(
            t.summary(),
            "k.t0.r0[0..8]: 4 of 6 instances had stale words (1 to 8 of 8; 15 in all)"
        );
        assert_eq!(
            StaleWords::new("r", 4).summary(),
            "r: no stale word in 0 instances of 4 words"
        );
    }
}
