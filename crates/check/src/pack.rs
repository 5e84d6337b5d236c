//! Many cubins of one architecture made one ELF file for one nvdisasm run:
//! nvdisasm spends about 0.4 s of CPU setting up before it reads the first
//! instruction, more than it takes to decode a large kernel, so one run a
//! cubin is most of the check's time.
//!
//! The packed file has one string table and one symbol table (each cubin's
//! symbols in turn, their names and section indices moved), then every
//! cubin's sections with their links, their `sh_info` (a section, or for
//! code the function's symbol) and their relocations' symbols moved. Left
//! out: each cubin's `.nv.info` (its attributes name symbols by number;
//! nvdisasm refuses two), `.nv.callgraph`, and the `.nv.merc.*` and
//! `.nv.capmerc.*` sections (they have a symbol table of their own).
//! A section or symbol name an earlier cubin of the pack already uses gets
//! [`DUP`] and the cubin's number appended; [`strip`] takes it out of
//! nvdisasm's text again.
//!
//! A cubin with line tables (`-gi` reads `.debug_line` and
//! `.nv_debug_line_sass`, one of each a file) or with a relocation section
//! against another symbol table is not packed ([`packable`]).

use std::collections::{BTreeMap, BTreeSet};

use crate::elf::{Elf, Section};

/// Appended to a name an earlier cubin of the pack uses, with the cubin's
/// number.
pub const DUP: &str = "__gridcheck_dup";

const SHT_SYMTAB: u32 = 2;
const SHT_RELA: u32 = 4;
const SHT_NOBITS: u32 = 8;
const SHT_REL: u32 = 9;
const SHF_EXECINSTR: u64 = 0x4;
const SHF_INFO_LINK: u64 = 0x40;

/// A packed file: its bytes, the symbols of the kernels to disassemble
/// (`nvdisasm -fun`), and which cubin each code section came from.
#[derive(Debug, Clone)]
pub struct Packed {
    pub bytes: Vec<u8>,
    pub functions: Vec<u32>,
    /// Code section name in the packed file (`.text.k__gridcheck_dup3`) ->
    /// the cubin's number.
    pub owner: BTreeMap<String, usize>,
}

fn left_out(name: &str) -> bool {
    matches!(name, ".nv.info" | ".nv.callgraph")
        || name.starts_with(".nv.merc.")
        || name.starts_with(".nv.capmerc.")
}

fn symtab(elf: &Elf<'_>) -> Option<usize> {
    elf.sections.iter().position(|s| s.kind == SHT_SYMTAB)
}

/// Why a cubin cannot be packed, if it cannot.
pub fn packable(elf: &Elf<'_>) -> Result<(), String> {
    let sym = symtab(elf).ok_or("it has no symbol table")?;
    for s in &elf.sections {
        if s.name.contains("debug") && !s.name.ends_with("debug_frame") {
            return Err(format!("it has line tables (`{}`)", s.name));
        }
        if matches!(s.kind, SHT_REL | SHT_RELA) && !left_out(&s.name) && s.link as usize != sym {
            return Err(format!(
                "`{}` relocates against another symbol table",
                s.name
            ));
        }
    }
    Ok(())
}

/// A name made unique in the pack: `seen` holds the earlier cubins'
/// names, `fresh` gathers this cubin's.
fn unique(
    name: &str,
    seen: &BTreeSet<String>,
    fresh: &mut BTreeSet<String>,
    cubin: usize,
) -> String {
    if name.is_empty() {
        return String::new();
    }
    fresh.insert(name.to_string());
    if seen.contains(name) {
        format!("{name}{DUP}{cubin}")
    } else {
        name.to_string()
    }
}

fn cstr(b: &[u8], at: u32) -> &str {
    let rest = b.get(at as usize..).unwrap_or_default();
    let end = rest.iter().position(|&c| c == 0).unwrap_or(rest.len());
    std::str::from_utf8(&rest[..end]).unwrap_or("")
}

/// A section header of the packed file, its data beside it.
struct Out {
    name: String,
    s: Section<'static>,
    data: Vec<u8>,
}

/// One cubin's sections and symbols added to the pack.
struct Builder {
    strtab: Vec<u8>,
    symbols: Vec<u8>,
    sections: Vec<Out>,
    seen: BTreeSet<String>,
    functions: Vec<u32>,
    owner: BTreeMap<String, usize>,
}

