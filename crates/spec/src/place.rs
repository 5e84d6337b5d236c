//! Sized locations as the spec writes them: a tile's declaration
//! (`x[1024]`, `x[4 KiB]`), an operand naming a word location or words of a
//! tile (`x`, `x[5]`, `x[0..1024]`), the key of a tile register's segment
//! and what a read of a segment observes. The semantics are in
//! [`crate::tile`].

use std::fmt;

/// Whether `s` is a valid location, register, kernel or thread name.
pub fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(f) if f.is_ascii_alphabetic() || f == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// The most words a tile holds: 64 KiB.
pub const MAX_TILE_WORDS: u32 = 16 * 1024;

/// The greatest value a tile's words hold: a read of several words observes
/// the set of its values as a 32-bit mask.
pub const MAX_TILE_VALUE: u32 = 31;

/// The most bytes of shared locations a block holds (each on 128-byte
/// lines of its own): the generated kernel declares them statically, and
/// static shared memory is at most 48 KiB.
pub const MAX_SHARED_BYTES: u32 = 48 * 1024;

/// Words a bulk copy of more than one word moves in a multiple of, from a
/// word index that is a multiple of it: 16 bytes, `cp.async.bulk`'s unit.
pub const BULK_WORDS: u32 = 4;

/// A location as an operation names it: a word location, or words of a
/// tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place<'a> {
    pub name: &'a str,
    /// Words `start..end` of a tile; `None` for a bare name.
    pub range: Option<(u32, u32)>,
}

impl<'a> Place<'a> {
    /// `x`, `x[5]` (one word) or `x[0..1024]` (words 0 to 1023).
    pub fn parse(text: &'a str) -> Result<Place<'a>, String> {
        let p = Place::split(text)?;
        if !is_ident(p.name) {
            return Err(format!(
                "`{}` is not a valid location name (letters, digits, `_`)",
                p.name
            ));
        }
        Ok(p)
    }

    /// A condition's term `k.t0.r0`, `k.t0.r0[5]` or `k.t0.r0[0..8]` as a
    /// place: its name may hold dots.
    pub fn parse_term(text: &'a str) -> Result<Place<'a>, String> {
        Place::split(text)
    }

    /// The name and the range of `text`, the name unchecked.
    fn split(text: &'a str) -> Result<Place<'a>, String> {
        let Some(open) = text.find('[') else {
            return Ok(Place {
                name: text,
                range: None,
            });
        };
        let inner = text[open + 1..].strip_suffix(']').ok_or_else(|| {
            format!("`{text}`: a range is written `x[a..b]` or `x[i]`, ending with `]`")
        })?;
        let num = |s: &str| -> Result<u32, String> {
            s.parse()
                .map_err(|_| format!("`{text}`: `{s}` is not a word index"))
        };
        let range = match inner.split_once("..") {
            Some((a, b)) => (num(a)?, num(b)?),
            None => {
                let i = num(inner)?;
                (i, i.saturating_add(1))
            }
        };
        if range.1 <= range.0 {
            return Err(format!(
                "`{text}` is an empty range: `x[a..b]` names words a to b - 1, so b > a"
            ));
        }
        Ok(Place {
            name: &text[..open],
            range: Some(range),
        })
    }

    /// Words it names: 1 for a word location.
    pub fn words(&self) -> u32 {
        self.range.map_or(1, |(a, b)| b - a)
    }
}

impl fmt::Display for Place<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)?;
        match self.range {
            None => Ok(()),
            Some((a, b)) if b == a + 1 => write!(f, "[{a}]"),
            Some((a, b)) => write!(f, "[{a}..{b}]"),
        }
    }
}

/// The location name of an operand: `x` of `x[0..8]`.
pub fn base(operand: &str) -> &str {
    operand.split('[').next().unwrap_or(operand)
}

/// A `memory:` or `shared:` key: `x` (a word), `x[N]` (a tile of N words),
/// `x[N B]` or `x[N KiB]` (of N bytes or kibibytes, a multiple of 4 bytes).
/// Returns the name and, for a tile, its words.
pub fn declaration(key: &str) -> Result<(&str, Option<u32>), String> {
    let Some(open) = key.find('[') else {
        return Ok((key, None));
    };
    let name = &key[..open];
    let inner = key[open + 1..]
        .strip_suffix(']')
        .ok_or_else(|| {
            format!("`{key}`: a tile is declared `x[N]` (words) or `x[N KiB]`, `x[N B]`")
        })?
        .trim();
    let (num, unit) = match inner.split_once(' ') {
        Some((n, u)) => (n, Some(u.trim())),
        None => (inner, None),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("`{key}`: `{num}` is not a size"))?;
    let bytes = match unit {
        None => n.saturating_mul(4),
        Some("B") => n,
        Some("KiB") => n.saturating_mul(1024),
        Some(u) => {
            return Err(format!(
                "`{key}`: unknown unit `{u}`: a size is in words (no unit), `B` or `KiB`"
            ));
        }
    };
    if bytes == 0 {
        return Err(format!("`{key}` has no words: a tile holds at least one"));
    }
    if bytes % 4 != 0 {
        return Err(format!(
            "`{key}` is {bytes} bytes, not a whole number of 32-bit words"
        ));
    }
    let words = bytes / 4;
    if words > u64::from(MAX_TILE_WORDS) {
        return Err(format!(
            "`{key}` is {words} words; a tile holds at most {MAX_TILE_WORDS} (64 KiB)"
        ));
    }
    Ok((name, Some(words as u32)))
}

/// The observable key of a segment of a register: `k.t0.r0[5]` for one
/// word, `k.t0.r0[0..512]` for more.
pub fn segment_key(base: &str, (a, b): (u32, u32)) -> String {
    if b == a + 1 {
        format!("{base}[{a}]")
    } else {
        format!("{base}[{a}..{b}]")
    }
}

/// What a read of a segment of `width` words observes, from the values of
/// its representative words: the value for one word, the set of values as a
/// mask (bit `v` for value `v`) for more.
pub fn observe(width: u32, values: &[u32]) -> u32 {
    if width == 1 {
        return values.first().copied().unwrap_or(0);
    }
    values
        .iter()
        .fold(0, |m, &v| m | 1u32.checked_shl(v).unwrap_or(0))
}

/// A value as a state shows it: `{0,1}` for a segment of several words
/// (its key names a range), else the number.
pub fn show_value(key: &str, v: u32) -> String {
    if key.ends_with(']') && key.contains("..") {
        let vals: Vec<String> = (0..32)
            .filter(|b| v & (1 << b) != 0)
            .map(|b| b.to_string())
            .collect();
        format!("{{{}}}", vals.join(","))
    } else {
        v.to_string()
    }
}
