//! A litmus run's device buffers that live across its launches (the stress
//! words, the histogram's plan and bins, the record buffer, each launch's
//! initial memory and status words), and the reading back of its outcome:
//! the histogram, and the records of the instances it could not bin.

use std::collections::BTreeMap;
use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DriverError};
use gridcheck_kernelgen::{Layout, STATUS_NOT_REACHED};
use gridcheck_spec::{Litmus, State};

use crate::environment::Budget;
use crate::error::{GpuError, cuda_error_name, driver_error, drv};
use crate::histogram;
use gridcheck_report::Tuning;

/// A run's outcome as read back from the GPU (see `LitmusRun`).
#[derive(Default)]
pub(crate) struct Collected {
    pub(crate) histogram: BTreeMap<State, u64>,
    pub(crate) instances: u64,
    pub(crate) launch_failures: u64,
    pub(crate) first_launch_error: Option<String>,
}

/// The error of a failed allocation of `what`.
pub(crate) fn alloc(what: &'static str) -> impl Fn(DriverError) -> GpuError {
    move |e: DriverError| GpuError::new(format!("cannot allocate {what}: {}", driver_error(e)))
}

/// Why an instance's outcome cannot be recorded, if it cannot: a device
/// runtime call (a launch, creating a stream or event, `record`,
/// `waitevent`) was not reached or failed, or a kernel did not run.
pub(crate) fn instance_failure(lay: &Layout, status: &[u32]) -> Option<String> {
    for e in lay.error_words() {
        let code = status[e.word as usize];
        if code == STATUS_NOT_REACHED {
            return Some(format!("{} was not reached", e.what));
        }
        if code != 0 {
            return Some(format!(
                "{} failed: {} ({code})",
                e.what,
                cuda_error_name(code)
            ));
        }
    }
    lay.kernels
        .iter()
        .filter(|k| k.must_run)
        .find(|k| status[k.status_word as usize] != k.ran_value())
        .map(|k| match k.blocks {
            1 => format!("kernel `{}` did not run", k.name),
            n => format!(
                "kernel `{}` did not run: {} of its {n} blocks ran",
                k.name, status[k.status_word as usize]
            ),
        })
}

/// The final state of one instance: its registers and memory slot.
fn instance_state(lay: &Layout, regs: &[u32], mem: &[u32]) -> State {
    let mut s = State::new();
    for (i, r) in lay.registers.iter().enumerate() {
        s.insert(r.name.clone(), regs[i]);
    }
    // A tile's final value is not an observable.
    for l in lay.locations.iter().filter(|l| l.tile.is_none()) {
        s.insert(l.name.clone(), mem[l.offset as usize]);
    }
    s
}

/// The buffers a run keeps across its launches: the stress words, the
/// histogram's plan and bins, the records of the instances it cannot bin,
/// and each launch's initial memory and status words.
pub(crate) struct RunBuffers {
    pub(crate) n: u32,
    pub(crate) stress_words: u32,
    pub(crate) stress: CudaSlice<u32>,
    pub(crate) plan: histogram::Plan,
    pub(crate) plan_d: CudaSlice<u32>,
    pub(crate) hist: CudaSlice<u64>,
    /// Room for every instance of the run: nothing is ever dropped.
    pub(crate) capacity: u64,
    pub(crate) rec_words: usize,
    pub(crate) records: CudaSlice<u32>,
    pub(crate) mem_init: Vec<u32>,
    pub(crate) status_init: Vec<u32>,
}

