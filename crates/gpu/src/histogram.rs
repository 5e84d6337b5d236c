//! The outcome histogram gathered on the GPU.
//!
//! After each launch of a litmus test, `gridcheck_histogram` (in
//! `kernels/include/gridcheck.cuh`, so in every litmus cubin) reads each
//! instance's status words, registers and final memory and adds one to the
//! bin of its final state. A state is a number in mixed radix: each
//! observable's value is looked up in the test's value domain (0, every
//! initial value, every stored constant and every constant of the condition,
//! such as an error code), so a state with only domain values has a bin. The bins accumulate on the GPU over all launches and are read once at
//! the end.
//!
//! Nothing is lost to the encoding: an instance whose status words say it did
//! not run cleanly, or whose state has a value outside the domain, is copied
//! whole (registers, memory slot, status words) into a record buffer, which
//! the host decodes exactly as it decodes any instance. A run with more such
//! instances than the buffer holds says so instead of guessing.

use std::collections::BTreeMap;

use gridcheck_kernelgen::Layout;
use gridcheck_spec::{Expr, Litmus, Op, State};

/// A status word the histogram kernel does not check.
pub const STATUS_ANY: u32 = 0xffff_fffe;

/// The most bins a plan may have; a test with more observables than this
/// allows puts every instance into the record buffer.
pub const MAX_BINS: u64 = 1 << 20;

/// Bit 31 of an observable's offset: it is a memory word, not a register.
pub const FROM_MEM: u32 = 1 << 31;

/// What the histogram kernel needs to know about a test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Per observable ([`Litmus::observables`] order): its word offset in
    /// the instance's registers, or in its memory slot with [`FROM_MEM`].
    pub offsets: Vec<u32>,
    /// The values an observable is expected to take, sorted.
    pub domain: Vec<u32>,
    /// Per status word: the value a clean instance has there, or
    /// [`STATUS_ANY`].
    pub status_expect: Vec<u32>,
    /// `domain.len() ^ offsets.len()`, or 0 when that exceeds [`MAX_BINS`].
    pub bins: u64,
    /// The observables' names, in `offsets` order.
    pub names: Vec<String>,
}

impl Plan {
    pub fn new(litmus: &Litmus, lay: &Layout) -> Plan {
        let mut offsets = Vec::new();
        let mut names = Vec::new();
        for (i, r) in lay.registers.iter().enumerate() {
            offsets.push(i as u32);
            names.push(r.name.clone());
        }
        // A tile's final value is not an observable.
        for l in lay.locations.iter().filter(|l| l.tile.is_none()) {
            offsets.push(FROM_MEM | l.offset);
            names.push(l.name.clone());
        }
        // Initial values (a register may read a shared location's), 0, the
        // condition's values and every stored value.
        let mut domain: Vec<u32> = litmus
            .memory
            .iter()
            .chain(&litmus.shared)
            .map(|(_, v)| *v)
            .collect();
        domain.push(0);
        condition_values(&litmus.condition.expr, &mut domain);
        for op in litmus
            .kernels
            .iter()
            .flat_map(|k| &k.threads)
            .flat_map(|t| &t.ops)
        {
            if let Op::Store { value, .. } = op {
                domain.push(*value);
            }
        }
        domain.extend(tile_sets(litmus));
        domain.sort_unstable();
        domain.dedup();
        let mut status_expect = vec![STATUS_ANY; lay.status_stride as usize];
        for k in lay.kernels.iter().filter(|k| k.must_run) {
            status_expect[k.status_word as usize] = k.ran_value();
        }
        for e in lay.error_words() {
            status_expect[e.word as usize] = 0;
        }
        let bins = (domain.len() as u64)
            .checked_pow(offsets.len() as u32)
            .filter(|b| *b <= MAX_BINS)
            .unwrap_or(0);
        Plan {
            offsets,
            domain,
            status_expect,
            bins,
            names,
        }
    }

    /// The plan as the kernel reads it: offsets, then domain, then status
    /// expectations.
    pub fn words(&self) -> Vec<u32> {
        let mut w = self.offsets.clone();
        w.extend(&self.domain);
        w.extend(&self.status_expect);
        w
    }

    /// The histogram buffer's length: the bins, then the count of instances
    /// that did not run cleanly, then the count of states outside the domain.
    pub fn hist_len(&self) -> usize {
        self.bins as usize + 2
    }

    /// The state of bin `key`: the last observable is the lowest digit.
    pub fn state(&self, mut key: u64) -> State {
        let radix = self.domain.len() as u64;
        let mut values = vec![0; self.names.len()];
        for v in values.iter_mut().rev() {
            *v = self.domain[(key % radix) as usize];
            key /= radix;
        }
        self.names.iter().cloned().zip(values).collect()
    }

    /// The bin of `state` (the kernel's encoding, for tests), or `None` when
    /// a value is outside the domain.
    pub fn key(&self, state: &State) -> Option<u64> {
        if self.bins == 0 {
            return None;
        }
        let radix = self.domain.len() as u64;
        self.names.iter().try_fold(0u64, |key, name| {
            let d = self.domain.binary_search(state.get(name)?).ok()?;
            Some(key * radix + d as u64)
        })
    }

    /// The non-empty bins of a histogram buffer, as states.
    pub fn decode(&self, hist: &[u64]) -> BTreeMap<State, u64> {
        hist.iter()
            .take(self.bins as usize)
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(k, n)| (self.state(k as u64), *n))
            .collect()
    }
}

