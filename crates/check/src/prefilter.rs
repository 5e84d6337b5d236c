//! Which kernels can hold a PDL instruction, read from the machine code's
//! bytes without a disassembler: only those go to nvdisasm (`batch.rs`).
//!
//! From sm_90 on every instruction is 16 bytes, its opcode in the low 12
//! bits of the first 64-bit word (bits 12 to 15 are the predicate).
//! `ACQBULK` (`griddepcontrol.wait`) is opcode `0x82e` and `PREEXIT`
//! (`griddepcontrol.launch_dependents`) `0x82d` on every architecture
//! listed in [`KNOWN`] (ptxas 13.0's encodings, `tests/fixtures/pdl.*.cubin`).
//! The test reads only the opcode, not the operands, so a kernel can pass
//! without a PDL instruction (another instruction with these opcode bits),
//! never fail with one. An architecture not in [`KNOWN`] passes every
//! kernel: its encodings are not known here.

/// The SM numbers whose `ACQBULK` and `PREEXIT` encodings are known.
pub const KNOWN: [u32; 5] = [90, 100, 103, 120, 121];

/// The opcode bits of an instruction's first word.
const OPCODE_MASK: u64 = 0xfff;
/// `ACQBULK` and `PREEXIT`.
const PDL_OPCODES: [u64; 2] = [0x82e, 0x82d];

/// Whether the prefilter knows this architecture's encodings.
pub fn knows(sm: u32) -> bool {
    KNOWN.contains(&sm)
}

/// Whether a kernel's code (its `.text.<kernel>` section) can hold a PDL
/// instruction: always true for an architecture the prefilter does not
/// know, or code whose length is not a whole number of instructions.
pub fn may_hold_pdl(sm: u32, code: &[u8]) -> bool {
    if !knows(sm) || !code.len().is_multiple_of(16) {
        return true;
    }
    code.chunks_exact(16).any(|i| {
        let word = u64::from_le_bytes(i[..8].try_into().unwrap_or_default());
        PDL_OPCODES.contains(&(word & OPCODE_MASK))
    })
}

/// `BRX` and `JMX` (indirect branches) in the low 9 opcode bits.
const INDIRECT_OPCODES: [u64; 2] = [0x149, 0x14c];

/// Whether a kernel's code seems to hold an indirect branch, whose targets
/// only nvdisasm's dataflow analysis infers: a hint that saves a second
/// nvdisasm run (`batch.rs` looks for the branches in the text as well),
/// true for an architecture the prefilter does not know.
pub fn may_branch_indirectly(sm: u32, code: &[u8]) -> bool {
    !knows(sm)
        || code.chunks_exact(16).any(|i| {
            let word = u64::from_le_bytes(i[..8].try_into().unwrap_or_default());
            INDIRECT_OPCODES.contains(&(word & 0x1ff))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(words: &[u64]) -> Vec<u8> {
        words
            .iter()
            .flat_map(|w| {
                let mut i = w.to_le_bytes().to_vec();
                i.extend(0x000f_e200_0000_0000u64.to_le_bytes());
                i
            })
            .collect()
    }

    #[test]
    fn the_wait_and_the_trigger_pass_other_code_does_not() {
        // `LDC R1, c[0x0][0x37c]`, `EXIT`, `ACQBULK`, `PREEXIT`, `@P0 ACQBULK`.
        let plain = code(&[0x0000_df00_ff01_7b82, 0x0000_0000_0000_794d]);
        assert!(!may_hold_pdl(90, &plain));
        assert!(!may_hold_pdl(100, &plain));
        for pdl in [0x782e, 0x782d, 0x082e] {
            let mut c = plain.clone();
            c.extend(code(&[pdl]));
            assert!(may_hold_pdl(103, &c), "{pdl:#x}");
            assert!(may_hold_pdl(120, &c), "{pdl:#x}");
        }
    }

    #[test]
    fn an_unknown_architecture_or_odd_code_passes() {
        let plain = code(&[0x0000_0000_0000_794d]);
        assert!(may_hold_pdl(80, &plain));
        assert!(may_hold_pdl(110, &plain));
        assert!(may_hold_pdl(90, &plain[..8]));
    }
}
