//! Fatbins: the containers nvcc embeds in host binaries (`.nv_fatbin`)
//! and writes as `.fatbin` files.
//!
//! A fatbin section holds one or more fatbins back to back (zero padding
//! between them), each `u32 magic 0xBA55ED50, u16 version, u16 header
//! size, u64 size of the entries`, then entries, each with its header:
//! `u16 kind (1 PTX, 2 ELF), u16 version, u32 header size, u64 payload
//! size, u32 compressed size, u32, u16 minor, u16 major, u32 arch (90 for
//! sm_90), u32 name offset, u32 name length, u64 flags, u64, u64
//! uncompressed size` (offsets 0 to 56 of the entry header). Flags `0x2000`
//! (LZ4) and `0x8000` (Zstandard, what nvcc 13 writes for PTX) mark a
//! compressed payload: the check hands such an entry, alone in a fatbin of
//! its own, to `cuobjdump`, which decompresses it.

use std::path::Path;
use std::process::Command;

use crate::elf::{u16_at, u32_at, u64_at};

pub const MAGIC: u32 = 0xBA55_ED50;
const COMPRESSED: u64 = 0x2000 | 0x8000;

/// One entry of a fatbin, as found.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// 1 PTX, 2 ELF (a cubin).
    pub kind: u16,
    /// The SM number (`90`).
    pub arch: u32,
    pub flags: u64,
    /// The source file's name nvcc recorded, if any.
    pub name: String,
    /// The entry's header and payload, as in the fatbin.
    pub raw: &'a [u8],
    pub header_size: usize,
}

impl Entry<'_> {
    pub fn compressed(&self) -> bool {
        self.flags & COMPRESSED != 0
    }

    pub fn payload(&self) -> &[u8] {
        &self.raw[self.header_size..]
    }

    /// `sm_90` for a cubin, `compute_80` for PTX.
    pub fn arch_name(&self) -> String {
        match self.kind {
            1 => format!("compute_{}", self.arch),
            _ => format!("sm_{}", self.arch),
        }
    }
}

pub fn is_fatbin(b: &[u8]) -> bool {
    u32_at(b, 0) == Some(MAGIC)
}

/// Every entry of every fatbin in `b` (a `.nv_fatbin` section or a
/// `.fatbin` file). Errors name the byte where the structure breaks.
pub fn entries(b: &[u8]) -> Result<Vec<Entry<'_>>, String> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < b.len() {
        if b[at] == 0 {
            at += 1;
            continue;
        }
        if u32_at(b, at) != Some(MAGIC) {
            return Err(format!(
                "not a fatbin at byte {at} (no magic 0xBA55ED50 there)"
            ));
        }
        let cut = || format!("the fatbin at byte {at} is cut off");
        let header = usize::from(u16_at(b, at + 6).ok_or_else(cut)?);
        let size = u64_at(b, at + 8).ok_or_else(cut)?;
        let start = at.checked_add(header).ok_or_else(cut)?;
        let end = usize::try_from(size)
            .ok()
            .and_then(|s| start.checked_add(s))
            .filter(|&e| e <= b.len())
            .ok_or_else(cut)?;
        let mut e = start;
        while e < end {
            let entry_cut = || format!("the fatbin entry at byte {e} is cut off");
            let kind = u16_at(b, e).ok_or_else(entry_cut)?;
            let hsize = u32_at(b, e + 4).ok_or_else(entry_cut)? as usize;
            let psize = u64_at(b, e + 8).ok_or_else(entry_cut)?;
            let total = usize::try_from(psize)
                .ok()
                .and_then(|p| p.checked_add(hsize))
                .filter(|&t| t >= 64 && e + t <= end)
                .ok_or_else(entry_cut)?;
            let raw = &b[e..e + total];
            let name_off = u32_at(raw, 32).unwrap_or(0) as usize;
            let name_len = u32_at(raw, 36).unwrap_or(0) as usize;
            let name = raw
                .get(name_off..name_off.saturating_add(name_len).min(hsize))
                .map(|n| {
                    String::from_utf8_lossy(n)
                        .trim_end_matches('\0')
                        .to_string()
                })
                .unwrap_or_default();
            out.push(Entry {
                kind,
                arch: u32_at(raw, 28).unwrap_or(0),
                flags: u64_at(raw, 40).unwrap_or(0),
                name,
                raw,
                header_size: hsize,
            });
            e += total;
        }
        at = end;
    }
    Ok(out)
}

