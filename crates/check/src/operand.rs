//! SASS operands as the dataflow reads them: registers (`R2`, `R2.64`,
//! `-R3.reuse`, `UR4`), constant-bank references (`c[0x0][0x210]`,
//! `c[0x0][UR4+0x2b0]`), memory brackets (`desc[UR4][R2.64+0x10]`, `[UR8]`)
//! and immediates.

/// A general (`R`) or uniform (`UR`) register: `R5` is 5, `UR5` is
/// `UNIFORM + 5`. `RZ` and `URZ` are none.
pub type Reg = u16;
pub const UNIFORM: Reg = 1024;

/// One operand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operand {
    /// A register, and whether it names a 64-bit pair (`R2.64`).
    Reg(Reg, bool),
    /// `c[bank][offset]`, with the index register if any.
    Const {
        bank: u32,
        offset: i64,
        index: Option<Reg>,
    },
    /// A memory bracket: the registers in it (each with its pair flag) and
    /// its immediate offset. A `desc[..]` prefix is dropped.
    Mem(Vec<(Reg, bool)>),
    Imm(i64),
    /// A predicate, a special register, a zero register, anything else.
    Other,
}

/// Splits an operand list at its top-level commas.
pub fn split(operands: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (k, c) in operands.char_indices() {
        match c {
            '[' | '(' | '{' => depth += 1,
            ']' | ')' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(operands[start..k].trim());
                start = k + 1;
            }
            _ => {}
        }
    }
    let last = operands[start..].trim();
    if !last.is_empty() {
        out.push(last);
    }
    out
}

/// `R12`, `UR4.64`, `-|R3|.reuse` -> the register and its pair flag.
pub fn reg(tok: &str) -> Option<(Reg, bool)> {
    let t = tok.trim().trim_start_matches(['-', '|', '!', '~']);
    let (base, digits) = if let Some(r) = t.strip_prefix("UR") {
        (UNIFORM, r)
    } else {
        (0, t.strip_prefix('R')?)
    };
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    let n: Reg = digits[..end].parse().ok()?;
    if n >= UNIFORM {
        return None;
    }
    let pair = digits[end..].split(['.', '|']).any(|s| s == "64");
    Some((base + n, pair))
}

/// A number as SASS prints it: `0x210`, `-0x10`, `16`.
pub fn imm(tok: &str) -> Option<i64> {
    let t = tok.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t),
    };
    let v = match t.strip_prefix("0x") {
        Some(h) => i64::from_str_radix(h, 16).ok()?,
        None if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => t.parse().ok()?,
        None => return None,
    };
    Some(if neg { -v } else { v })
}

/// The terms of a bracket's inside, `R2.64+UR4+0x10`: registers and the
/// sum of the immediates.
fn terms(inside: &str) -> (Vec<(Reg, bool)>, i64) {
    let mut regs = Vec::new();
    let mut off = 0i64;
    for t in inside.split('+') {
        let t = t.trim();
        if let Some(r) = reg(t) {
            regs.push(r);
        } else if let Some(v) = imm(t) {
            off += v;
        }
    }
    (regs, off)
}

/// Parses one operand.
pub fn parse(tok: &str) -> Operand {
    let t = tok.trim();
    if let Some(rest) = t.strip_prefix("c[") {
        let Some((bank, rest)) = rest.split_once("][") else {
            return Operand::Other;
        };
        let inside = rest.trim_end_matches(']');
        let (regs, offset) = terms(inside);
        return Operand::Const {
            bank: imm(bank)
                .and_then(|b| u32::try_from(b).ok())
                .unwrap_or(u32::MAX),
            offset,
            index: regs.first().map(|r| r.0),
        };
    }
    if t.contains('[') && !t.starts_with("c[") {
        // `desc[UR4][R2.64]`, `gdesc[..]`, `[R2.64+0x4]`: the last bracket.
        let inside = t
            .rsplit_once('[')
            .map(|(_, r)| r.trim_end_matches(']'))
            .unwrap_or("");
        return Operand::Mem(terms(inside).0);
    }
    if let Some((r, pair)) = reg(t) {
        return Operand::Reg(r, pair);
    }
    match imm(t) {
        Some(v) => Operand::Imm(v),
        None => Operand::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operands_are_read() {
        assert_eq!(
            split("R2, desc[UR4][R2.64+0x4], c[0x0][0x210]"),
            ["R2", "desc[UR4][R2.64+0x4]", "c[0x0][0x210]"]
        );
        assert_eq!(parse("-R3.reuse"), Operand::Reg(3, false));
        assert_eq!(parse("UR4.64"), Operand::Reg(UNIFORM + 4, true));
        assert_eq!(parse("RZ"), Operand::Other);
        assert_eq!(parse("URZ"), Operand::Other);
        assert_eq!(parse("P0"), Operand::Other);
        assert_eq!(parse("SR_TID.X"), Operand::Other);
        assert_eq!(parse("-0x10"), Operand::Imm(-16));
        assert_eq!(
            parse("c[0x0][0x218]"),
            Operand::Const {
                bank: 0,
                offset: 0x218,
                index: None
            }
        );
        assert_eq!(
            parse("c[0x0][UR4+0x2b0]"),
            Operand::Const {
                bank: 0,
                offset: 0x2b0,
                index: Some(UNIFORM + 4)
            }
        );
        assert_eq!(
            parse("desc[UR4][R2.64+0x10]"),
            Operand::Mem(vec![(2, true)])
        );
        assert_eq!(parse("[UR44]"), Operand::Mem(vec![(UNIFORM + 44, false)]));
    }
}
