//! Just enough of ELF64 (little-endian) to find a host binary's embedded
//! fatbins (`.nv_fatbin`, `__nv_relfatbin`) and a cubin's sections
//! (`.nv.info.<kernel>`) and architecture. Every read is bounds-checked: a
//! truncated file is an error naming what was cut, never a panic.

/// `EM_CUDA`: a cubin's machine.
pub const EM_CUDA: u16 = 190;

/// One section: its name, its bytes (empty for `SHT_NOBITS`) and the
/// header fields a cubin is rebuilt from (`pack.rs`).
#[derive(Debug, Clone)]
pub struct Section<'a> {
    pub name: String,
    pub data: &'a [u8],
    /// `sh_type`, `sh_flags`, `sh_link`, `sh_info`, `sh_addralign`,
    /// `sh_entsize`, `sh_size` (for `SHT_NOBITS` too).
    pub kind: u32,
    pub flags: u64,
    pub link: u32,
    pub info: u32,
    pub align: u64,
    pub entsize: u64,
    pub size: u64,
}

/// A parsed ELF file.
#[derive(Debug, Clone)]
pub struct Elf<'a> {
    pub machine: u16,
    pub flags: u32,
    pub sections: Vec<Section<'a>>,
}

pub fn is_elf(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x7fELF")
}

pub fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

pub fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

pub fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

fn slice(b: &[u8], off: u64, len: u64) -> Option<&[u8]> {
    let off = usize::try_from(off).ok()?;
    let end = off.checked_add(usize::try_from(len).ok()?)?;
    b.get(off..end)
}

impl<'a> Elf<'a> {
    /// Parses the header and the section table.
    pub fn parse(b: &'a [u8]) -> Result<Elf<'a>, String> {
        if !is_elf(b) {
            return Err("not an ELF file".into());
        }
        if b.get(4) != Some(&2) || b.get(5) != Some(&1) {
            return Err("not a 64-bit little-endian ELF file".into());
        }
        let cut = |what: &str| format!("truncated ELF file: {what} is cut off");
        let machine = u16_at(b, 18).ok_or_else(|| cut("the header"))?;
        let flags = u32_at(b, 48).ok_or_else(|| cut("the header"))?;
        let shoff = u64_at(b, 40).ok_or_else(|| cut("the header"))?;
        let shentsize = u64::from(u16_at(b, 58).ok_or_else(|| cut("the header"))?);
        let shnum = u64::from(u16_at(b, 60).ok_or_else(|| cut("the header"))?);
        let shstrndx = u64::from(u16_at(b, 62).ok_or_else(|| cut("the header"))?);
        if shnum > 0 && shentsize < 64 {
            return Err(format!("bad ELF section header size {shentsize}"));
        }
        let header = |k: u64| -> Result<&[u8], String> {
            let at = shoff
                .checked_add(k.checked_mul(shentsize).ok_or_else(|| cut("a section"))?)
                .and_then(|a| usize::try_from(a).ok())
                .ok_or_else(|| cut("the section table"))?;
            b.get(at..at + 64).ok_or_else(|| cut("the section table"))
        };
        let field = |h: &[u8], at: usize| u64_at(h, at).unwrap_or(0);
        let word = |h: &[u8], at: usize| u32_at(h, at).unwrap_or(0);
        let names = if shnum > 0 && shstrndx < shnum {
            let h = header(shstrndx)?;
            let (off, size) = (field(h, 24), field(h, 32));
            slice(b, off, size).ok_or_else(|| cut("the section names"))?
        } else {
            &[][..]
        };
        let mut sections = Vec::new();
        for k in 0..shnum {
            let h = header(k)?;
            let (name, kind, off, size) = (word(h, 0), word(h, 4), field(h, 24), field(h, 32));
            let name = names
                .get(name as usize..)
                .and_then(|n| n.split(|&c| c == 0).next())
                .map(|n| String::from_utf8_lossy(n).into_owned())
                .unwrap_or_default();
            // SHT_NOBITS (8) occupies no bytes of the file.
            let data = if kind == 8 || kind == 0 {
                &[][..]
            } else {
                slice(b, off, size).ok_or_else(|| cut(&format!("section `{name}`")))?
            };
            sections.push(Section {
                name,
                data,
                kind,
                flags: field(h, 8),
                link: word(h, 40),
                info: word(h, 44),
                align: field(h, 48),
                entsize: field(h, 56),
                size,
            });
        }
        Ok(Elf {
            machine,
            flags,
            sections,
        })
    }

    pub fn section(&self, name: &str) -> Option<&Section<'a>> {
        self.sections.iter().find(|s| s.name == name)
    }

    /// A cubin's SM number from its flags (`90`, `100`): the byte at bits
    /// 8..15 for the current ABI, the low byte for the old one.
    pub fn sm(&self) -> u32 {
        match (self.flags >> 8) & 0xff {
            0 => self.flags & 0xff,
            v => v,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_elf_and_truncated_files_are_errors() {
        assert!(Elf::parse(b"hello").unwrap_err().contains("not an ELF"));
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 2;
        h[5] = 1;
        h[40] = 200; // section table past the end
        h[58] = 64;
        h[60] = 3;
        let e = Elf::parse(&h).unwrap_err();
        assert!(
            e.contains("truncated") && e.contains("section table"),
            "{e}"
        );
        h[60] = 0;
        let elf = Elf::parse(&h).unwrap();
        assert!(elf.sections.is_empty());
        assert!(Elf::parse(&h[..30]).unwrap_err().contains("truncated"));
    }
}
