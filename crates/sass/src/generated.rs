//! How a generated kernel's code divides among its modeled threads, read
//! from the generated CUDA (`kernels/generated/<test>.cu`, which kernelgen
//! writes in one shape): each kernel `extern "C" __global__ void <name>(...)
//! {`; in each phase, one branch a modeled thread (`if (threadIdx.x / 32u
//! == N) {  // tN: lane 0 of its warp`, with `block == M &&` in kernels of
//! several blocks), in which each operation is a `// <op>` comment, a delay,
//! and `if (gc_lead) { <its code> }`; phases end in `__syncthreads();  //
//! syncthreads`, an operation of every modeled thread of the block. The
//! code lines of an operation are what the machine code is matched by.
//!
//! The lead lane's `if (gc_lead)` guards, the delays between operations
//! (loops) and the stress warps' branch are around the operations, not
//! between an operation's code lines.
//!
//! Of the asynchronous proxy, the bulk copies are checked (a `bulkload`
//! after the PDL wait is a copy, `UBLKCP`, that must stay after
//! `ACQBULK`); loads and stores of shared memory (`smem[...]`), the
//! mbarrier waits, the bulk groups' commits and waits and the proxy fence
//! are left out: the tier checks the order of global memory operations
//! around the PDL and launch primitives.

use crate::order::{Op, OpKind};

/// One modeled thread's program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thread {
    pub name: String,
    pub ops: Vec<Op>,
}

/// One kernel of a generated file and its modeled threads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kernel {
    /// The function's symbol.
    pub name: String,
    pub threads: Vec<Thread>,
}

impl Kernel {
    /// Whether one of its threads runs a PDL or launch primitive.
    pub fn has_primitive(&self) -> bool {
        self.threads.iter().any(|t| {
            t.ops
                .iter()
                .any(|o| o.kind.is_primitive() && o.kind != OpKind::Barrier)
        })
    }
}

/// The kind of a DSL operation by its text; `None` for those the order
/// checks leave out (`geterror`, `peekerror`).
pub fn op_kind(text: &str) -> Result<Option<OpKind>, String> {
    Ok(Some(match text.split_whitespace().next().unwrap_or("") {
        "store" => OpKind::Store,
        "load" => OpKind::Load,
        "trigger" => OpKind::Trigger,
        "gridsync" => OpKind::Wait,
        "launch" => OpKind::Launch,
        "record" => OpKind::EventRecord,
        "waitevent" => OpKind::StreamWaitEvent,
        "devicesync" => OpKind::DeviceSync,
        "syncthreads" => OpKind::Barrier,
        "bulkload" => OpKind::AsyncLoad,
        "bulkstore" => OpKind::AsyncStore,
        "geterror" | "peekerror" | "mbarwait" | "bulkcommit" | "bulkwait" | "fence.proxy.async" => {
            return Ok(None);
        }
        other => return Err(format!("unknown operation `{other}`")),
    }))
}

