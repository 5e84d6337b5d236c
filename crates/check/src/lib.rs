//! The machine-code check of CUDA binaries people ship: for every kernel
//! with PDL instructions (`ACQBULK` is `griddepcontrol.wait`, `PREEXIT`
//! `griddepcontrol.launch_dependents`), each global, read-only or
//! TMA/bulk load that can run before the first wait, with the kernel
//! parameter its address comes from (a dataflow over the SASS, `flow.rs`;
//! "unknown" where it cannot tell), the source line, the PTX entries whose
//! wait is missing while another target's SASS has it, and where the
//! trigger sits among the stores.
//!
//! An early load is a finding only when the previous kernel in the stream
//! can write what it reads (`pair.rs`), or a kernel further back where the
//! kernels between can trigger before their wait: a launch trace says so,
//! or a file naming the parameters the previous kernel produces. Without either, the
//! check lists the early loads by parameter and judges nothing but missing
//! waits. A tensor-map prefetch (`UTMACCTL.PF`) reads the descriptor, not
//! tensor data; where the descriptor is a `__grid_constant__` parameter
//! itself only the host writes it, so it is listed and never paired (a
//! descriptor in global memory is paired by its pointer, as any load).
//!
//! Inputs (`input.rs`): cubins, fatbins, host executables, shared
//! libraries and objects (their `.nv_fatbin`), PTX; directories are walked.
//! Each file's errors are its own: the others are still checked. The
//! command is `gridcheck-check` (`main.rs`, `cli.rs`) and `cargo xtask
//! check`.
//!
//! Speed (`batch.rs`): nvdisasm spends about 0.4 s of CPU starting, so the
//! cubins are packed a few dozen to one ELF file and one run (`pack.rs`);
//! only the kernels whose code holds a PDL opcode are disassembled
//! (`prefilter.rs`, from the bytes), without nvdisasm's dataflow analysis
//! unless an indirect branch needs it. The result is the same as each
//! cubin disassembled whole (`--pack 1 --all-kernels`; `gridcheck-bench
//! check --reference` compares them).

pub mod batch;
pub mod cli;
pub mod cubin;
pub mod elf;
pub mod fatbin;
pub mod flow;
pub mod input;
pub mod kernel;
pub mod nvinfo;
pub mod operand;
pub mod output;
pub mod pack;
pub mod pair;
pub mod paths;
pub mod prefilter;
pub mod report;
pub mod run;

pub use cubin::{CubinResult, Tools};
pub use kernel::{EarlyLoad, Kernel, ParamRef, Provenance};
pub use report::{Finding, Options, Report};
pub use run::check;
