//! One kernel's machine code judged: its PDL wait and trigger, the global,
//! read-only and TMA/bulk loads that can run before the first wait on some
//! path, each with the parameter its address derives from, the triggers
//! some path reaches before the wait (one walk, `paths.rs`, for both), the
//! parameters its stores write through, and where the trigger sits among
//! the stores.

use serde::{Deserialize, Serialize};

use gridcheck_sass::cfg::Cfg;
use gridcheck_sass::{Access, Class, Function, access, classify};

use crate::flow::{self, Origin, Target};
use crate::nvinfo::{Param, ParamInfo};

/// A parameter (or a pointer-sized field of one) an address derives from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ParamRef {
    /// The parameter's ordinal; none when the cubin lists no parameters.
    pub ordinal: Option<u32>,
    /// The byte inside the parameter (0 for a pointer parameter; a field's
    /// offset in a structure passed by value).
    pub at: u32,
    /// The parameter's size in bytes.
    pub size: u32,
    /// The parameter's type, from the demangled name, where there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ty: Option<String>,
}

impl std::fmt::Display for ParamRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.ordinal {
            Some(o) => write!(f, "parameter {o}")?,
            None => write!(f, "the parameters")?,
        }
        if self.size > 8 || self.ordinal.is_none() {
            write!(f, " (byte 0x{:x} of {})", self.at, self.size)?;
        }
        if let Some(t) = &self.ty {
            write!(f, " `{t}`")?;
        }
        Ok(())
    }
}

/// Where an address comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Provenance {
    /// The address is computed from these pointer parameters (or, for a
    /// TMA copy, the tensor map is this parameter). `also_memory`: a value
    /// loaded from memory enters the address too (an index, or a base).
    Param {
        params: Vec<ParamRef>,
        also_memory: bool,
    },
    /// The address is a pointer loaded from memory through these
    /// parameters (a page table, an array of pointers).
    Loaded { through: Vec<ParamRef> },
    /// The dataflow cannot tell.
    Unknown { why: String },
}

/// One load that can run before the first wait.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EarlyLoad {
    pub addr: u64,
    pub instr: String,
    /// `global load`, `read-only load`, `TMA`, `bulk copy`, `cp.async`.
    pub access: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loc: Option<String>,
    pub provenance: Provenance,
    /// It reads only a kernel parameter itself: a tensor-map prefetch of a
    /// `__grid_constant__` tensor map. The host writes the parameters at
    /// launch and no kernel can, so no pairing makes it a finding.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reads_params_only: bool,
}

/// One kernel's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kernel {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub demangled: Option<String>,
    pub arch: String,
    pub params: Vec<Param>,
    /// `ACQBULK` addresses.
    pub waits: Vec<u64>,
    /// `PREEXIT` addresses.
    pub triggers: Vec<u64>,
    /// The `PREEXIT` addresses some path reaches before any wait: one
    /// thread's trigger counts for its block, so the kernel's dependent
    /// can start before this kernel's wait returned, that is, before the
    /// kernel this one depends on completed (`pair.rs` follows that chain).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub early_triggers: Vec<u64>,
    pub early: Vec<EarlyLoad>,
    /// The pointer parameters its stores write through.
    pub writes: Vec<ParamRef>,
    pub stores: usize,
    /// Stores whose address the dataflow cannot trace to a parameter.
    pub unknown_stores: usize,
    /// Stores some path runs after a trigger.
    pub stores_after_trigger: usize,
    pub notes: Vec<String>,
    /// Not disassembled: its code holds no PDL instruction (`prefilter.rs`),
    /// so nothing but its name, architecture and parameters is known.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub skipped: bool,
}

impl Kernel {
    /// A kernel left out of the disassembly by the prefilter.
    pub fn skipped(name: &str, info: &ParamInfo, arch: &str) -> Kernel {
        Kernel {
            name: name.to_string(),
            demangled: None,
            arch: arch.to_string(),
            params: info.params.clone(),
            waits: Vec::new(),
            triggers: Vec::new(),
            early_triggers: Vec::new(),
            early: Vec::new(),
            writes: Vec::new(),
            stores: 0,
            unknown_stores: 0,
            stores_after_trigger: 0,
            notes: Vec::new(),
            skipped: true,
        }
    }

    pub fn has_pdl(&self) -> bool {
        !self.waits.is_empty() || !self.triggers.is_empty()
    }

