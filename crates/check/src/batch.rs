//! Many cubins checked together: each read from the cache where it is
//! there; the rest grouped by architecture (the ELF flags), up to
//! [`Tools::pack`] cubins packed into one file (`pack.rs`) and given to one
//! nvdisasm run, which disassembles only the kernels the prefilter passes
//! (`prefilter.rs`; every kernel with [`Tools::all_kernels`]); its text
//! split by cubin, each judged as alone. A cubin that cannot be packed, or
//! one of a pack nvdisasm refuses, is checked alone with every kernel
//! (`cubin::check`).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::cubin::{self, CubinResult, Tools, check_text, param_infos};
use crate::elf::{EM_CUDA, Elf};
use crate::kernel::Kernel;
use crate::nvinfo::ParamInfo;
use crate::pack;
use crate::prefilter;

/// `f` over every item on `jobs` threads, the results in the items' order.
pub fn par_map<T: Sync, R: Send>(items: &[T], jobs: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1).min(items.len().max(1)) {
            s.spawn(|| {
                loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(n) else { break };
                    let r = f(item);
                    if let Ok(mut all) = results.lock() {
                        all[n] = Some(r);
                    }
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.expect("every item is mapped"))
        .collect()
}

/// A cubin waiting for nvdisasm: its kernels (by their code sections'
/// order) and whether each is disassembled.
struct Pending<'a> {
    at: usize,
    bytes: &'a [u8],
    elf: Elf<'a>,
    infos: BTreeMap<String, ParamInfo>,
    kernels: Vec<(String, bool)>,
    packable: bool,
    /// A kernel to disassemble seems to branch indirectly: nvdisasm's
    /// dataflow analysis is wanted.
    dataflow: bool,
}

fn prepare<'a>(at: usize, bytes: &'a [u8], tools: &Tools) -> Result<Pending<'a>, String> {
    let elf = Elf::parse(bytes)?;
    if elf.machine != EM_CUDA {
        return Err(format!(
            "an ELF file for machine {}, not a cubin (EM_CUDA, 190)",
            elf.machine
        ));
    }
    let infos = param_infos(&elf)?;
    let sm = elf.sm();
    let mut dataflow = false;
    let mut kernels = Vec::new();
    for s in &elf.sections {
        let Some(k) = s.name.strip_prefix(".text.") else {
            continue;
        };
        if infos.contains_key(k) {
            let wanted = tools.all_kernels || prefilter::may_hold_pdl(sm, s.data);
            dataflow |= wanted && prefilter::may_branch_indirectly(sm, s.data);
            kernels.push((k.to_string(), wanted));
        }
    }
    let packable = pack::packable(&elf).is_ok();
    Ok(Pending {
        at,
        bytes,
        elf,
        infos,
        kernels,
        packable,
        dataflow,
    })
}

/// A cubin's result from its own text: the kernels disassembled as judged,
/// the others as skipped, in the order of their code.
fn assemble(p: &Pending<'_>, text: &str) -> Result<CubinResult, String> {
    let fallback = format!("sm_{}", p.elf.sm());
    let judged =
        check_text(text, &p.infos, &fallback).map_err(|e| format!("nvdisasm's output: {e}"))?;
    let mut by_name: BTreeMap<String, Kernel> = judged
        .kernels
        .into_iter()
        .map(|k| (k.name.clone(), k))
        .collect();
    let kernels = p
        .kernels
        .iter()
        .filter_map(|(name, wanted)| match wanted {
            true => by_name.remove(name),
            false => Some(Kernel::skipped(name, &p.infos[name], &judged.arch)),
        })
        .collect();
    Ok(CubinResult {
        arch: judged.arch,
        kernels,
    })
}

/// Whether a disassembly has an indirect branch, whose targets only
/// nvdisasm's dataflow analysis infers.
fn indirect(text: &str) -> bool {
    text.contains(" BRX") || text.contains(" JMX")
}

