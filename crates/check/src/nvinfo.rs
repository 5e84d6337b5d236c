//! A kernel's parameters from its cubin's `.nv.info.<kernel>` section.
//!
//! The section is a list of attributes, each `u8 format, u8 attribute,
//! u16 value-or-size`, an `EIFMT_SVAL` (format 4) followed by that many
//! bytes. Two attributes matter here (checked against `cuobjdump -elf`):
//! - `EIATTR_KPARAM_INFO` (0x17): `u32 index, u16 ordinal, u16 offset,
//!   u32 flags`, the parameter's size in bytes at `(flags >> 18) & 0x3fff`;
//!   the offset is from the start of the parameters;
//! - `EIATTR_PARAM_CBANK` (0x0a): `u32 symbol, u16 offset, u16 size`: where
//!   the parameters sit in constant bank 0 (`0x210` on sm_90, `0x380` on
//!   sm_100 and sm_103).

use serde::{Deserialize, Serialize};

use crate::elf::{u16_at, u32_at};

/// One kernel parameter: its ordinal (0-based, as declared), its offset
/// from the first parameter and its size in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Param {
    pub ordinal: u32,
    pub offset: u32,
    pub size: u32,
}

/// What `.nv.info.<kernel>` says of the kernel's parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParamInfo {
    /// Sorted by offset.
    pub params: Vec<Param>,
    /// The parameters' offset in constant bank 0 (`EIATTR_PARAM_CBANK`).
    pub cbank_offset: Option<u32>,
    pub cbank_size: Option<u32>,
}

impl ParamInfo {
    /// The parameter holding the byte at `offset` (from the first
    /// parameter), with the byte's offset inside it.
    pub fn at(&self, offset: u32) -> Option<(Param, u32)> {
        self.params
            .iter()
            .find(|p| offset >= p.offset && offset < p.offset + p.size.max(1))
            .map(|p| (*p, offset - p.offset))
    }
}

/// Reads a `.nv.info.<kernel>` section. A malformed attribute list is an
/// error naming where it breaks.
pub fn parse(b: &[u8]) -> Result<ParamInfo, String> {
    let mut out = ParamInfo::default();
    let mut at = 0usize;
    while at < b.len() {
        let (Some(&format), Some(&attr), Some(v)) = (b.get(at), b.get(at + 1), u16_at(b, at + 2))
        else {
            return Err(format!("attribute at byte {at} is cut off"));
        };
        at += 4;
        if format != 4 {
            continue;
        }
        let payload = b
            .get(at..at + usize::from(v))
            .ok_or_else(|| format!("attribute 0x{attr:02x} at byte {} is cut off", at - 4))?;
        at += usize::from(v);
        match attr {
            0x17 if payload.len() >= 12 => {
                let ordinal = u32::from(u16_at(payload, 4).unwrap_or(0));
                let offset = u32::from(u16_at(payload, 6).unwrap_or(0));
                let size = (u32_at(payload, 8).unwrap_or(0) >> 18) & 0x3fff;
                out.params.push(Param {
                    ordinal,
                    offset,
                    size,
                });
            }
            0x0a if payload.len() >= 8 => {
                out.cbank_offset = Some(u32::from(u16_at(payload, 4).unwrap_or(0)));
                out.cbank_size = Some(u32::from(u16_at(payload, 6).unwrap_or(0)));
            }
            _ => {}
        }
    }
    out.params.sort_by_key(|p| (p.offset, p.ordinal));
    out.params.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The section of `secondary(const float*, float*)` built for sm_100 by
    /// nvcc 13.3, as `cuobjdump -elf` reads it: ordinal 1 at 0x8 and
    /// ordinal 0 at 0x0, 8 bytes each; the parameters at 0x380, 0x10 bytes.
    const SECONDARY_SM100: &str = "0466040003000000043704008500000004170c000000000001000800\
        00f5210004170c00000000000000000000f5210003500000031bff00\
        035f0101024a0000041c04002001000003191000040a08000d000000\
        800310000436040008000000036b0100";

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
        (0..s.len() / 2)
            .map(|k| u8::from_str_radix(&s[2 * k..2 * k + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn parameters_and_their_bank_offset_are_read() {
        let b = hex(SECONDARY_SM100);
        let info = parse(&b).unwrap();
        assert_eq!(
            info.params,
            [
                Param {
                    ordinal: 0,
                    offset: 0,
                    size: 8
                },
                Param {
                    ordinal: 1,
                    offset: 8,
                    size: 8
                }
            ]
        );
        assert_eq!(info.cbank_offset, Some(0x380));
        assert_eq!(info.cbank_size, Some(0x10));
        assert_eq!(info.at(0xc).map(|(p, o)| (p.ordinal, o)), Some((1, 4)));
        assert_eq!(info.at(0x10), None);
    }

    #[test]
    fn a_cut_attribute_is_an_error() {
        let e = parse(&[4, 0x17, 12, 0, 1, 2]).unwrap_err();
        assert!(e.contains("0x17") && e.contains("cut off"), "{e}");
        assert!(parse(&[4, 0x17]).unwrap_err().contains("cut off"));
    }
}