impl Builder {
    fn add(
        &mut self,
        n: usize,
        elf: &Elf<'_>,
        wanted: &dyn Fn(&str) -> bool,
    ) -> Result<(), String> {
        let sym = symtab(elf).ok_or("no symbol table")?;
        let mut fresh = BTreeSet::new();
        let strs = elf.sections[sym].link as usize;
        let first = self.sections.len() + 4;
        let mut index = vec![0u32; elf.sections.len()];
        let mut kept = Vec::new();
        for (k, s) in elf.sections.iter().enumerate().skip(1) {
            if k == sym || k == strs || left_out(&s.name) || s.kind == 3 {
                continue;
            }
            index[k] = u32::try_from(first + kept.len()).map_err(|_| "too many sections")?;
            kept.push(k);
        }
        let names = elf.sections.get(strs).map_or(&[][..], |s| s.data);
        let table = elf.sections[sym].data;
        let base = u32::try_from(self.symbols.len() / 24).map_err(|_| "too many symbols")?;
        let mut symbol = vec![0u32; table.len() / 24];
        for (j, e) in table.chunks_exact(24).enumerate().skip(1) {
            let mut e = e.to_vec();
            let name = unique(cstr(names, u32_of(&e, 0)), &self.seen, &mut fresh, n);
            let at = if name.is_empty() {
                0
            } else {
                self.string(&name)?
            };
            e[0..4].copy_from_slice(&at.to_le_bytes());
            let shndx = u16::from_le_bytes([e[6], e[7]]);
            if shndx > 0 && shndx < 0xff00 {
                let moved = index.get(shndx as usize).copied().unwrap_or(0);
                e[6..8].copy_from_slice(&u16::try_from(moved).unwrap_or(0).to_le_bytes());
            }
            symbol[j] = base + u32::try_from(j).map_err(|_| "too many symbols")? - 1;
            self.symbols.extend(e);
        }
        for k in kept {
            let s = &elf.sections[k];
            let mut data = if s.kind == SHT_NOBITS {
                Vec::new()
            } else {
                s.data.to_vec()
            };
            let mut info = s.info;
            if matches!(s.kind, SHT_REL | SHT_RELA) {
                let size = if s.kind == SHT_RELA { 24 } else { 16 };
                for r in data.chunks_exact_mut(size) {
                    let old = u32_of(r, 12) as usize;
                    let new = symbol.get(old).copied().ok_or_else(|| {
                        format!("`{}` names symbol {old}, past the table", s.name)
                    })?;
                    r[12..16].copy_from_slice(&new.to_le_bytes());
                }
                info = index.get(info as usize).copied().unwrap_or(0);
            } else if s.flags & SHF_INFO_LINK != 0 {
                info = index.get(info as usize).copied().unwrap_or(0);
            } else if s.flags & SHF_EXECINSTR != 0 {
                let low = symbol
                    .get((info & 0xff_ffff) as usize)
                    .copied()
                    .unwrap_or(0);
                info = (info & 0xff00_0000) | low;
            }
            let name = unique(&s.name, &self.seen, &mut fresh, n);
            if let Some(kernel) = s.name.strip_prefix(".text.") {
                self.owner.insert(name.clone(), n);
                if wanted(kernel) {
                    self.functions
                        .extend(kernel_symbol(elf, sym, names, k, kernel, &symbol));
                }
            }
            let link = if s.link == 0 {
                0
            } else {
                index.get(s.link as usize).copied().unwrap_or(0)
            };
            let link = if s.link as usize == sym { 3 } else { link };
            self.sections.push(Out {
                name,
                s: Section {
                    name: String::new(),
                    data: &[],
                    link,
                    info,
                    ..s.clone_header()
                },
                data,
            });
        }
        self.seen.extend(fresh);
        Ok(())
    }

    fn string(&mut self, name: &str) -> Result<u32, String> {
        let at = u32::try_from(self.strtab.len()).map_err(|_| "string table too large")?;
        self.strtab.extend(name.as_bytes());
        self.strtab.push(0);
        Ok(at)
    }
}

/// The packed symbol of the function named `kernel` defined in section `k`.
fn kernel_symbol(
    elf: &Elf<'_>,
    sym: usize,
    names: &[u8],
    k: usize,
    kernel: &str,
    symbol: &[u32],
) -> Option<u32> {
    elf.sections[sym]
        .data
        .chunks_exact(24)
        .enumerate()
        .skip(1)
        .find(|(_, e)| {
            usize::from(u16::from_le_bytes([e[6], e[7]])) == k
                && e[4] & 0xf == 2
                && cstr(names, u32_of(e, 0)) == kernel
        })
        .and_then(|(j, _)| symbol.get(j).copied())
}

fn u32_of(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or_default())
}

impl Section<'_> {
    fn clone_header(&self) -> Section<'static> {
        Section {
            name: String::new(),
            data: &[],
            kind: self.kind,
            flags: self.flags,
            link: self.link,
            info: self.info,
            align: self.align,
            entsize: self.entsize,
            size: self.size,
        }
    }
}

