//! Whether a PDL secondary's compiled code holds its wait at all.
//!
//! The order check (`order.rs`) reports an operation with no instruction as
//! not checked. For the wait of a kernel that the host launches with the
//! PDL attribute, a missing wait is the finding itself: the secondary may
//! start before its primary has completed and read its data with nothing
//! ordering the reads after the primary's writes. Guards compile the wait
//! out: `#if __CUDA_ARCH__ >= 900`, or CCCL's `NV_IF_TARGET(NV_PROVIDES_SM_90,
//! ...)`, in the PTX for an older virtual architecture (which the driver
//! then JIT-compiles for the GPU in hand, wait-less); a macro the build does
//! not define, or an architecture-specific feature macro (`sm_90a`) that a
//! plain target lacks.
//!
//! Presence is per kernel: in SASS, an `ACQBULK` anywhere in the kernel's
//! function; in PTX, `griddepcontrol.wait` in the body of the kernel's
//! `.entry` (a body that calls a function while the module has the wait
//! elsewhere cannot be decided here, and says so).

use crate::classify::{Class, classify};
use crate::parse::Function;

/// The waits found in a kernel's code, each described for a message, or
/// why the code cannot say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Waits {
    /// Each wait instruction (`/*0120*/ ACQBULK (k.cu:31)`, or `line 40 of
    /// the PTX: griddepcontrol.wait;`); empty when the code has none.
    Found(Vec<String>),
    /// The code cannot tell (the reason).
    Undecided(String),
}

/// The `ACQBULK` instructions of a kernel's SASS.
pub fn sass_waits(f: &Function) -> Waits {
    Waits::Found(
        f.instrs
            .iter()
            .filter(|i| classify(i) == Class::Wait)
            .map(|i| match &i.loc {
                Some(l) => format!("`{}` ({l})", i.text()),
                None => format!("`{}`", i.text()),
            })
            .collect(),
    )
}

/// The lines of the PTX `.entry <kernel>`'s body (between its braces),
/// each with its 1-based line number in `ptx`.
fn entry_body<'a>(ptx: &'a str, kernel: &str) -> Result<Vec<(usize, &'a str)>, String> {
    let lines: Vec<&str> = ptx.lines().collect();
    let head = lines
        .iter()
        .position(|l| {
            let mut words = l.split_whitespace();
            words.any(|w| w == ".entry")
                && l.split(".entry")
                    .nth(1)
                    .and_then(|r| r.trim_start().split('(').next())
                    .is_some_and(|name| name.trim() == kernel)
        })
        .ok_or_else(|| format!("the PTX has no `.entry {kernel}`"))?;
    let mut depth = 0usize;
    let mut body = Vec::new();
    let mut opened = false;
    for (n, l) in lines.iter().enumerate().skip(head) {
        for c in l.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        if opened {
            body.push((n + 1, *l));
            if depth == 0 {
                return Ok(body);
            }
        }
    }
    Err(format!("the PTX's `.entry {kernel}` has no closing brace"))
}

/// The names of a PTX module's `.entry` functions, in order.
pub fn ptx_entries(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|l| {
            let code = l.split("//").next().unwrap_or("");
            let rest = code.split(".entry").nth(1)?;
            let name = rest.trim_start().split(['(', ' ', '\t']).next()?.trim();
            (!name.is_empty()).then(|| name.to_string())
        })
        .collect()
}

fn is_wait(line: &str) -> bool {
    line.split("//")
        .next()
        .unwrap_or("")
        .contains("griddepcontrol.wait")
}

/// The `griddepcontrol.wait` instructions of a kernel's PTX entry.
pub fn ptx_waits(ptx: &str, kernel: &str) -> Result<Waits, String> {
    let body = entry_body(ptx, kernel)?;
    let found: Vec<String> = body
        .iter()
        .filter(|(_, l)| is_wait(l))
        .map(|(n, l)| format!("line {n} of the PTX: `{}`", l.trim()))
        .collect();
    if !found.is_empty() {
        return Ok(Waits::Found(found));
    }
    let calls = body.iter().any(|(_, l)| {
        l.split("//")
            .next()
            .unwrap_or("")
            .split_whitespace()
            .next()
            .is_some_and(|w| w.starts_with("call"))
    });
    if calls && ptx.lines().any(is_wait) {
        return Ok(Waits::Undecided(format!(
            "the PTX's `.entry {kernel}` calls a function and the module has griddepcontrol.wait outside the entry: whether the call reaches it is not followed"
        )));
    }
    Ok(Waits::Found(Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = "\
.version 9.0
.target sm_90
.visible .entry primary(
\t.param .u64 primary_param_0
)
{
\tgriddepcontrol.launch_dependents;
\tret;
}
// .globl secondary
.visible .entry secondary(
\t.param .u64 secondary_param_0
)
{
\t.reg .b32 %r<2>;
\tgriddepcontrol.wait;
\tld.volatile.global.u32 %r1, [%rd1];
\tret;
}
";

    #[test]
    fn the_entrys_own_wait_is_found_with_its_line() {
        let w = ptx_waits(PTX, "secondary").unwrap();
        assert_eq!(
            w,
            Waits::Found(vec!["line 16 of the PTX: `griddepcontrol.wait;`".into()])
        );
        assert_eq!(ptx_entries(PTX), ["primary", "secondary"]);
        // The primary's body has no wait, though the module does.
        assert_eq!(ptx_waits(PTX, "primary").unwrap(), Waits::Found(Vec::new()));
    }

    #[test]
    fn a_guarded_out_wait_is_absent_and_a_comment_is_not_a_wait() {
        let out = PTX.replace(
            "\tgriddepcontrol.wait;",
            "\t// griddepcontrol.wait; compiled out",
        );
        assert_eq!(
            ptx_waits(&out, "secondary").unwrap(),
            Waits::Found(Vec::new())
        );
    }

    #[test]
    fn a_call_with_the_wait_elsewhere_is_undecided_and_a_missing_entry_an_error() {
        let called = PTX
            .replace("\tgriddepcontrol.wait;\n", "\tcall.uni helper;\n")
            .replace(
                ".version 9.0\n",
                ".version 9.0\n.func helper()\n{\n\tgriddepcontrol.wait;\n\tret;\n}\n",
            );
        assert!(
            matches!(ptx_waits(&called, "secondary").unwrap(), Waits::Undecided(m) if m.contains("calls a function"))
        );
        assert!(
            ptx_waits(PTX, "other")
                .unwrap_err()
                .contains("no `.entry other`")
        );
        let open = PTX.trim_end().trim_end_matches('}');
        assert!(
            ptx_waits(open, "secondary")
                .unwrap_err()
                .contains("closing brace")
        );
    }
}