impl RunBuffers {
    pub(crate) fn new(
        stream: &Arc<CudaStream>,
        litmus: &Litmus,
        lay: &Layout,
        budget: &Budget,
        inc: &Tuning,
    ) -> Result<RunBuffers, GpuError> {
        let n = budget.instances_per_launch;
        let nz = n as usize;
        let stress_words = if inc.stress_words == 0 {
            0
        } else {
            inc.stress_words.next_power_of_two()
        };
        // Each launch gets fresh memory, status words and registers. Reusing
        // one set, reset on the device between launches, went with hangs on
        // the H100: pmpp-kernel-b-more-stuff-in-tail-launch timed out in 4
        // of 34 runs that way, in none of 30 with fresh buffers (cause not
        // determined; see ARCHITECTURE.md).
        let mem_init: Vec<u32> = lay.initial_slot().repeat(nz);
        let status_init: Vec<u32> = lay.initial_status().repeat(nz);
        let stress: CudaSlice<u32> = stream
            .alloc_zeros(stress_words.max(1) as usize)
            .map_err(alloc("the stress buffer"))?;
        let plan = histogram::Plan::new(litmus, lay);
        let plan_d = stream
            .clone_htod(&plan.words())
            .map_err(alloc("the histogram plan"))?;
        let hist: CudaSlice<u64> = stream
            .alloc_zeros(plan.hist_len())
            .map_err(alloc("the histogram"))?;
        let capacity = u64::from(n) * u64::from(budget.launches);
        let rec_words = histogram::record_words(lay);
        let records: CudaSlice<u32> = stream
            .alloc_zeros(1 + capacity as usize * rec_words)
            .map_err(alloc("the record buffer"))?;
        Ok(RunBuffers {
            n,
            stress_words,
            stress,
            plan,
            plan_d,
            hist,
            capacity,
            rec_words,
            records,
            mem_init,
            status_init,
        })
    }

    /// The histogram's parameters for one launch's buffers.
    pub(crate) fn hist_params(
        &self,
        stream: &Arc<CudaStream>,
        lay: &Layout,
        mem: u64,
        regs: u64,
        status: u64,
    ) -> histogram::HistParams {
        histogram::HistParams {
            mem,
            regs,
            status,
            plan: self.plan_d.device_ptr(stream).0,
            hist: self.hist.device_ptr(stream).0,
            records: self.records.device_ptr(stream).0,
            instances: self.n,
            nobs: self.plan.offsets.len() as u32,
            ndom: self.plan.domain.len() as u32,
            status_stride: lay.status_stride,
            reg_stride: lay.reg_stride,
            slot_stride: lay.slot_stride,
            record_capacity: u32::try_from(self.capacity).unwrap_or(u32::MAX),
            bins: self.plan.bins as u32,
        }
    }

