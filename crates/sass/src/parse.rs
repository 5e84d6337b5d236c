//! `nvdisasm -c -gi` text into functions and instructions: each
//! instruction's address, guard predicate, opcode, operands, branch or call
//! target, and source location (the outermost of an inlined chain: the line
//! of the kernel's own file the code was inlined into).

/// A source location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loc {
    pub file: String,
    pub line: u32,
}

impl std::fmt::Display for Loc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let short = self.file.rsplit('/').next().unwrap_or(&self.file);
        write!(f, "{short}:{}", self.line)
    }
}

/// One machine instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instr {
    /// Byte offset in its function.
    pub addr: u64,
    /// `P0`, `!P0`, `UP1`: the guard, where the instruction is predicated
    /// (`PT` is no guard).
    pub pred: Option<String>,
    /// `LDG.E.STRONG.SYS`.
    pub opcode: String,
    pub operands: String,
    /// A branch's label or a call's symbol (the text inside `` `( ) ``).
    pub target: Option<String>,
    /// An indirect branch's labels, as nvdisasm annotates a jump table
    /// (`BRX R6 ... (*"BRANCH_TARGETS .L_x_1,.L_x_2"*)`); empty elsewhere.
    pub branch_targets: Vec<String>,
    /// The location in the outermost file (the kernel's source, where
    /// helpers are inlined), when line information is present.
    pub loc: Option<Loc>,
    /// The innermost location, where it differs (an inlined helper's).
    pub inner: Option<Loc>,
}

impl Instr {
    /// The instruction as nvdisasm printed it, with its address.
    pub fn text(&self) -> String {
        let pred = self
            .pred
            .as_ref()
            .map(|p| format!("@{p} "))
            .unwrap_or_default();
        let ops = if self.operands.is_empty() {
            String::new()
        } else {
            format!(" {}", self.operands)
        };
        format!("/*{:04x}*/ {pred}{}{ops}", self.addr, self.opcode)
    }

    /// The opcode's base name: `LDG` of `LDG.E.STRONG.SYS`.
    pub fn base(&self) -> &str {
        self.opcode.split('.').next().unwrap_or("")
    }
}

/// One function (a kernel or a device function) with its labels.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Function {
    pub name: String,
    pub instrs: Vec<Instr>,
    /// A label and the index of the instruction it stands before.
    pub labels: Vec<(String, usize)>,
}

impl Function {
    /// The index of the instruction a label stands before.
    pub fn label(&self, name: &str) -> Option<usize> {
        self.labels.iter().find(|(l, _)| l == name).map(|(_, i)| *i)
    }
}

/// `File "a.cu", line 12` -> a location.
fn loc_at(s: &str) -> Option<(Loc, &str)> {
    let s = s.trim_start().strip_prefix("File \"")?;
    let (file, rest) = s.split_once('"')?;
    let rest = rest.trim_start().strip_prefix(", line ")?;
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let line = rest[..end].parse().ok()?;
    Some((
        Loc {
            file: file.to_string(),
            line,
        },
        &rest[end..],
    ))
}

/// A `//## File ...` line: (innermost, outermost).
fn line_info(s: &str) -> Option<(Loc, Loc)> {
    let s = s.trim_start().strip_prefix("//##")?.trim();
    let mut locs = Vec::new();
    for part in s.split(" inlined at ") {
        let part = part.trim();
        let part = if part.starts_with("File ") {
            part.to_string()
        } else {
            format!("File {part}")
        };
        locs.push(loc_at(&part)?.0);
    }
    Some((locs.first()?.clone(), locs.last()?.clone()))
}

/// An instruction line: `/*0d20*/  @!P0 STG.E [R2.64], R7 ;`.
fn instr(s: &str) -> Result<Option<Instr>, String> {
    let t = s.trim_start();
    let Some(rest) = t.strip_prefix("/*") else {
        return Ok(None);
    };
    let Some((addr, body)) = rest.split_once("*/") else {
        return Ok(None);
    };
    let Ok(addr) = u64::from_str_radix(addr.trim(), 16) else {
        return Ok(None);
    };
    let body = body.trim().trim_start_matches('{').trim();
    let body = body.split("/*").next().unwrap_or("").trim();
    let body = body
        .trim_end_matches('}')
        .trim()
        .trim_end_matches(';')
        .trim();
    let (pred, body) = match body.strip_prefix('@') {
        Some(r) => {
            let (p, b) = r
                .split_once(char::is_whitespace)
                .ok_or_else(|| format!("a guard with no instruction: `{s}`"))?;
            (Some(p.to_string()).filter(|p| p != "PT"), b.trim_start())
        }
        None => (None, body),
    };
    let (opcode, operands) = match body.split_once(char::is_whitespace) {
        Some((o, rest)) => (o.to_string(), rest.trim().to_string()),
        None => (body.to_string(), String::new()),
    };
    if opcode.is_empty() {
        return Err(format!("an instruction with no opcode: `{s}`"));
    }
    let target = operands
        .split_once("`(")
        .and_then(|(_, r)| r.split_once(')'))
        .map(|(t, _)| t.trim().to_string());
    let branch_targets = operands
        .split_once("BRANCH_TARGETS")
        .map(|(_, r)| {
            r.split('"')
                .next()
                .unwrap_or("")
                .split(',')
                .map(|l| l.trim().to_string())
                .filter(|l| !l.is_empty())
                .collect()
        })
        .unwrap_or_default();
    Ok(Some(Instr {
        addr,
        pred,
        opcode,
        operands,
        target,
        branch_targets,
        loc: None,
        inner: None,
    }))
}

