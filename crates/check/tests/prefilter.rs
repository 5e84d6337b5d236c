//! The prefilter and the packing on cubins ptxas 13.0 built from
//! `fixtures/pdl.ptx` for sm_90, sm_100, sm_103, sm_120 and sm_121 (no
//! nvdisasm needed): a kernel with the PDL wait or trigger always passes
//! the prefilter, one without is left out; a pack of cubins keeps each
//! kernel's code, symbol and relocations apart.

use std::path::PathBuf;

use gridcheck_check::elf::Elf;
use gridcheck_check::pack::{self, DUP};
use gridcheck_check::prefilter::may_hold_pdl;

const ARCHS: [u32; 5] = [90, 100, 103, 120, 121];

fn cubin(sm: u32) -> Vec<u8> {
    let p =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/pdl.sm_{sm}.cubin"));
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Each kernel's name and whether the prefilter passes it.
fn passed(bytes: &[u8]) -> Vec<(String, bool)> {
    let elf = Elf::parse(bytes).unwrap();
    elf.sections
        .iter()
        .filter_map(|s| {
            let k = s.name.strip_prefix(".text.")?;
            Some((k.to_string(), may_hold_pdl(elf.sm(), s.data)))
        })
        .collect()
}

#[test]
fn every_pdl_kernel_passes_the_prefilter_and_the_plain_one_does_not() {
    for sm in ARCHS {
        let mut got = passed(&cubin(sm));
        got.sort();
        assert_eq!(
            got,
            [
                ("both".to_string(), true),
                ("plain".to_string(), false),
                ("triggers".to_string(), true),
                ("waits".to_string(), true),
            ],
            "sm_{sm}"
        );
    }
}

#[test]
fn a_pack_keeps_each_cubins_kernels_apart() {
    let (a, b) = (cubin(100), cubin(100));
    let (ea, eb) = (Elf::parse(&a).unwrap(), Elf::parse(&b).unwrap());
    let wanted = |_: usize, k: &str| k != "plain";
    let p = pack::pack(&a, &[&ea, &eb], &wanted).unwrap();
    let packed = Elf::parse(&p.bytes).unwrap();
    assert_eq!(packed.flags, ea.flags);
    // Three kernels of each cubin, the second's names made unique.
    assert_eq!(p.functions.len(), 6);
    let texts: Vec<&str> = packed
        .sections
        .iter()
        .filter_map(|s| s.name.strip_prefix(".text."))
        .collect();
    assert_eq!(texts.len(), 8, "{texts:?}");
    assert!(texts.contains(&"waits") && texts.contains(&format!("waits{DUP}1").as_str()));
    assert_eq!(p.owner[&format!(".text.waits{DUP}1")], 1);
    assert_eq!(p.owner[".text.waits"], 0);
    // Each chosen symbol is a function defined in a kernel's code section,
    // which holds that cubin's bytes.
    let symtab = packed.sections.iter().find(|s| s.kind == 2).unwrap();
    let strtab = &packed.sections[symtab.link as usize];
    for f in &p.functions {
        let e = &symtab.data[24 * *f as usize..24 * (*f as usize + 1)];
        assert_eq!(e[4] & 0xf, 2, "symbol {f} is a function");
        let shndx = usize::from(u16::from_le_bytes([e[6], e[7]]));
        let at = u32::from_le_bytes(e[..4].try_into().unwrap()) as usize;
        let name: String = strtab.data[at..]
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as char)
            .collect();
        let section = &packed.sections[shndx];
        assert_eq!(section.name, format!(".text.{name}"));
        let original = pack::strip(&section.name);
        assert_eq!(section.data, ea.section(&original).unwrap().data);
    }
}

#[test]
fn the_text_of_a_pack_is_split_by_cubin_and_its_suffixes_taken_out() {
    let owner = [(".text.k".to_string(), 0), (format!(".text.k{DUP}1"), 1)].into();
    let text = format!(
        "\t.target\tsm_100\n//--------------------- .text.k --------------------------\n\
         k:\n  CALL `(f) ;\n//--------------------- .text.k{DUP}1 --------------------------\n\
         k{DUP}1:\n  CALL `(f{DUP}1) ;\n//--------------------- SYMBOLS --------------------------\n"
    );
    let parts = pack::split(&text, &owner, 2);
    assert_eq!(parts[0], parts[1]);
    assert!(parts[1].starts_with("\t.target\tsm_100\n//"));
    assert!(parts[1].contains("CALL `(f) ;") && !parts[1].contains("SYMBOLS"));
}
