//! What an instruction is to the order checks: a global memory access, a
//! PDL primitive, a barrier, a device-runtime call, control flow.
//!
//! SASS opcodes (sm_90 to sm_120, as nvdisasm 13.x prints them):
//! `LDG`/`STG` global loads and stores (`LDG.E.CONSTANT` is `__ldg` and
//! `const __restrict__`), `LD`/`ST` generic ones (counted as global: the
//! tier cannot tell), `ATOMG`/`ATOM`/`RED`/`REDG` atomics, `TEX`/`TLD`/
//! `SULD` the texture and surface paths (counted as loads), `LDGSTS`
//! (`cp.async`) and `UBLKCP`/`UTMALDG`/`UTMAPF` (bulk and tensor copies)
//! asynchronous copies, `ACQBULK` `cudaGridDependencySynchronize()`
//! (`griddepcontrol.wait`), `PREEXIT`
//! `cudaTriggerProgrammaticLaunchCompletion()`
//! (`griddepcontrol.launch_dependents`), `BAR` barriers, `MEMBAR`/`FENCE`
//! fences, and `CALL`s into the device runtime by symbol
//! (`__cudaCDP2LaunchDeviceV2`, `__cudaCDP2EventRecord`, ...).
//! Shared-memory (`LDS`/`STS`) and constant-bank (`LDC`) accesses are not
//! the test's memory.

use crate::parse::Instr;

/// An instruction's class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    GlobalLoad,
    GlobalStore,
    Atomic,
    AsyncCopy,
    /// `ACQBULK`: the PDL wait.
    Wait,
    /// `PREEXIT`: the PDL trigger.
    Trigger,
    Barrier,
    Fence,
    /// A call to the device runtime's launch entry point.
    Launch,
    /// A call to `cudaGetParameterBuffer` (part of a launch).
    ParamBuffer,
    EventRecord,
    StreamWaitEvent,
    DeviceSync,
    /// Any other call.
    Call,
    Branch,
    /// `EXIT`, `RET`: leaves the function.
    Exit,
    Other,
}

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::GlobalLoad => "global load",
            Class::GlobalStore => "global store",
            Class::Atomic => "atomic",
            Class::AsyncCopy => "asynchronous copy",
            Class::Wait => "PDL wait (ACQBULK)",
            Class::Trigger => "PDL trigger (PREEXIT)",
            Class::Barrier => "barrier",
            Class::Fence => "fence",
            Class::Launch => "device launch (call)",
            Class::ParamBuffer => "parameter buffer (call)",
            Class::EventRecord => "event record (call)",
            Class::StreamWaitEvent => "stream wait event (call)",
            Class::DeviceSync => "device synchronize (call)",
            Class::Call => "call",
            Class::Branch => "branch",
            Class::Exit => "exit",
            Class::Other => "other",
        }
    }
}

/// Classifies one instruction.
pub fn classify(i: &Instr) -> Class {
    let base = i.base();
    match base {
        "LDG" | "LD" | "TEX" | "TLD" | "TLD4" | "TXD" | "SULD" => Class::GlobalLoad,
        "STG" | "ST" | "SUST" => Class::GlobalStore,
        "ATOMG" | "ATOM" | "RED" | "REDG" | "SURED" => Class::Atomic,
        "LDGSTS" | "UBLKCP" | "UTMALDG" | "UTMAPF" | "UBLKPF" | "LDGDEPBAR" => Class::AsyncCopy,
        "ACQBULK" => Class::Wait,
        "PREEXIT" => Class::Trigger,
        "BAR" => Class::Barrier,
        "MEMBAR" | "FENCE" | "CCTL" => Class::Fence,
        "CALL" => {
            let t = i.target.as_deref().unwrap_or("");
            if t.contains("LaunchDevice") {
                Class::Launch
            } else if t.contains("GetParameterBuffer") {
                Class::ParamBuffer
            } else if t.contains("EventRecord") {
                Class::EventRecord
            } else if t.contains("StreamWaitEvent") {
                Class::StreamWaitEvent
            } else if t.contains("DeviceSynchronize") {
                Class::DeviceSync
            } else {
                Class::Call
            }
        }
        "BRA" | "BRX" | "JMP" | "JMX" | "BRK" | "CONT" => Class::Branch,
        "EXIT" | "RET" | "KILL" => Class::Exit,
        _ => Class::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i(op: &str, target: Option<&str>) -> Instr {
        Instr {
            addr: 0,
            pred: None,
            opcode: op.into(),
            operands: String::new(),
            target: target.map(str::to_string),
            branch_targets: Vec::new(),
            loc: None,
            inner: None,
        }
    }

    #[test]
    fn classes() {
        assert_eq!(classify(&i("LDG.E.STRONG.SYS", None)), Class::GlobalLoad);
        assert_eq!(classify(&i("LDG.E.CONSTANT", None)), Class::GlobalLoad);
        assert_eq!(classify(&i("STG.E", None)), Class::GlobalStore);
        assert_eq!(classify(&i("RED.E.ADD.STRONG.GPU", None)), Class::Atomic);
        assert_eq!(classify(&i("ATOMS.ADD", None)), Class::Other);
        assert_eq!(classify(&i("LDS", None)), Class::Other);
        assert_eq!(classify(&i("LDGSTS.E.BYPASS.128", None)), Class::AsyncCopy);
        assert_eq!(classify(&i("ACQBULK", None)), Class::Wait);
        assert_eq!(classify(&i("PREEXIT", None)), Class::Trigger);
        assert_eq!(
            classify(&i("BAR.SYNC.DEFER_BLOCKING", None)),
            Class::Barrier
        );
        let call = |t| classify(&i("CALL.ABS.NOINC", Some(t)));
        assert_eq!(call("__cudaCDP2LaunchDeviceV2"), Class::Launch);
        assert_eq!(call("__cudaCDP2GetParameterBufferV2"), Class::ParamBuffer);
        assert_eq!(call("__cudaCDP2EventRecord"), Class::EventRecord);
        assert_eq!(call("__cudaCDP2StreamWaitEvent"), Class::StreamWaitEvent);
        assert_eq!(call("__cuda_sm20_rem_u64"), Class::Call);
        assert_eq!(classify(&i("EXIT", None)), Class::Exit);
    }
}
