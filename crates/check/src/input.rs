//! A file given to the check, opened up: a cubin, a fatbin, a host ELF
//! (executable, shared library or object) with its embedded fatbins
//! (`.nv_fatbin`, `__nv_relfatbin`), or PTX text; every cubin and PTX in
//! it, for every architecture. What cannot be read is an error for that
//! file (or that entry), never a panic.

use crate::cubin::Tools;
use crate::elf::{EM_CUDA, Elf, is_elf};
use crate::fatbin;

/// What a unit holds.
#[derive(Debug, Clone)]
pub enum Payload {
    Cubin(Vec<u8>),
    Ptx(String),
}

/// One cubin or PTX module found in a file.
#[derive(Debug, Clone)]
pub struct Unit {
    /// Where in the file: `cubin`, `fatbin entry 3 (sm_90, m.cu)`.
    pub label: String,
    /// `sm_90`, `compute_80`.
    pub arch: String,
    pub payload: Payload,
}

/// The units of one file and the errors of the parts that could not be
/// read (the file's other parts are still checked).
pub fn units(bytes: &[u8], tools: &Tools) -> (Vec<Unit>, Vec<String>) {
    if fatbin::is_fatbin(bytes) {
        return from_fatbin(bytes, "fatbin ", tools);
    }
    if is_elf(bytes) {
        let elf = match Elf::parse(bytes) {
            Ok(e) => e,
            Err(e) => return (Vec::new(), vec![e]),
        };
        if elf.machine == EM_CUDA {
            return (
                vec![Unit {
                    label: "cubin".into(),
                    arch: format!("sm_{}", elf.sm()),
                    payload: Payload::Cubin(bytes.to_vec()),
                }],
                Vec::new(),
            );
        }
        let mut units = Vec::new();
        let mut errors = Vec::new();
        let mut any = false;
        for s in &elf.sections {
            if s.name == ".nv_fatbin" || s.name == "__nv_relfatbin" {
                any = true;
                let (u, e) = from_fatbin(s.data, &format!("{} ", s.name), tools);
                units.extend(u);
                errors.extend(e);
            }
        }
        if !any {
            errors.push(
                "no CUDA code: an ELF file with no .nv_fatbin or __nv_relfatbin section".into(),
            );
        }
        return (units, errors);
    }
    if let Ok(text) = std::str::from_utf8(bytes)
        && text.contains(".version")
        && text.contains(".target")
    {
        let arch = text
            .lines()
            .find_map(|l| l.trim().strip_prefix(".target"))
            .map(|t| {
                t.split(',')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .replace("sm_", "compute_")
            })
            .unwrap_or_default();
        return (
            vec![Unit {
                label: "PTX".into(),
                arch,
                payload: Payload::Ptx(text.to_string()),
            }],
            Vec::new(),
        );
    }
    (
        Vec::new(),
        vec!["not a CUDA file: neither a cubin, a fatbin, a host ELF file with an embedded fatbin, nor PTX".into()],
    )
}

fn from_fatbin(bytes: &[u8], what: &str, tools: &Tools) -> (Vec<Unit>, Vec<String>) {
    let entries = match fatbin::entries(bytes) {
        Ok(e) => e,
        Err(e) => return (Vec::new(), vec![format!("{what}{e}")]),
    };
    let mut units = Vec::new();
    let mut errors = Vec::new();
    for (n, e) in entries.iter().enumerate() {
        let label = if e.name.is_empty() {
            format!("{what}entry {}", n + 1)
        } else {
            format!("{what}entry {} ({})", n + 1, e.name)
        };
        let payload = if e.compressed() {
            match fatbin::decompress(e, tools.cuobjdump.as_deref(), &tools.temp("fatbin")) {
                Ok(p) => p,
                Err(err) => {
                    errors.push(format!("{label}: {err}"));
                    continue;
                }
            }
        } else {
            e.payload().to_vec()
        };
        let payload = match e.kind {
            1 => Payload::Ptx(
                String::from_utf8_lossy(&payload)
                    .trim_end_matches('\0')
                    .to_string(),
            ),
            2 => Payload::Cubin(payload),
            k => {
                errors.push(format!(
                    "{label}: an entry of unknown kind {k} (1 is PTX, 2 a cubin)"
                ));
                continue;
            }
        };
        units.push(Unit {
            label,
            arch: e.arch_name(),
            payload,
        });
    }
    (units, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_files_are_errors_naming_what_was_expected() {
        let t = Tools::default();
        let (u, e) = units(b"just text", &t);
        assert!(u.is_empty());
        assert!(e[0].contains("not a CUDA file"), "{e:?}");
        let (_, e) = units(b"\x7fELF\x02\x01", &t);
        assert!(e[0].contains("truncated"), "{e:?}");
    }

    #[test]
    fn ptx_text_is_a_unit_with_its_virtual_architecture() {
        let (u, e) = units(
            b".version 9.0\n.target sm_80\n.address_size 64\n",
            &Tools::default(),
        );
        assert!(e.is_empty());
        assert_eq!(u[0].arch, "compute_80");
    }
}
