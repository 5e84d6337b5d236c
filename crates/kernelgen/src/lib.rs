//! CUDA C++ for gridcheck's litmus tests: a pure function from a
//! [`gridcheck_spec::Litmus`] to a `.cu` file, and the memory layout and
//! launch plan the GPU runner (`gridcheck-gpu`) needs to run it. Runtime
//! tests, which are hand-written, get their `source` verbatim under the
//! same do-not-edit header ([`generate_runtime`]).
//!
//! **Architecture invariant:** this crate does no I/O (except in its tests)
//! and knows nothing of the driver API; it only writes text and describes
//! the layout that text assumes.
//!
//! The generated code follows the parallel testing environment of MC Mutants
//! (Levine et al., "MC Mutants: Evaluating and Improving Testing for Memory
//! Consistency Specifications", ASPLOS 2023, section 4) and the incantations
//! of Alglave et al., "GPU Concurrency: Weak Behaviours and Programming
//! Assumptions" (ASPLOS 2015, section 4): many instances per launch, each in
//! its own memory slot through a co-prime permutation, random delays before
//! test operations, memory stress by non-testing warps, and a burst of
//! reductions by the whole block on the line of each location a phase
//! stores to, before the phase's barrier. The ABI (kernel
//! parameters, array layout, status words) is documented in
//! `kernels/include/gridcheck.cuh`; [`Layout`] is its Rust description.
//!
//! Modules: `abi` (the constants and kernel names the generated code shares
//! with `gridcheck.cuh` and the runner), `layout` (the memory and launch plan of a litmus test), `plan`
//! (which tests build for which architecture with which flags), `emit` (the
//! do-not-edit header, runtime and host test files), `litmus` (the CUDA
//! of a litmus test), `describe` (its header comment: the test, its
//! kernels and its layout) and `batch` (many programs in one `.cu`, one
//! namespace each, for a random-program campaign).

mod abi;
mod batch;
mod escape;

use gridcheck_spec::{Spec, Test, TestBody};

mod describe;
mod emit;
mod layout;
mod litmus;
mod paths;
mod plan;

pub use abi::{
    LOC_STRIDE, MAX_BLOCK, PARAMS_BYTES, STATUS_NOT_REACHED, STATUS_RAN, STRESS_WARPS, WARP,
    kernel_symbol,
};
pub use batch::{batch_namespace, batch_source};
pub use emit::{generate_host, generate_runtime};
pub use layout::{
    ApiCall, BlockObject, DeviceLaunch, ErrorWord, KernelPlan, Layout, Location, ObjectKind,
    Register, layout,
};
pub use litmus::generate;
pub use paths::spec_relative;
pub use plan::{
    CDP1_FLAGS, arch_number, build_plan, observes_errors, pins_targets, profile_runs_on, ptx_arch,
    source_uses_pdl, uses_cdp1, uses_pdl,
};

/// Where the generated `.cu` files live, relative to the repository root.
pub const GENERATED_DIR: &str = "kernels/generated";
/// Where `gridcheck.cuh` lives, relative to the repository root (pass it to
/// nvcc with `-I`).
pub const INCLUDE_DIR: &str = "kernels/include";
/// The generated `.cu` file name for a test, e.g. `mp-parent-child-own-write.cu`.
pub fn file_name(test: &Test) -> String {
    format!("{}.cu", test.name)
}

/// Whether a test has a generated `.cu` file: litmus, runtime and host
/// tests do, compile tests (whose snippet the static tier compiles itself)
/// do not.
pub fn has_generated_file(test: &Test) -> bool {
    !matches!(test.body, TestBody::Compile(_))
}

/// Whether a test's generated file builds into a host executable (a host
/// test) rather than a cubin.
pub fn builds_executable(test: &Test) -> bool {
    matches!(test.body, TestBody::Host(_))
}

/// A hash of what a test runs, as 16 hex digits (FNV-1a, 64 bits): of its
/// generated file, or a compile test's snippet, architecture, flags and
/// expectation. What does not change what runs is left out: the spec file
/// (and the `.cu` file a program is read from),
/// the line the test is on, its description, its former names and the
/// rules that list it.
/// A record carries it (as herd's `.expected` files carry `Hash=`), so that
/// a result recorded before the test changed can be shown stale.
pub fn test_hash(test: &Test) -> String {
    let bare = Test {
        description: None,
        formerly: Vec::new(),
        source_line: None,
        source_file: None,
        ..test.clone()
    };
    let text = match &bare.body {
        TestBody::Litmus(l) => generate(&bare, l, "", &[]),
        TestBody::Runtime(r) => generate_runtime(&bare, r, "", &[]),
        TestBody::Host(h) => generate_host(&bare, h, "", &[]),
        TestBody::Compile(c) => format!(
            "compile {}\nflags {}\nexpect {:?}\n{}",
            c.arch,
            c.flags.join(" "),
            c.expect,
            c.source
        ),
    };
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// [`test_hash`] of the test as it was when it was called `name` (a name
/// its `formerly:` lists), the program unchanged: what a record written
/// under that name carries if the test has not changed since.
pub fn test_hash_as(test: &Test, name: &str) -> String {
    test_hash(&Test {
        name: name.to_string(),
        ..test.clone()
    })
}

/// Every litmus and runtime test of the spec as `(file name, contents)`, in
/// spec order. `cargo xtask codegen` writes these into [`GENERATED_DIR`]; a
/// test checks that the checked-in files are current.
pub fn generate_all(spec: &Spec) -> Vec<(String, String)> {
    spec.tests
        .iter()
        .filter_map(|t| {
            let rules: Vec<&str> = spec
                .rules
                .iter()
                .filter(|r| r.tests.iter().any(|n| n == &t.name))
                .map(|r| r.id.as_str())
                .collect();
            let src = spec_relative(&t.origin.file);
            match &t.body {
                TestBody::Litmus(l) => Some((file_name(t), generate(t, l, &src, &rules))),
                TestBody::Runtime(r) => Some((file_name(t), generate_runtime(t, r, &src, &rules))),
                TestBody::Host(h) => Some((file_name(t), generate_host(t, h, &src, &rules))),
                TestBody::Compile(_) => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