/// A compressed entry's payload, decompressed by `cuobjdump` from a fatbin
/// holding that entry alone (in a directory of its own under `tmp`).
pub fn decompress(
    entry: &Entry<'_>,
    cuobjdump: Option<&Path>,
    tmp: &Path,
) -> Result<Vec<u8>, String> {
    let Some(cuobjdump) = cuobjdump else {
        return Err(format!(
            "its {} entry for {} is compressed and no cuobjdump was found to decompress it \
             (install a toolchain: cargo xtask toolchain install 13.3, or put the CUDA toolkit's bin/ on PATH)",
            if entry.kind == 1 { "PTX" } else { "cubin" },
            entry.arch_name()
        ));
    };
    std::fs::create_dir_all(tmp).map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
    let mut fat = Vec::with_capacity(16 + entry.raw.len());
    fat.extend_from_slice(&MAGIC.to_le_bytes());
    fat.extend_from_slice(&1u16.to_le_bytes());
    fat.extend_from_slice(&16u16.to_le_bytes());
    fat.extend_from_slice(&(entry.raw.len() as u64).to_le_bytes());
    fat.extend_from_slice(entry.raw);
    let file = tmp.join("entry.fatbin");
    std::fs::write(&file, &fat).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    let flag = if entry.kind == 1 { "-xptx" } else { "-xelf" };
    let out = Command::new(cuobjdump)
        .args([flag, "all", "entry.fatbin"])
        .current_dir(tmp)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", cuobjdump.display()))?;
    let ext = if entry.kind == 1 { "ptx" } else { "cubin" };
    let produced = std::fs::read_dir(tmp)
        .into_iter()
        .flatten()
        .flatten()
        .map(|d| d.path())
        .find(|p| p.extension().is_some_and(|x| x == ext));
    let result = match produced {
        Some(p) => std::fs::read(&p).map_err(|e| format!("cannot read {}: {e}", p.display())),
        None => Err(format!(
            "its compressed {} entry could not be decompressed: {cuobjdump} {flag} extracted nothing ({})",
            entry.arch_name(),
            String::from_utf8_lossy(&out.stderr).trim(),
            cuobjdump = cuobjdump.display()
        )),
    };
    let _ = std::fs::remove_dir_all(tmp);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fatbin with one uncompressed cubin entry and one "compressed" PTX
    /// entry (the payload is not real; only the headers are read here).
    pub fn sample() -> Vec<u8> {
        let entry = |kind: u16, arch: u32, flags: u64, payload: &[u8]| {
            let mut h = vec![0u8; 72];
            h[0..2].copy_from_slice(&kind.to_le_bytes());
            h[4..8].copy_from_slice(&72u32.to_le_bytes());
            h[8..16].copy_from_slice(&(payload.len() as u64).to_le_bytes());
            h[28..32].copy_from_slice(&arch.to_le_bytes());
            h[32..36].copy_from_slice(&64u32.to_le_bytes());
            h[36..40].copy_from_slice(&5u32.to_le_bytes());
            h[40..48].copy_from_slice(&flags.to_le_bytes());
            h[64..69].copy_from_slice(b"m.cu\0");
            h.extend_from_slice(payload);
            h
        };
        let mut body = entry(2, 90, 0x11, b"\x7fELF....");
        body.extend(entry(1, 80, 0x8011, b"(\xb5/\xfd...."));
        let mut f = MAGIC.to_le_bytes().to_vec();
        f.extend_from_slice(&1u16.to_le_bytes());
        f.extend_from_slice(&16u16.to_le_bytes());
        f.extend_from_slice(&(body.len() as u64).to_le_bytes());
        f.extend(body);
        f.extend_from_slice(&[0; 8]);
        f
    }

    #[test]
    fn entries_are_listed_with_kind_arch_name_and_compression() {
        let f = sample();
        let e = entries(&f).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!((e[0].kind, e[0].arch_name().as_str()), (2, "sm_90"));
        assert_eq!(e[0].name, "m.cu");
        assert!(!e[0].compressed());
        assert_eq!(e[0].payload(), b"\x7fELF....");
        assert_eq!(e[1].arch_name(), "compute_80");
        assert!(e[1].compressed());
        let err = decompress(&e[1], None, Path::new("/nonexistent")).unwrap_err();
        assert!(
            err.contains("compressed") && err.contains("compute_80"),
            "{err}"
        );
    }

    #[test]
    fn truncated_and_foreign_bytes_are_errors() {
        let f = sample();
        let e = entries(&f[..f.len() - 20]).unwrap_err();
        assert!(e.contains("cut off"), "{e}");
        let mut g = f.clone();
        g.extend_from_slice(b"junk");
        assert!(entries(&g).unwrap_err().contains("not a fatbin at byte"));
    }
}
