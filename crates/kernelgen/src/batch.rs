//! Many litmus programs in one translation unit: a random-program campaign
//! compiles a batch of programs once (`nvcc -rdc=true`, then one device
//! link) and loads one module for all of them. Each program's generated
//! file goes into its own namespace, so that its `kSlotStride` and other
//! file-level constants do not collide; its kernels' exported symbols are
//! already unique ([`crate::kernel_symbol`] starts with the test name), and
//! `gridcheck.cuh` (with the one `gridcheck_histogram` kernel every program
//! shares) is included once, at the top.

use std::fmt::Write;

/// The include line every generated litmus file starts its code with.
const INCLUDE: &str = "#include \"gridcheck.cuh\"";

/// The namespace a program of a batch is wrapped in: `gc_` and its test
/// name, `-` and `~` spelled `_`.
pub fn batch_namespace(test_name: &str) -> String {
    format!("gc_{}", test_name.replace(['-', '~'], "_"))
}

/// One `.cu` file holding every `(test name, generated file)` given, each
/// program in its [`batch_namespace`], the header included once. Warning
/// 177 (a file-level constant a program does not use) is silenced: each
/// program declares all three strides.
pub fn batch_source<'a>(programs: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// A batch of generated litmus programs, one namespace each (gridcheck-kernelgen batch.rs).\n\
         // Generated; do not edit.\n#pragma nv_diag_suppress 177\n{INCLUDE}"
    );
    for (name, text) in programs {
        let _ = writeln!(s, "\nnamespace {} {{", batch_namespace(name));
        for line in text.lines().filter(|l| l.trim() != INCLUDE) {
            s.push_str(line);
            s.push('\n');
        }
        let _ = writeln!(s, "}}  // namespace {}", batch_namespace(name));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_program_is_wrapped_and_the_header_included_once() {
        let a =
            "// a\n#include \"gridcheck.cuh\"\nstatic constexpr unsigned int kSlotStride = 64u;\n";
        let b = "#include \"gridcheck.cuh\"\nstatic constexpr unsigned int kSlotStride = 32u;\n";
        let s = batch_source([("fuzz-1-0", a), ("fuzz-1-1", b)]);
        assert_eq!(s.matches(INCLUDE).count(), 1);
        assert!(s.contains("namespace gc_fuzz_1_0 {\n// a\nstatic constexpr"));
        assert!(s.contains(
            "namespace gc_fuzz_1_1 {\nstatic constexpr unsigned int kSlotStride = 32u;\n}"
        ));
        assert!(s.find("gc_fuzz_1_0").unwrap() < s.find("gc_fuzz_1_1").unwrap());
        assert_eq!(batch_namespace("a-b~c"), "gc_a_b_c");
    }
}
