//! The PTX that the host test pdl-guarded-wait-ptx-jit JIT-compiles
//! (`kernels/include/gridcheck_guarded_wait_ptx.cuh`) is what nvcc 13.0
//! makes of `kernels/sass/guarded-wait-arch.cu`, for compute_80 (the guard
//! removes the wait) and compute_90 (it keeps it): checked where nvcc 13.0
//! is found, and the two differ only in the target and the wait anywhere.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The header's string constants, `name` -> text (C escapes undone).
fn embedded(name: &str) -> String {
    let h = std::fs::read_to_string(root().join("kernels/include/gridcheck_guarded_wait_ptx.cuh"))
        .unwrap();
    let start = h
        .find(&format!("{name} =\n"))
        .unwrap_or_else(|| panic!("no {name} in the header"));
    let body = &h[start..h[start..].find(";\n").map(|e| start + e).unwrap()];
    let mut text = String::new();
    for line in body.lines().skip(1) {
        let lit = line.trim().trim_start_matches('"').trim_end_matches('"');
        let mut chars = lit.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                text.push(c);
                continue;
            }
            match chars.next() {
                Some('n') => text.push('\n'),
                Some('t') => text.push('\t'),
                Some(o) => text.push(o),
                None => {}
            }
        }
    }
    text
}

/// PTX without nvcc's header comment, from the first directive on.
fn body(ptx: &str) -> String {
    let lines: Vec<&str> = ptx.lines().skip_while(|l| !l.starts_with('.')).collect();
    lines.join("\n").trim_end().to_string()
}

#[test]
fn the_two_embedded_modules_differ_only_in_target_and_wait() {
    let (p80, p90) = (
        embedded("GC_GUARDED_WAIT_PTX_COMPUTE_80"),
        embedded("GC_GUARDED_WAIT_PTX_COMPUTE_90"),
    );
    assert!(p80.contains(".target sm_80") && !p80.contains("griddepcontrol.wait"));
    assert!(p90.contains(".target sm_90") && p90.contains("griddepcontrol.wait;"));
    let strip = |p: &str| {
        p.lines()
            .filter(|l| {
                !l.contains(".target")
                    && !l.contains("griddepcontrol.wait")
                    && !l.contains("inline asm")
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(&p80), strip(&p90));
}

#[test]
fn the_embedded_ptx_is_what_nvcc_13_0_makes_of_the_source() {
    let root = root();
    let Ok(nvcc) = gridcheck_toolchain::find_nvcc(&root) else {
        eprintln!("no nvcc: the embedded PTX is not compared (nothing to compile it with)");
        return;
    };
    if !nvcc.version.starts_with("13.0.") {
        eprintln!(
            "nvcc {} is not 13.0: the embedded PTX is 13.0's, not compared",
            nvcc.version
        );
        return;
    }
    let src = root.join("kernels/sass/guarded-wait-arch.cu");
    let include = root.join("kernels/include");
    let dir = std::env::temp_dir().join(format!("gc-embedded-ptx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (arch, name) in [
        ("compute_80", "GC_GUARDED_WAIT_PTX_COMPUTE_80"),
        ("compute_90", "GC_GUARDED_WAIT_PTX_COMPUTE_90"),
    ] {
        let out = dir.join(format!("{arch}.ptx"));
        let r = nvcc.compile_ptx(&src, &include, arch, &[], &out);
        assert!(r.success, "{}\n{}", r.command, r.output);
        let made = std::fs::read_to_string(&out).unwrap();
        assert_eq!(
            body(&embedded(name)),
            body(&made),
            "{name} is not what `{}` makes: regenerate kernels/include/gridcheck_guarded_wait_ptx.cuh",
            r.command
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
