//! The check over many files: files read and opened up in parallel (one
//! worker a core), every cubin judged, names demangled and parameter types
//! read from them, PTX entries compared with the SASS, early loads paired
//! with a trace or a produced-parameters file, and the findings.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use gridcheck_sass::presence::{Waits, ptx_entries, ptx_waits};

use crate::batch::{self, par_map};
use crate::cubin::{self, CubinResult, Tools};
use crate::input::{self, Payload};
use crate::kernel::{Kernel, Provenance};
use crate::report::{FileReport, Options, PtxEntry, Report, Unit};

/// Whether a file inside a walked directory is worth opening: an ELF
/// file, a fatbin or PTX by its name.
fn candidate(p: &Path) -> bool {
    if p.extension().is_some_and(|e| e == "ptx") {
        return true;
    }
    let mut head = [0u8; 4];
    std::fs::File::open(p)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok()
        && (head == *b"\x7fELF" || u32::from_le_bytes(head) == crate::fatbin::MAGIC)
}

/// The files to check: each path, directories walked (sorted).
pub fn expand(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut stack = vec![p.clone()];
            let mut found = Vec::new();
            while let Some(d) = stack.pop() {
                for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                    let path = e.path();
                    if path.is_dir() {
                        stack.push(path);
                    } else if candidate(&path) {
                        found.push(path);
                    }
                }
            }
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    out
}

/// A file opened up: its report so far (errors, PTX entries) and its
/// cubins, each with its unit's label.
fn open_file(path: &Path, tools: &Tools) -> (FileReport, Vec<(String, Vec<u8>)>) {
    let mut r = FileReport {
        path: path.display().to_string(),
        errors: Vec::new(),
        units: Vec::new(),
        ptx: Vec::new(),
        all: Vec::new(),
    };
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            r.errors.push(format!("cannot read it: {e}"));
            return (r, Vec::new());
        }
    };
    let (units, errors) = input::units(&bytes, tools);
    r.errors.extend(errors);
    let mut cubins = Vec::new();
    for u in units {
        match u.payload {
            Payload::Cubin(b) => cubins.push((u.label, b)),
            Payload::Ptx(text) => r.ptx.extend(ptx_entries_of(&u.label, &u.arch, &text)),
        }
    }
    (r, cubins)
}

fn ptx_entries_of(label: &str, arch: &str, text: &str) -> Vec<PtxEntry> {
    ptx_entries(text)
        .into_iter()
        .map(|name| {
            let (waits, undecided) = match ptx_waits(text, &name) {
                Ok(Waits::Found(w)) => (w, None),
                Ok(Waits::Undecided(why)) => (Vec::new(), Some(why)),
                Err(e) => (Vec::new(), Some(e)),
            };
            PtxEntry {
                unit: label.to_string(),
                arch: arch.to_string(),
                kernel: name,
                waits,
                undecided,
                sass_wait: false,
            }
        })
        .collect()
}

/// A cubin's result put into its file's report.
fn add_unit(r: &mut FileReport, label: String, result: Result<CubinResult, String>) {
    match result {
        Ok(c) => {
            r.all.extend(c.kernels.iter().cloned());
            let (pdl, other): (Vec<Kernel>, Vec<Kernel>) =
                c.kernels.into_iter().partition(Kernel::has_pdl);
            r.units.push(Unit {
                label,
                arch: c.arch,
                kernels: pdl,
                other_kernels: other.len(),
            });
        }
        Err(e) => r.errors.push(format!("{label}: {e}")),
    }
}

/// A mangled name with its architecture-tagged namespaces made one: CCCL
/// puts the target in an inline namespace (`17CUB_300001_SM_900`,
/// `16_V_300200_SM_900`, `_SM_800` in the compute_80 build), so the same
/// kernel of two targets has two names. Each `<length><identifier>` whose
/// identifier ends in `_SM_<digits>` becomes `NS:<length><identifier>`
/// without the `_SM_` part (the CCCL version stays: another release's
/// kernel is another kernel).
pub fn arch_free(name: &str) -> String {
    let b = name.as_bytes();
    let mut out = String::new();
    let mut from = 0;
    let mut p = 0;
    while let Some(found) = name[p..].find("_SM_") {
        let at = p + found;
        let mut end = at + 4;
        while end < b.len()
            && (b[end].is_ascii_digit()
                || (b[end] == b'_' && b.get(end + 1).is_some_and(u8::is_ascii_digit)))
        {
            end += 1;
        }
        // The length prefix: digits right before some start `s`, whose
        // value `v` ends the identifier inside the digits after `_SM_`
        // (they run on into the next name's length: `_SM_9006detail`).
        let found = (from..at).rev().find_map(|s| {
            let digits = b[..s]
                .iter()
                .rev()
                .take_while(|c| c.is_ascii_digit())
                .count();
            (1..=digits.min(3)).find_map(|n| {
                let v: usize = name[s - n..s].parse().ok()?;
                (s + v > at + 4 && s + v <= end).then_some((s - n, s + v))
            })
        });
        if let Some((k, e)) = found {
            out.push_str(&name[from..k]);
            out.push_str("NS:");
            out.push_str(&name[k..at]);
            from = e;
            end = e;
        }
        p = end;
    }
    out.push_str(&name[from..]);
    out
}