/// One nvdisasm run over a pack (with `dataflow` or not): each cubin's
/// text.
fn disassemble(
    group: &[&Pending<'_>],
    tools: &Tools,
    dataflow: bool,
) -> Result<Vec<String>, String> {
    let elfs: Vec<&Elf<'_>> = group.iter().map(|p| &p.elf).collect();
    let wanted = |n: usize, k: &str| group[n].kernels.iter().any(|(name, w)| *w && name == k);
    let packed = pack::pack(group[0].bytes, &elfs, &wanted)?;
    let mut functions = packed.functions.clone();
    if functions.is_empty() {
        // Nothing to disassemble, but the architecture's name is
        // nvdisasm's: it reads the first kernel.
        functions.extend(
            pack::pack(group[0].bytes, &elfs, &|_, _| true)?
                .functions
                .first(),
        );
    }
    let text = cubin::nvdisasm(tools, &packed.bytes, Some(&functions), dataflow)?;
    Ok(pack::split(&text, &packed.owner, group.len()))
}

/// A pack's cubins disassembled (without the dataflow analysis unless they
/// seem to need it, then those with an indirect branch again with it);
/// each cubin's result (alone when the pack fails).
fn run_pack(group: &[&Pending<'_>], tools: &Tools) -> Vec<Result<CubinResult, String>> {
    if !group[0].packable || tools.pack == 1 {
        return vec![cubin::check(group[0].bytes, tools)];
    }
    let dataflow = group[0].dataflow;
    let texts = disassemble(group, tools, dataflow).and_then(|mut texts| {
        let again: Vec<usize> = (0..group.len())
            .filter(|&n| !dataflow && indirect(&texts[n]))
            .collect();
        if !again.is_empty() {
            let sub: Vec<&Pending<'_>> = again.iter().map(|&n| group[n]).collect();
            for (n, t) in again.into_iter().zip(disassemble(&sub, tools, true)?) {
                texts[n] = t;
            }
        }
        Ok(texts)
    });
    match texts {
        Ok(texts) => group
            .iter()
            .zip(texts)
            .map(|(p, t)| {
                let r = assemble(p, &t)?;
                cubin::keep(p.bytes, tools, &r);
                Ok(r)
            })
            .collect(),
        Err(_) if group.len() > 1 => group.iter().flat_map(|p| run_pack(&[p], tools)).collect(),
        Err(_) => vec![cubin::check(group[0].bytes, tools)],
    }
}

/// Checks cubins on `jobs` threads: each one's result, in order.
pub fn check_all(cubins: &[&[u8]], tools: &Tools, jobs: usize) -> Vec<Result<CubinResult, String>> {
    let mut out: Vec<Option<Result<CubinResult, String>>> = vec![None; cubins.len()];
    let mut pending = Vec::new();
    let indexed: Vec<(usize, &[u8])> = cubins.iter().copied().enumerate().collect();
    let found = par_map(&indexed, jobs, |&(n, b)| match cubin::cached(b, tools) {
        Some(r) => Err(Ok(r)),
        None => prepare(n, b, tools).map_err(Err),
    });
    for (n, f) in found.into_iter().enumerate() {
        match f {
            Ok(p) => pending.push(p),
            Err(r) => out[n] = Some(r),
        }
    }
    // Packs small enough that every thread has several, the costliest
    // first: the last one to finish is a short one.
    let size = if tools.pack == 0 {
        cubin::PACK
    } else {
        tools.pack
    };
    let size = size.min(pending.len().div_ceil(4 * jobs.max(1))).max(1);
    let mut groups = group(&pending, size);
    groups.sort_by_key(|g| std::cmp::Reverse(g.iter().map(|p| cost(p)).sum::<usize>()));
    let results = par_map(&groups, jobs, |g| run_pack(g, tools));
    for (g, rs) in groups.iter().zip(results) {
        for (p, r) in g.iter().zip(rs) {
            out[p.at] = Some(r);
        }
    }
    out.into_iter()
        .map(|r| r.unwrap_or_else(|| Err("not checked".into())))
        .collect()
}

/// A guess at a cubin's nvdisasm time: its size, four times over with the
/// dataflow analysis, whole when it cannot be packed.
fn cost(p: &Pending<'_>) -> usize {
    let weight = if p.dataflow || !p.packable { 4 } else { 1 };
    p.bytes.len() * weight
}

/// Packs of up to `size` cubins with the same ELF flags and the same need
/// of the dataflow analysis; a cubin that cannot be packed is a pack of
/// its own.
fn group<'p, 'a>(pending: &'p [Pending<'a>], size: usize) -> Vec<Vec<&'p Pending<'a>>> {
    let mut by_flags: BTreeMap<(u32, bool), Vec<&Pending<'a>>> = BTreeMap::new();
    let mut out = Vec::new();
    for p in pending {
        if p.packable {
            by_flags
                .entry((p.elf.flags, p.dataflow))
                .or_default()
                .push(p);
        } else {
            out.push(vec![p]);
        }
    }
    for list in by_flags.into_values() {
        out.extend(list.chunks(size).map(<[_]>::to_vec));
    }
    out
}