    pub fn shown_name(&self) -> &str {
        self.demangled.as_deref().unwrap_or(&self.name)
    }
}

/// The pointer parameters among an address's origins: a parameter of 8
/// bytes or more whose two halves at an 8-aligned byte both reach it.
fn pointer_params(origins: &std::collections::BTreeSet<Origin>, info: &ParamInfo) -> Vec<ParamRef> {
    let mut out = Vec::new();
    for o in origins {
        let Origin::Param(off) = *o else { continue };
        if !origins.contains(&Origin::Param(off + 4)) {
            continue;
        }
        let r = match info.at(off) {
            Some((p, at)) if p.size >= 8 && at % 8 == 0 => ParamRef {
                ordinal: Some(p.ordinal),
                at,
                size: p.size,
                ty: None,
            },
            Some(_) => continue,
            None if info.params.is_empty() && off % 8 == 0 => ParamRef {
                ordinal: None,
                at: off,
                size: 0,
                ty: None,
            },
            None => continue,
        };
        if !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

fn param_at(off: u32, info: &ParamInfo) -> ParamRef {
    match info.at(off) {
        Some((p, at)) => ParamRef {
            ordinal: Some(p.ordinal),
            at: if p.size > 8 { at } else { 0 },
            size: p.size,
            ty: None,
        },
        None => ParamRef {
            ordinal: None,
            at: off,
            size: 0,
            ty: None,
        },
    }
}

/// Whether an address is a parameter's own address and nothing else: no
/// pointer parameter's value, nothing loaded from memory.
fn in_params_only(
    all: &std::collections::BTreeSet<Origin>,
    low: &std::collections::BTreeSet<Origin>,
    info: &ParamInfo,
) -> bool {
    low.iter().any(|o| matches!(o, Origin::ParamAddr(Some(_))))
        && pointer_params(all, info).is_empty()
        && !all
            .iter()
            .any(|o| matches!(o, Origin::Memory | Origin::LoadedVia(_)))
}

/// The provenance of an address from its registers' origins (`all`: the
/// pair's; `low`: the low register's, where a parameter's own address is).
pub fn provenance(
    all: &std::collections::BTreeSet<Origin>,
    low: &std::collections::BTreeSet<Origin>,
    info: &ParamInfo,
) -> Provenance {
    let mut params = pointer_params(all, info);
    for o in low {
        if let Origin::ParamAddr(Some(a)) = o
            && let Ok(a) = u32::try_from(*a)
        {
            let r = param_at(a, info);
            if !params.contains(&r) {
                params.push(r);
            }
        }
    }
    let also_memory = all
        .iter()
        .any(|o| matches!(o, Origin::Memory | Origin::LoadedVia(_)));
    if !params.is_empty() {
        params.sort();
        return Provenance::Param {
            params,
            also_memory,
        };
    }
    let mut through: Vec<ParamRef> = all
        .iter()
        .filter_map(|o| match o {
            Origin::LoadedVia(p) => Some(param_at(*p, info)),
            _ => None,
        })
        .collect();
    through.sort();
    through.dedup();
    if !through.is_empty() {
        return Provenance::Loaded { through };
    }
    let why = if low.contains(&Origin::ParamAddr(None)) {
        "an address inside the parameters at an offset the dataflow does not follow"
    } else if all.contains(&Origin::Memory) {
        "a pointer read from shared or local memory, another constant bank or a call's result"
    } else {
        "no kernel parameter reaches the address"
    };
    Provenance::Unknown { why: why.into() }
}

/// Judges one kernel.
pub fn analyze(f: &Function, info: &ParamInfo, arch: &str) -> Kernel {
    let base = info.cbank_offset.unwrap_or(if arch_number(arch) >= 100 {
        0x380
    } else {
        0x210
    });
    let size = info.cbank_size.unwrap_or_else(|| {
        info.params
            .iter()
            .map(|p| p.offset + p.size)
            .max()
            .unwrap_or(0x1000)
    });
    let cfg = Cfg::new(f);
    let flow = flow::run(f, &cfg, Target::new(base, size));
    let is = |c: Class| -> Vec<usize> {
        (0..f.instrs.len())
            .filter(|&k| classify(&f.instrs[k]) == c)
            .collect()
    };
    let waits = is(Class::Wait);
    let triggers = is(Class::Trigger);
    let mut avoid = vec![false; f.instrs.len()];
    for &w in &waits {
        avoid[w] = true;
    }
    let early = crate::paths::before(f, &cfg, &avoid);
    let after_trigger = if triggers.is_empty() {
        vec![false; f.instrs.len()]
    } else {
        cfg.reach(&triggers, &[])
    };
    let mut k = Kernel {
        waits: waits.iter().map(|&w| f.instrs[w].addr).collect(),
        triggers: triggers.iter().map(|&t| f.instrs[t].addr).collect(),
        early_triggers: triggers
            .iter()
            .filter(|&&t| early[t])
            .map(|&t| f.instrs[t].addr)
            .collect(),
        skipped: false,
        ..Kernel::skipped(&f.name, info, arch)
    };
    if let Some(why) = &cfg.incomplete {
        k.notes.push(format!(
            "the control flow is not whole ({why}): loads reached only through it are not listed"
        ));
    }
    if waits.iter().any(|&w| cfg.reach(&[w], &[])[w]) {
        k.notes.push(
            "a wait is in a loop: a path that enters the loop again skips it, so loads of later \
             iterations are listed (the check does not evaluate branch conditions)"
                .into(),
        );
    }
    let empty = Default::default();
    for (idx, i) in f.instrs.iter().enumerate() {
        let Some((a, _)) = access(i) else { continue };
        let (all, low) = flow.address.get(&idx).unwrap_or(&empty);
        let prov = provenance(all, low, info);
        if a.is_load() {
            if early[idx] {
                k.early.push(EarlyLoad {
                    addr: i.addr,
                    instr: i.text(),
                    access: a.name().to_string(),
                    loc: i.loc.as_ref().map(|l| format!("{}:{}", l.file, l.line)),
                    reads_params_only: a == Access::TensorMapPrefetch
                        && in_params_only(all, low, info),
                    provenance: prov,
                });
            }
            continue;
        }
        k.stores += 1;
        if after_trigger[idx] {
            k.stores_after_trigger += 1;
        }
        match prov {
            Provenance::Param { params, .. } => {
                for p in params {
                    if !k.writes.contains(&p) {
                        k.writes.push(p);
                    }
                }
            }
            _ => k.unknown_stores += 1,
        }
    }
    k.writes.sort();
    k
}

/// `sm_100f` -> 100.
pub fn arch_number(arch: &str) -> u32 {
    let digits: String = arch
        .trim_start_matches(|c: char| !c.is_ascii_digit())
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn early_triggers(body: &str) -> Vec<u64> {
        let text = format!(".section .text.k,\"ax\"\n{body}");
        let f = &gridcheck_sass::parse(&text).unwrap()[0];
        analyze(f, &ParamInfo::default(), "sm_90").early_triggers
    }

    #[test]
    fn a_trigger_some_path_reaches_before_the_wait_is_early() {
        // Wait, then trigger: on every path the wait comes first.
        let wait_first = "/*0000*/ ACQBULK ;\n/*0010*/ PREEXIT ;\n/*0020*/ EXIT ;\n";
        assert!(early_triggers(wait_first).is_empty());
        // Trigger first (CUB's histogram kernel), and no wait at all.
        let trigger_first = "/*0000*/ PREEXIT ;\n/*0010*/ ACQBULK ;\n/*0020*/ EXIT ;\n";
        assert_eq!(early_triggers(trigger_first), [0x0]);
        assert_eq!(
            early_triggers("/*0000*/ PREEXIT ;\n/*0010*/ EXIT ;\n"),
            [0x0]
        );
        // A branch past the wait reaches the trigger on one path.
        let skipped = "/*0000*/ ISETP.GE.AND P0, PT, R1, R2, PT ;\n\
                       /*0010*/ @P0 BRA `(.L_x_1) ;\n\
                       /*0020*/ ACQBULK ;\n\
                       .L_x_1:\n\
                       /*0030*/ PREEXIT ;\n\
                       /*0040*/ EXIT ;\n";
        assert_eq!(early_triggers(skipped), [0x30]);
        // The same walk as the early loads: a trigger guarded by the
        // predicate that took the path through the wait is not early.
        let guarded = "/*0000*/ ISETP.GE.AND P0, PT, R1, R2, PT ;\n\
                       /*0010*/ @P0 BRA `(.L_x_1) ;\n\
                       /*0020*/ ACQBULK ;\n\
                       .L_x_1:\n\
                       /*0030*/ @!P0 PREEXIT ;\n\
                       /*0040*/ EXIT ;\n";
        assert!(early_triggers(guarded).is_empty());
    }
}