/// Packs cubins of one architecture (`header`: the first cubin's first 64
/// bytes); `wanted(n, kernel)`: whether cubin `n`'s kernel is disassembled.
pub fn pack(
    header: &[u8],
    cubins: &[&Elf<'_>],
    wanted: &dyn Fn(usize, &str) -> bool,
) -> Result<Packed, String> {
    let mut b = Builder {
        strtab: vec![0],
        symbols: vec![0; 24],
        sections: Vec::new(),
        seen: BTreeSet::new(),
        functions: Vec::new(),
        owner: BTreeMap::new(),
    };
    for (n, elf) in cubins.iter().enumerate() {
        b.add(n, elf, &|k| wanted(n, k))?;
    }
    let header = header.get(..64).ok_or("the ELF header is cut off")?;
    Ok(Packed {
        bytes: layout(header, b.strtab, b.symbols, b.sections)?,
        functions: b.functions,
        owner: b.owner,
    })
}

/// The file: header, section contents, section table.
fn layout(
    header: &[u8],
    strtab: Vec<u8>,
    symbols: Vec<u8>,
    rest: Vec<Out>,
) -> Result<Vec<u8>, String> {
    let plain = |name: &str, kind: u32, data: Vec<u8>| Out {
        name: name.into(),
        s: Section {
            name: String::new(),
            data: &[],
            kind,
            flags: 0,
            link: 0,
            info: 0,
            align: 1,
            entsize: 0,
            size: data.len() as u64,
        },
        data,
    };
    let mut all = vec![plain("", 0, Vec::new()), plain(".shstrtab", 3, Vec::new())];
    all.push(plain(".strtab", 3, strtab));
    let mut table = plain(".symtab", SHT_SYMTAB, symbols);
    (table.s.link, table.s.info, table.s.align, table.s.entsize) = (2, 1, 8, 24);
    all.push(table);
    all.extend(rest);
    let mut shstrtab = vec![0u8];
    let mut at_name = Vec::new();
    for o in &all {
        at_name.push(u32::try_from(shstrtab.len()).map_err(|_| "too many section names")?);
        shstrtab.extend(o.name.as_bytes());
        shstrtab.push(0);
    }
    all[1].s.size = shstrtab.len() as u64;
    all[1].data = shstrtab;
    let mut out = header.to_vec();
    out[32..40].fill(0); // no program headers
    out[54..58].fill(0);
    let mut offsets = Vec::new();
    for o in &all {
        let align = usize::try_from(o.s.align.max(1)).unwrap_or(1).min(4096);
        out.resize(out.len().div_ceil(align) * align, 0);
        offsets.push(out.len() as u64);
        out.extend(&o.data);
    }
    out.resize(out.len().div_ceil(8) * 8, 0);
    let shoff = out.len() as u64;
    for ((o, name), off) in all.iter().zip(at_name).zip(offsets) {
        let s = &o.s;
        for (v, w) in [
            (u64::from(name), 4),
            (u64::from(s.kind), 4),
            (s.flags, 8),
            (0, 8),
            (off, 8),
        ]
        .into_iter()
        .chain([
            (s.size, 8),
            (u64::from(s.link), 4),
            (u64::from(s.info), 4),
            (s.align, 8),
            (s.entsize, 8),
        ]) {
            out.extend(&v.to_le_bytes()[..w]);
        }
    }
    let count = u16::try_from(all.len()).map_err(|_| "more than 65535 sections in a pack")?;
    out[40..48].copy_from_slice(&shoff.to_le_bytes());
    out[58..60].copy_from_slice(&64u16.to_le_bytes());
    out[60..62].copy_from_slice(&count.to_le_bytes());
    out[62..64].copy_from_slice(&1u16.to_le_bytes());
    Ok(out)
}

/// nvdisasm's text of a pack with the [`DUP`] suffixes taken out.
pub fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(DUP) {
        out.push_str(&rest[..at]);
        let tail = &rest[at + DUP.len()..];
        rest = tail.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

/// nvdisasm's text of a pack split by cubin: each cubin's code sections,
/// after the file's `.target` line.
pub fn split(text: &str, owner: &BTreeMap<String, usize>, cubins: usize) -> Vec<String> {
    let target = text
        .lines()
        .find(|l| l.trim_start().starts_with(".target"))
        .unwrap_or("");
    let mut out = vec![format!("{target}\n"); cubins];
    let mut current: Option<usize> = None;
    for line in text.split_inclusive('\n') {
        if let Some(head) = line.strip_prefix("//--------------------- ") {
            let name = head.trim_end().trim_end_matches('-').trim_end();
            current = owner.get(name).copied();
        }
        if let Some(n) = current {
            out[n].push_str(line);
        }
    }
    out.into_iter().map(|t| strip(&t)).collect()
}