/// Parses `nvdisasm -c -gi` (or `-g`, or none) output. Errors name the line.
pub fn parse(text: &str) -> Result<Vec<Function>, String> {
    let mut funcs: Vec<Function> = Vec::new();
    let mut cur: Option<Function> = None;
    let mut loc: Option<(Loc, Loc)> = None;
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix(".section") {
            let name = rest.trim().split(',').next().unwrap_or("").trim();
            if let Some(f) = cur.take() {
                funcs.push(f);
            }
            if let Some(fname) = name.strip_prefix(".text.") {
                cur = Some(Function {
                    name: fname.to_string(),
                    ..Function::default()
                });
            }
            loc = None;
            continue;
        }
        let Some(f) = cur.as_mut() else { continue };
        if t.starts_with("//##") {
            loc = line_info(t);
            if loc.is_none() {
                return Err(format!("line {}: unreadable line information `{t}`", n + 1));
            }
            continue;
        }
        if let Some(label) = t.strip_suffix(':')
            && !label.contains(char::is_whitespace)
            && !t.starts_with("/*")
        {
            f.labels.push((label.to_string(), f.instrs.len()));
            continue;
        }
        match instr(line) {
            Ok(Some(mut i)) => {
                if let Some((inner, outer)) = &loc {
                    i.inner = Some(inner.clone()).filter(|l| l != outer);
                    i.loc = Some(outer.clone());
                }
                f.instrs.push(i);
            }
            Ok(None) => {}
            Err(e) => return Err(format!("line {}: {e}", n + 1)),
        }
    }
    if let Some(f) = cur {
        funcs.push(f);
    }
    Ok(funcs)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"
	.section	.text.k,"ax",@progbits
k:
.text.k:
	//## File "/x/k.cu", line 66
        /*0000*/                   LDC R1, c[0x0][0x28] ;
	//## File "/x/h.cuh", line 106 inlined at "/x/k.cu", line 67
        /*0010*/              @!P0 BRA `(.L_x_3) ;
	//## File "/x/a.hpp", line 112 inlined at "/x/h.cuh", line 142 inlined at "/x/k.cu", line 97
        /*0020*/                   CALL.ABS.NOINC `(__cudaCDP2LaunchDeviceV2) ;
.L_x_3:
        /*0030*/                   LDG.E.STRONG.SYS R13, desc[UR36][R12.64] ;
        /*0040*/                   EXIT ;
"#;

    #[test]
    fn parses_functions_locations_and_targets() {
        let f = parse(TEXT).unwrap();
        assert_eq!(f.len(), 1);
        let k = &f[0];
        assert_eq!(k.name, "k");
        assert_eq!(k.instrs.len(), 5);
        assert_eq!(k.instrs[1].pred.as_deref(), Some("!P0"));
        assert_eq!(k.instrs[1].target.as_deref(), Some(".L_x_3"));
        assert_eq!(k.instrs[1].loc.as_ref().unwrap().line, 67);
        assert_eq!(k.instrs[1].inner.as_ref().unwrap().line, 106);
        assert_eq!(k.instrs[2].loc.as_ref().unwrap().line, 97);
        assert_eq!(
            k.instrs[2].target.as_deref(),
            Some("__cudaCDP2LaunchDeviceV2")
        );
        assert_eq!(k.label(".L_x_3"), Some(3));
        assert_eq!(k.instrs[3].base(), "LDG");
        assert_eq!(k.instrs[3].loc.as_ref().unwrap().line, 97);
        assert_eq!(k.instrs[3].addr, 0x30);
    }

    #[test]
    fn bad_text_is_an_error_with_its_line() {
        let bad = ".section .text.k,\"ax\"\n//## File broken\n";
        let e = parse(bad).unwrap_err();
        assert!(e.starts_with("line 2:"), "{e}");
        let bad = ".section .text.k,\"ax\"\n /*0000*/ @P0 ;\n";
        assert!(parse(bad).unwrap_err().contains("line 2"));
    }
}