/// The kernels of a generated file. Errors name the line.
pub fn parse(source: &str) -> Result<Vec<Kernel>, String> {
    let mut kernels: Vec<Kernel> = Vec::new();
    let mut thread: Option<usize> = None;
    let mut open: Option<(usize, Op)> = None;
    let mut in_code = false;
    for (n, line) in source.lines().enumerate() {
        let no = u32::try_from(n + 1).unwrap_or(u32::MAX);
        let t = line.trim();
        if let Some(rest) = line.strip_prefix("extern \"C\" __global__ void ")
            && t.ends_with('{')
        {
            let name = rest.split('(').next().unwrap_or("").trim().to_string();
            kernels.push(Kernel {
                name,
                threads: Vec::new(),
            });
            thread = None;
            continue;
        }
        let Some(k) = kernels.last_mut() else {
            continue;
        };
        if let Some((ti, op)) = open.as_mut() {
            if line == "    }" {
                let (ti, op) = (*ti, op.clone());
                k.threads[ti].ops.push(op);
                open = None;
                in_code = false;
            } else if line == "    if (gc_lead) {" {
                in_code = true;
            } else if in_code && !t.starts_with('#') && !t.starts_with("//") {
                op.lines.push(no);
                // A load or store of shared memory: left out.
                if matches!(op.kind, OpKind::Load | OpKind::Store) && t.contains("smem[") {
                    op.label.clear();
                }
            }
            continue;
        }
        if line == "}" {
            thread = None;
            continue;
        }
        if t.contains(": lane 0 of its warp")
            && (t.starts_with("if (") || t.starts_with("} else if ("))
        {
            let name = t
                .rsplit_once("// ")
                .and_then(|(_, r)| r.split(':').next())
                .ok_or_else(|| format!("line {no}: a thread's branch without its name"))?
                .to_string();
            let i = match k.threads.iter().position(|x| x.name == name) {
                Some(i) => i,
                None => {
                    k.threads.push(Thread {
                        name,
                        ops: Vec::new(),
                    });
                    k.threads.len() - 1
                }
            };
            thread = Some(i);
            continue;
        }
        if t.contains("// stress warps") {
            thread = None;
            continue;
        }
        if t.starts_with("__syncthreads();  // syncthreads") {
            for th in &mut k.threads {
                th.ops.push(Op {
                    label: "syncthreads".into(),
                    kind: OpKind::Barrier,
                    lines: vec![no],
                });
            }
            continue;
        }
        if let (Some(ti), Some(text)) = (thread, line.strip_prefix("    // ")) {
            match op_kind(text).map_err(|e| format!("line {no}: {e}"))? {
                Some(kind) => {
                    open = Some((
                        ti,
                        Op {
                            label: text.to_string(),
                            kind,
                            lines: Vec::new(),
                        },
                    ));
                }
                None => {
                    open = Some((
                        ti,
                        Op {
                            label: String::new(),
                            kind: OpKind::Load,
                            lines: Vec::new(),
                        },
                    ));
                }
            }
        }
    }
    // Operations the checks leave out were parsed to skip their code.
    for k in &mut kernels {
        for t in &mut k.threads {
            t.ops.retain(|o| !o.label.is_empty());
        }
    }
    if open.is_some() {
        return Err("the file ends inside an operation".into());
    }
    Ok(kernels)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"extern "C" __global__ void k__primary(gc_params p) {
  if (threadIdx.x / 32u == 0u) {  // t0: lane 0 of its warp
    const bool gc_lead = threadIdx.x % 32u == 0u;
    // store x 1
    if (gc_lead) gc_delay(p, slot, 0u);
    if (gc_lead) {
    mem[0u] = 1u;
    }
    // geterror r0
    if (gc_lead) gc_delay(p, slot, 1u);
    if (gc_lead) {
    t0_r0 = (unsigned int)cudaGetLastError();
    }
    // trigger
    if (gc_lead) gc_delay(p, slot, 2u);
    if (gc_lead) {
    cudaTriggerProgrammaticLaunchCompletion();
    }
    if (gc_lead) gc_arrive(&gc_arrived);
  } else if (threadIdx.x >= 32u) {  // stress warps
    gc_stress(p, slot, &gc_arrived, 1u, 0u);
  }
  __syncthreads();  // syncthreads, executed by every thread of the block
  if (threadIdx.x / 32u == 0u) {  // t0: lane 0 of its warp
    const bool gc_lead = threadIdx.x % 32u == 0u;
    // launch c s1
    if (gc_lead) gc_delay(p, slot, 3u);
    if (gc_lead) {
    k__c<<<1, 96, 0, gc_stream_s1>>>(p, slot);
    gc_record_launch(p, kStatusStride, slot, 4u, cudaGetLastError());
    }
  }
}
"#;

    #[test]
    fn threads_and_their_operations() {
        let k = parse(SRC).unwrap();
        assert_eq!(k.len(), 1);
        assert_eq!(k[0].name, "k__primary");
        let t = &k[0].threads;
        assert_eq!(t.len(), 1);
        let ops: Vec<(&str, OpKind, Vec<u32>)> = t[0]
            .ops
            .iter()
            .map(|o| (o.label.as_str(), o.kind, o.lines.clone()))
            .collect();
        assert_eq!(
            ops,
            vec![
                ("store x 1", OpKind::Store, vec![7]),
                ("trigger", OpKind::Trigger, vec![17]),
                ("syncthreads", OpKind::Barrier, vec![23]),
                ("launch c s1", OpKind::Launch, vec![29, 30]),
            ]
        );
        assert!(k[0].has_primitive());
    }

    #[test]
    fn bulk_copies_are_checked_and_shared_memory_left_out() {
        let src = r#"extern "C" __global__ void k__secondary(gc_params p) {
  if (threadIdx.x / 32u == 0u) {  // t0: lane 0 of its warp
    const bool gc_lead = threadIdx.x % 32u == 0u;
    // gridsync
    if (gc_lead) gc_delay(p, slot, 0u);
    if (gc_lead) {
    cudaGridDependencySynchronize();
    }
    // bulkload s x b
    if (gc_lead) gc_delay(p, slot, 1u);
    if (gc_lead) {
    gc_bulk_load(&smem[0u], &mem[0u], &gc_mbar_b);
    }
    // mbarwait b
    if (gc_lead) gc_delay(p, slot, 2u);
    if (gc_lead) {
    gc_mbar_wait(&gc_mbar_b);
    }
    // load r0 s
    if (gc_lead) gc_delay(p, slot, 3u);
    if (gc_lead) {
    t0_r0 = smem[0u];
    }
    // bulkstore y s
    if (gc_lead) gc_delay(p, slot, 4u);
    if (gc_lead) {
    gc_bulk_store(&mem[32u], &smem[0u]);
    }
    if (gc_lead) { gc_bulk_commit(); gc_bulk_wait_read<0>(); }  // drain: the bulk stores read shared memory
    if (gc_lead) gc_arrive(&gc_arrived);
  }
}
"#;
        let k = parse(src).unwrap();
        let ops: Vec<(&str, OpKind, Vec<u32>)> = k[0].threads[0]
            .ops
            .iter()
            .map(|o| (o.label.as_str(), o.kind, o.lines.clone()))
            .collect();
        assert_eq!(
            ops,
            vec![
                ("gridsync", OpKind::Wait, vec![7]),
                ("bulkload s x b", OpKind::AsyncLoad, vec![12]),
                ("bulkstore y s", OpKind::AsyncStore, vec![27]),
            ]
        );
    }

    #[test]
    fn an_unknown_operation_is_an_error_with_its_line() {
        let bad = SRC.replace("// store x 1", "// frobnicate x");
        assert_eq!(
            parse(&bad).unwrap_err(),
            "line 4: unknown operation `frobnicate`"
        );
    }
}
