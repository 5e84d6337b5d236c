//! The stale words of a run's tile registers (`gridcheck_record::StaleWords`),
//! read back launch by launch: each instance's count per segment, kept by
//! the kernel after its registers (`gridcheck_kernelgen::Layout::stale_counts`),
//! summed over the instances that ran cleanly. Reading a launch's
//! registers back lengthens the time between launches (a tile test's
//! instances take about 20 % longer); it did not change what the GPU shows:
//! on the H200, 51 stale tiles in 12 582 912 instances without it, 52 with
//! it, three runs each alternated (lab/experiments/tiles/README.md,
//! "Counting the stale words").

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream};
use gridcheck_kernelgen::Layout;
use gridcheck_report::StaleWords;

use crate::error::{GpuError, drv};
use crate::run_buffers::instance_failure;

/// A run's counts, one per segment of a tile register (none: nothing is
/// read back).
#[derive(Default)]
pub(crate) struct StaleTally {
    pub(crate) segments: Vec<StaleWords>,
}

impl StaleTally {
    pub(crate) fn new(lay: &Layout) -> StaleTally {
        let segments = lay
            .stale_counts
            .iter()
            .map(|r| {
                let words = r.segment.map_or(1, |(a, b)| b - a);
                StaleWords::new(r.name.trim_end_matches("#stale"), words)
            })
            .collect();
        StaleTally { segments }
    }

    /// Reads a finished launch's registers and status words back and adds
    /// its clean instances; nothing to read for a test without tiles.
    pub(crate) fn read(
        &mut self,
        stream: &Arc<CudaStream>,
        lay: &Layout,
        regs: &CudaSlice<u32>,
        status: &CudaSlice<u32>,
    ) -> Result<(), GpuError> {
        if self.segments.is_empty() {
            return Ok(());
        }
        let regs = stream
            .clone_dtoh(regs)
            .map_err(drv("cannot copy the stale words back"))?;
        let status = stream
            .clone_dtoh(status)
            .map_err(drv("cannot copy the status words back"))?;
        self.add(lay, &regs, &status);
        Ok(())
    }

    /// Adds the clean instances of one launch's registers and status words.
    pub(crate) fn add(&mut self, lay: &Layout, regs: &[u32], status: &[u32]) {
        let (rs, ss) = (lay.reg_stride as usize, lay.status_stride as usize);
        let first = lay.registers.len();
        for (r, s) in regs.chunks_exact(rs).zip(status.chunks_exact(ss)) {
            if instance_failure(lay, s).is_some() {
                continue;
            }
            for (i, seg) in self.segments.iter_mut().enumerate() {
                seg.add(r[first + i]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clean_instances_counts_are_summed_per_segment() {
        let l = gridcheck_spec::render::load_litmus(
            "rules:\n  - id: pdl.generated.t\n    source: { seed: generated.txt, section: \"1 Generated\" }\n    quote: generated\n    profile: pdl\n    tests: [t]\ntests:\n  - name: t\n    description: 'g'\n    kind: litmus\n    memory: { \"x[64]\": 0 }\n    kernels:\n      - kernel: p\n        launch: host\n        threads:\n          t0: [\"store x[0..64] 1\", trigger]\n      - kernel: s\n        launch: host-pdl\n        threads:\n          t0: [\"load r0 x[0..64]\"]\n    condition: 'exists any(s.t0.r0) == 0'\n    expect: allowed\n",
        )
        .unwrap();
        let lay = gridcheck_kernelgen::layout(&l);
        let mut t = StaleTally::new(&lay);
        assert_eq!(t.segments.len(), 1);
        assert_eq!(
            (t.segments[0].name.as_str(), t.segments[0].words),
            ("s.t0.r0[0..64]", 64)
        );
        let (rs, ss) = (lay.reg_stride as usize, lay.status_stride as usize);
        let count = lay.registers.len();
        let clean: Vec<u32> = (0..ss)
            .map(|w| {
                lay.kernels
                    .iter()
                    .find(|k| k.status_word as usize == w)
                    .map_or(0, |k| k.ran_value())
            })
            .collect();
        let mut regs = vec![0; 3 * rs];
        let mut status = [clean.clone(), clean.clone(), clean].concat();
        regs[count] = 5;
        regs[rs + count] = 64;
        regs[2 * rs + count] = 7;
        // The third instance's secondary did not run: not counted.
        let s_word = lay
            .kernels
            .iter()
            .find(|k| k.name == "s")
            .unwrap()
            .status_word as usize;
        status[2 * ss + s_word] = 0;
        t.add(&lay, &regs, &status);
        let s = &t.segments[0];
        assert_eq!(
            (s.instances, s.total, s.with_stale(), s.max()),
            (2, 69, 2, 64)
        );
    }
}
