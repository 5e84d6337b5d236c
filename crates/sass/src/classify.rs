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

/// How an instruction touches global memory, for the early-load check:
/// the kind of access and which of its bracketed operands holds the global
/// address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// `LDG`, a generic `LD` (may be global), `ATOMG`/`ATOM` (they read).
    Load,
    /// `LDG.E.CONSTANT` (`ld.global.nc`, `__ldg`, `const __restrict__`).
    ReadOnlyLoad,
    /// `LDGSTS` (`cp.async`): global to shared.
    CpAsync,
    /// `UBLKCP.S.G`, `UBLKPF`: a bulk copy (or prefetch) from global.
    Bulk,
    /// `UTMALDG`, `UTMAPF`: a tensor copy (or prefetch of a tensor's
    /// data) whose operand is the tensor map's address.
    Tma,
    /// `UTMACCTL.PF` (`prefetch.tensormap`): the tensor map itself, the
    /// descriptor, fetched into the descriptor cache; no tensor data.
    TensorMapPrefetch,
    /// `STG`, `ST`, `RED`/`REDG`, `ATOMG`/`ATOM`, `UTMASTG`, `UTMAREDG`,
    /// `UBLKCP.G.S`, `UBLKRED`: writes global memory.
    Store,
}

impl Access {
    pub fn name(self) -> &'static str {
        match self {
            Access::Load => "global load",
            Access::ReadOnlyLoad => "read-only load",
            Access::CpAsync => "cp.async",
            Access::Bulk => "bulk copy",
            Access::Tma => "TMA",
            Access::TensorMapPrefetch => "tensor-map prefetch",
            Access::Store => "store",
        }
    }

    pub fn is_load(self) -> bool {
        self != Access::Store
    }
}

/// The global memory access of an instruction, if it makes one, and the
/// index (among its `[...]` operands, a `desc[..]` prefix not counted) of
/// the operand holding the global address. Shared, local and constant
/// accesses are none.
pub fn access(i: &Instr) -> Option<(Access, usize)> {
    let op = i.opcode.as_str();
    let has = |part: &str| op.split('.').any(|p| p == part);
    let a = match i.base() {
        "LDG" if has("CONSTANT") => (Access::ReadOnlyLoad, 0),
        "LDG" | "LD" => (Access::Load, 0),
        "ATOMG" | "ATOM" => (Access::Load, 0),
        "STG" | "ST" | "RED" | "REDG" => (Access::Store, 0),
        "LDGSTS" => (Access::CpAsync, 1),
        "UBLKCP" if op.contains(".G.S") => (Access::Store, 0),
        "UBLKCP" => (Access::Bulk, 1),
        "UBLKPF" => (Access::Bulk, 0),
        "UBLKRED" => (Access::Store, 0),
        "UTMASTG" | "UTMAREDG" => (Access::Store, 1),
        "UTMALDG" => (Access::Tma, 1),
        "UTMAPF" => (Access::Tma, 0),
        "UTMACCTL" if has("PF") => (Access::TensorMapPrefetch, 0),
        _ => return None,
    };
    Some(a)
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

    #[test]
    fn accesses_and_their_address_operand() {
        let a = |op| access(&i(op, None));
        assert_eq!(a("LDG.E.CONSTANT"), Some((Access::ReadOnlyLoad, 0)));
        assert_eq!(a("LDG.E.64.STRONG.GPU"), Some((Access::Load, 0)));
        assert_eq!(a("LD.E"), Some((Access::Load, 0)));
        assert_eq!(a("STG.E"), Some((Access::Store, 0)));
        assert_eq!(a("LDGSTS.E.BYPASS.128"), Some((Access::CpAsync, 1)));
        assert_eq!(a("UBLKCP.S.G"), Some((Access::Bulk, 1)));
        assert_eq!(a("UBLKCP.G.S"), Some((Access::Store, 0)));
        assert_eq!(a("UTMALDG.4D"), Some((Access::Tma, 1)));
        assert_eq!(a("UTMACCTL.PF"), Some((Access::TensorMapPrefetch, 0)));
        assert_eq!(a("UTMACCTL.IV"), None);
        assert_eq!(a("UTMASTG.2D"), Some((Access::Store, 1)));
        assert_eq!(a("LDS"), None);
        assert_eq!(a("LDC.64"), None);
        assert!(Access::Tma.is_load() && !Access::Store.is_load());
    }
}
