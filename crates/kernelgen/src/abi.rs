//! The ABI the generated kernels share with `kernels/include/gridcheck.cuh`
//! and the GPU runner: the memory layout's strides, the block's shape, the
//! status words' values, the parameter block's size, and the exported
//! names of kernels.

/// Words between two locations of one instance (128 bytes: one cache line each).
pub const LOC_STRIDE: u32 = 32;
/// Threads per warp; representative thread `tN` is `threadIdx.x == N * WARP`.
pub const WARP: u32 = 32;
/// Extra warps per block that stress memory (`GC_STRESS_WARPS`).
pub const STRESS_WARPS: u32 = 2;
/// Status word value once a kernel of an instance has run (`GC_RAN`).
pub const STATUS_RAN: u32 = 1;
/// Initial value of a launch status word (`GC_NOT_REACHED`).
pub const STATUS_NOT_REACHED: u32 = 0xffff_ffff;
/// Size in bytes of `gc_params`, the one parameter of every host kernel.
pub const PARAMS_BYTES: usize = 80;
/// Largest block the generator emits.
pub const MAX_BLOCK: u32 = 1024;

/// The exported (`extern "C"`) name of a kernel of a test:
/// `<test name with - replaced by _>__<kernel name>` (a mutant's `~`, see
/// `gridcheck_mutate`, is spelled `__` too).
pub fn kernel_symbol(test_name: &str, kernel: &str) -> String {
    format!(
        "{}__{}",
        test_name.replace('-', "_").replace('~', "__"),
        kernel
    )
}