    /// Reads the histogram back into `run`, and decodes the records of the
    /// instances it could not bin: failed ones, out-of-domain outcomes.
    pub(crate) fn collect(
        &self,
        stream: &Arc<CudaStream>,
        lay: &Layout,
        run: &mut Collected,
    ) -> Result<(), GpuError> {
        let hist_h = stream
            .clone_dtoh(&self.hist)
            .map_err(drv("cannot copy the histogram back"))?;
        run.histogram = self.plan.decode(&hist_h);
        let bins = self.plan.bins as usize;
        let (failed, odd) = (hist_h[bins], hist_h[bins + 1]);
        run.launch_failures = failed;
        run.instances = hist_h[..bins].iter().sum::<u64>() + odd;
        if failed + odd == 0 {
            return Ok(());
        }
        let rec_words = self.rec_words;
        let count = stream
            .clone_dtoh(&self.records.slice(0..1))
            .map_err(drv("cannot copy the record count back"))?[0] as usize;
        let stored = count.min(self.capacity as usize);
        let recs = stream
            .clone_dtoh(&self.records.slice(1..1 + stored * rec_words))
            .map_err(drv("cannot copy the records back"))?;
        let (mut seen_failed, mut seen_odd) = (0, 0);
        for r in recs.chunks_exact(rec_words) {
            let (rg, rest) = r.split_at(lay.reg_stride as usize);
            let (mm, st) = rest.split_at(lay.slot_stride as usize);
            match instance_failure(lay, st) {
                Some(why) => {
                    seen_failed += 1;
                    run.first_launch_error.get_or_insert(why);
                }
                None => {
                    seen_odd += 1;
                    *run.histogram
                        .entry(instance_state(lay, rg, mm))
                        .or_default() += 1;
                }
            }
        }
        if (seen_failed, seen_odd) != (failed, odd) {
            return Err(GpuError::new(format!(
                "the GPU histogram counted {failed} failed and {odd} out-of-domain instances \
                 but recorded {seen_failed} and {seen_odd}"
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_decoding() {
        let yaml = "rules:\n  - id: cdp2.t.r\n    source: { seed: s.txt, section: \"1\" }\n    quote: q\n    profile: cdp2\n    tests: [t]\ntests:\n  - name: t\n    kind: litmus\n    memory: { x: 0 }\n    kernels:\n      - kernel: parent\n        launch: host\n        threads:\n          t0: [store x 1, launch child tail]\n      - kernel: child\n        launch: device\n        threads:\n          t0: [load r0 x]\n    condition: exists child.t0.r0 == 0\n    expect: forbidden\n";
        let spec = gridcheck_spec::load_sources(
            &[(std::path::PathBuf::from("spec/x.yaml"), yaml.to_string())],
            None,
        );
        let spec = spec.unwrap_or_else(|e| panic!("{e}"));
        let gridcheck_spec::TestBody::Litmus(l) = &spec.tests[0].body else {
            panic!()
        };
        let lay = gridcheck_kernelgen::layout(l);
        assert!(
            instance_failure(&lay, &lay.initial_status())
                .unwrap()
                .contains("not reached")
        );
        assert!(
            instance_failure(&lay, &[1, 1, 69])
                .unwrap()
                .contains("cudaErrorLaunchPendingCountExceeded")
        );
        assert!(
            instance_failure(&lay, &[1, 0, 0])
                .unwrap()
                .contains("child")
        );
        assert_eq!(instance_failure(&lay, &[1, 1, 0]), None);
        let mut mem = lay.initial_slot();
        mem[0] = 1;
        let s = instance_state(&lay, &[0], &mem);
        let keys: Vec<String> = s.keys().cloned().collect();
        let mut obs = l.observables();
        obs.sort();
        assert_eq!(keys, obs);
        assert_eq!((s["child.t0.r0"], s["x"]), (0, 1));
    }

    #[test]
    fn every_block_of_an_instance_must_run() {
        let yaml = "rules:\n  - id: cdp2.t.r\n    source: { seed: s.txt, section: \"1\" }\n    quote: q\n    profile: cdp2\n    tests: [t]\ntests:\n  - name: t\n    kind: litmus\n    memory: { x: 0 }\n    kernels:\n      - kernel: parent\n        launch: host\n        threads:\n          b0.t0: [store x 1]\n          b1.t0: [load r0 x]\n    condition: exists parent.b1.t0.r0 == 0\n    expect: allowed\n";
        let spec = gridcheck_spec::load_sources(
            &[(std::path::PathBuf::from("spec/x.yaml"), yaml.to_string())],
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let gridcheck_spec::TestBody::Litmus(l) = &spec.tests[0].body else {
            panic!()
        };
        let lay = gridcheck_kernelgen::layout(l);
        assert_eq!((lay.kernels[0].blocks, lay.kernels[0].ran_value()), (2, 2));
        assert_eq!(instance_failure(&lay, &[2]), None);
        assert_eq!(
            instance_failure(&lay, &[1]).unwrap(),
            "kernel `parent` did not run: 1 of its 2 blocks ran"
        );
        let plan = histogram::Plan::new(l, &lay);
        assert_eq!(plan.status_expect, [2]);
    }

    #[test]
    fn stream_and_event_failures_discard_the_instance() {
        let yaml = "rules:\n  - id: cdp2.t.r\n    source: { seed: s.txt, section: \"1\" }\n    quote: q\n    profile: cdp2\n    tests: [t]\ntests:\n  - name: t\n    kind: litmus\n    memory: { x: 0 }\n    kernels:\n      - kernel: parent\n        launch: host\n        threads:\n          t0: [launch child s1, record e1 s1]\n      - kernel: child\n        launch: device\n        threads:\n          t0: [load r0 x]\n    condition: exists child.t0.r0 == 0\n    expect: allowed\n";
        let spec = gridcheck_spec::load_sources(
            &[(std::path::PathBuf::from("spec/x.yaml"), yaml.to_string())],
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let gridcheck_spec::TestBody::Litmus(l) = &spec.tests[0].body else {
            panic!()
        };
        let lay = gridcheck_kernelgen::layout(l);
        // ran: parent, child; launch; create s1, e1; record.
        assert_eq!(lay.status_stride, 6);
        assert_eq!(instance_failure(&lay, &[1, 1, 0, 0, 0, 0]), None);
        let why = instance_failure(&lay, &[1, 1, 0, 2, 0, 0]).unwrap();
        assert_eq!(
            why,
            "parent creating stream s1 failed: cudaErrorMemoryAllocation (2)"
        );
        let why = instance_failure(&lay, &[1, 1, 0, 0, 0, STATUS_NOT_REACHED]).unwrap();
        assert_eq!(why, "parent.t0 `record e1 s1` was not reached");
    }
}
