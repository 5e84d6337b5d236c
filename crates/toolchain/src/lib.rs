//! The CUDA toolchain as gridcheck uses it: finding `nvcc` and the device
//! runtime library (`libcudadevrt.a`), compiling relocatable device code and
//! linking it into a cubin the driver API can load.
//!
//! The chain (verified on the H100 machine):
//! ```text
//! nvcc -arch=sm_90 -rdc=true -I kernels/include -c test.cu -o test.o
//! nvcc -arch=sm_90 -dlink -cubin test.o -L<lib> -lcudadevrt -o test.cubin
//! ```
//! An rdc cubin that was not linked with cudadevrt fails to load with
//! `CUDA_ERROR_NOT_FOUND`.
//!
//! Which architectures the nvcc targets ([`Nvcc::gpu_archs`]), and which
//! built binary of a test runs on a device (`binary.rs`).
//!
//! Also where the checkout is (`root.rs`): decided at run time, so that a
//! binary built in one checkout works on the checkout it is run for; and
//! the toolchains installed in the checkout (`toolchains.rs`).

pub mod binary;
mod nvcc;
mod root;
mod toolchains;

pub use nvcc::{
    CompileOutput, FALLBACK_ARCHS, Nvcc, find_nvcc, nvcc_at, parse_gpu_code_list, parse_version,
    rdc_flags,
};
pub use root::{COMMIT_VAR, checkout_commit, checkout_of, checkout_root, resolve_root, run_commit};
pub use toolchains::{
    PACKAGES, TOOLCHAINS_DIR, Toolchain, add_releases, disassembler, find_toolchain, fnv1a64,
    installed, is_release, kernels_dir, kernels_folder, release_key, release_of,
    release_of_kernels_folder, venv_bin,
};