/// What a segment of several words of a tile register can hold: every set
/// of the values the test's tiles hold (their initial values and what is
/// stored to several words), as masks (`gridcheck_spec::place::observe`).
/// None for a test without tiles; at most 2^8 sets (a test with more values
/// puts its unexpected sets into the record buffer).
fn tile_sets(litmus: &Litmus) -> Vec<u32> {
    if litmus.tiles.is_empty() {
        return Vec::new();
    }
    let mut values: Vec<u32> = litmus
        .memory
        .iter()
        .chain(&litmus.shared)
        .filter(|(n, _)| litmus.tile_words(n).is_some())
        .map(|(_, v)| *v)
        .collect();
    for op in litmus
        .kernels
        .iter()
        .flat_map(|k| &k.threads)
        .flat_map(|t| &t.ops)
    {
        if let Op::Store { loc, value } = op
            && gridcheck_spec::Place::parse(loc).is_ok_and(|p| p.words() > 1)
        {
            values.push(*value);
        }
    }
    values.sort_unstable();
    values.dedup();
    values.truncate(8);
    let bits: Vec<u32> = values
        .iter()
        .map(|&v| 1u32.checked_shl(v).unwrap_or(0))
        .collect();
    (1u32..1 << bits.len())
        .map(|set| {
            bits.iter()
                .enumerate()
                .filter(|(i, _)| set & (1 << i) != 0)
                .fold(0, |m, (_, b)| m | b)
        })
        .collect()
}

/// Every constant a condition compares an observable with.
fn condition_values(e: &Expr, out: &mut Vec<u32>) {
    match e {
        Expr::Cmp { value, .. } => out.push(*value),
        Expr::Not(a) => condition_values(a, out),
        Expr::And(a, b) | Expr::Or(a, b) => {
            condition_values(a, out);
            condition_values(b, out);
        }
    }
}

/// The parameters of `gridcheck_histogram`; the C mirror is
/// `gc_hist_params` (same order and offsets, 80 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct HistParams {
    pub mem: u64,
    pub regs: u64,
    pub status: u64,
    pub plan: u64,
    pub hist: u64,
    pub records: u64,
    pub instances: u32,
    pub nobs: u32,
    pub ndom: u32,
    pub status_stride: u32,
    pub reg_stride: u32,
    pub slot_stride: u32,
    pub record_capacity: u32,
    pub bins: u32,
}

const _: () = assert!(std::mem::size_of::<HistParams>() == 80);

/// Words per record: an instance's registers, memory slot and status words.
pub fn record_words(lay: &Layout) -> usize {
    (lay.reg_stride + lay.slot_stride + lay.status_stride) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn litmus() -> Litmus {
        let yaml = gridcheck_fixture::OneRule::new()
            .tests(
                "  - name: t-one
    kind: litmus
    memory: { x: 0, y: 5 }
    kernels:
      - kernel: parent
        launch: host
        threads:
          t0: [store x 1, store y 2, launch child]
      - kernel: child
        launch: device
        threads:
          t0: [load r0 x, load r1 y]
    condition: exists (child.t0.r0 == 0)
    expect: allowed
",
            )
            .yaml();
        let spec = gridcheck_spec::load_sources(&[("a.yaml".into(), yaml)], None)
            .unwrap_or_else(|e| panic!("{e}"));
        match &spec.tests[0].body {
            gridcheck_spec::TestBody::Litmus(l) => l.clone(),
            other => panic!("not litmus: {other:?}"),
        }
    }

    #[test]
    fn the_domain_is_every_initial_and_stored_value() {
        let l = litmus();
        let plan = Plan::new(&l, &gridcheck_kernelgen::layout(&l));
        assert_eq!(plan.domain, [0, 1, 2, 5]);
        let mut with_error = l.clone();
        with_error.condition = gridcheck_spec::condition::parse("exists child.t0.r0 == 69")
            .unwrap_or_else(|e| panic!("{e}"));
        let plan2 = Plan::new(&with_error, &gridcheck_kernelgen::layout(&with_error));
        assert_eq!(
            plan2.domain,
            [0, 1, 2, 5, 69],
            "condition constants join the domain"
        );
        assert_eq!(plan.names.len(), 4);
        assert_eq!(plan.bins, 4u64.pow(4));
        assert_eq!(plan.offsets[0], 0);
        assert!(plan.offsets[2] & FROM_MEM != 0);
        assert_eq!(plan.hist_len(), 258);
    }

    #[test]
    fn keys_and_states_round_trip() {
        let l = litmus();
        let plan = Plan::new(&l, &gridcheck_kernelgen::layout(&l));
        for key in [0, 1, 77, 255] {
            let s = plan.state(key);
            assert_eq!(plan.key(&s), Some(key), "{s:?}");
        }
        let mut s = plan.state(3);
        let first = plan.names[0].clone();
        s.insert(first, 3);
        assert_eq!(plan.key(&s), None, "3 is outside the domain");
    }

    #[test]
    fn decode_keeps_only_observed_bins() {
        let l = litmus();
        let plan = Plan::new(&l, &gridcheck_kernelgen::layout(&l));
        let mut hist = vec![0u64; plan.hist_len()];
        hist[5] = 7;
        hist[200] = 1;
        hist[plan.bins as usize] = 9; // failed instances are not states
        let d = plan.decode(&hist);
        assert_eq!(d.len(), 2);
        assert_eq!(d[&plan.state(5)], 7);
        assert_eq!(d[&plan.state(200)], 1);
    }

    #[test]
    fn status_words_expect_ran_and_success() {
        let l = litmus();
        let lay = gridcheck_kernelgen::layout(&l);
        let plan = Plan::new(&l, &lay);
        for k in &lay.kernels {
            let want = if k.must_run {
                k.ran_value()
            } else {
                STATUS_ANY
            };
            assert_eq!(plan.status_expect[k.status_word as usize], want);
        }
        for e in lay.error_words() {
            assert_eq!(plan.status_expect[e.word as usize], 0);
        }
    }
}