/// `c++filt` over every mangled name, where it exists: name -> demangled.
fn demangle(names: &[String]) -> BTreeMap<String, String> {
    let mangled: Vec<&String> = names.iter().filter(|n| n.starts_with("_Z")).collect();
    if mangled.is_empty() {
        return BTreeMap::new();
    }
    let child = Command::new("c++filt")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return BTreeMap::new();
    };
    let input: String = mangled.iter().map(|n| format!("{n}\n")).collect();
    if let Some(mut stdin) = child.stdin.take() {
        // Written on its own thread: c++filt's output may fill its pipe
        // before it has read all of the input.
        std::thread::spawn(move || std::io::Write::write_all(&mut stdin, input.as_bytes()));
    }
    let Ok(out) = child.wait_with_output() else {
        return BTreeMap::new();
    };
    mangled
        .into_iter()
        .cloned()
        .zip(
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(str::to_string),
        )
        .filter(|(m, d)| m != d)
        .collect()
}

/// The parameter types of a demangled signature, `k(float const*, int)`.
pub fn param_types(demangled: &str) -> Vec<String> {
    let Some(open) = demangled.find('(') else {
        return Vec::new();
    };
    let mut depth = 0i32;
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in demangled[open + 1..].chars() {
        match c {
            '(' | '<' | '[' => depth += 1,
            ')' if depth == 0 => break,
            ')' | '>' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

fn name_kernels(files: &mut [FileReport]) {
    let names: Vec<String> = files
        .iter()
        .flat_map(|f| {
            f.units
                .iter()
                .flat_map(|u| u.kernels.iter().map(|k| k.name.clone()))
        })
        .collect();
    let map = demangle(&names);
    for f in files {
        for k in f.units.iter_mut().flat_map(|u| u.kernels.iter_mut()) {
            k.demangled = map.get(&k.name).cloned();
            let types = k.demangled.as_deref().map(param_types).unwrap_or_default();
            for p in k
                .early
                .iter_mut()
                .flat_map(|l| match &mut l.provenance {
                    Provenance::Param { params, .. } => params.iter_mut().collect(),
                    Provenance::Loaded { through } => through.iter_mut().collect(),
                    Provenance::Unknown { .. } => Vec::new(),
                })
                .chain(k.writes.iter_mut())
            {
                if p.size == 8 {
                    p.ty = p.ordinal.and_then(|o| types.get(o as usize).cloned());
                }
            }
        }
    }
}

/// Checks every file: a few hundred at a time, their cubins checked
/// together (`batch.rs`).
pub fn check(paths: &[PathBuf], opts: &Options) -> Report {
    let files = expand(paths);
    let mut tools = opts.tools.clone();
    // Pairing with a trace reads the previous kernel's stores, whether or
    // not it has PDL instructions.
    tools.all_kernels |= opts.trace.is_some();
    let jobs = opts.jobs.max(1);
    let pack = if tools.pack == 0 {
        cubin::PACK
    } else {
        tools.pack
    };
    let mut reports = Vec::new();
    for chunk in files.chunks((4 * jobs * pack).max(64)) {
        let opened = par_map(chunk, jobs, |p| open_file(p, &tools));
        let cubins: Vec<&[u8]> = opened
            .iter()
            .flat_map(|(_, c)| c.iter().map(|(_, b)| b.as_slice()))
            .collect();
        let mut results = batch::check_all(&cubins, &tools, jobs).into_iter();
        for (mut r, c) in opened {
            for (label, _) in c {
                let result = results.next().unwrap_or_else(|| Err("not checked".into()));
                add_unit(&mut r, label, result);
            }
            reports.push(r);
        }
    }
    report(reports, opts)
}

/// The report of files already checked: names demangled, findings made.
pub fn report(mut files: Vec<FileReport>, opts: &Options) -> Report {
    name_kernels(&mut files);
    let waiting: std::collections::BTreeSet<String> = files
        .iter()
        .flat_map(|f| f.all.iter())
        .filter(|k| !k.waits.is_empty())
        .map(|k| arch_free(&k.name))
        .collect();
    for p in files.iter_mut().flat_map(|f| f.ptx.iter_mut()) {
        p.sass_wait = waiting.contains(&arch_free(&p.kernel));
    }
    let findings = crate::output::findings(&files, opts);
    let pairing = match (&opts.trace, &opts.produced) {
        (Some((_, f)), _) => format!("trace {f}"),
        (None, Some((_, f))) => format!("produced {f}"),
        (None, None) => "none".into(),
    };
    Report {
        files,
        findings,
        pairing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_namespace_is_taken_out_of_a_name() {
        let sm90 = "_ZN3cub17CUB_300001_SM_9006detail10merge_sort5KernelEv";
        let sm80 = "_ZN3cub17CUB_300001_SM_8006detail10merge_sort5KernelEv";
        assert_eq!(
            arch_free(sm90),
            "_ZN3cubNS:17CUB_3000016detail10merge_sort5KernelEv"
        );
        assert_eq!(arch_free(sm90), arch_free(sm80));
        assert_eq!(
            arch_free("_ZN3cub16_V_300200_SM_9006detail1kEv"),
            "_ZN3cubNS:16_V_3002006detail1kEv"
        );
        assert_ne!(
            arch_free("_ZN3cub16_V_300200_SM_9006detail1kEv"),
            arch_free("_ZN3cub16_V_300500_SM_9006detail1kEv")
        );
        assert_eq!(arch_free("secondary"), "secondary");
    }

    #[test]
    fn parameter_types_come_from_the_top_level_of_the_signature() {
        assert_eq!(
            param_types("secondary(float const*, std::pair<int, int>, void (*)(int))"),
            ["float const*", "std::pair<int, int>", "void (*)(int)"]
        );
        assert!(param_types("plain").is_empty());
    }
}
