//! Shapes of litmus programs, the one vocabulary that says which programs
//! are of the same mechanism:
//! - [`Shape`] (`skeleton.rs`): a program's skeleton, per kernel its
//!   launch kind and per thread its operations' kinds, without names or
//!   values; the campaign groups its findings by it.
//! - [`Pattern`] (`pattern.rs`, `matcher.rs`): a fact's shape, a predicate
//!   over a program written in the litmus DSL's operations with variables
//!   for names (`conformance/facts/README.md` is its reference), and
//!   [`Pattern::matches`], which applies it alike to a suite test, a
//!   user's test, a mutant, a random program or a campaign finding: every
//!   one is a `gridcheck_spec::Litmus`.

mod matcher;
mod pattern;
mod skeleton;

pub use pattern::{
    Item, KernelPat, LaunchPat, MAX_ITEMS, MAX_KERNELS, MAX_THREADS, Name, OpPat, Pattern,
    StreamPat, ThreadPat, parse_op,
};
pub use skeleton::{KernelShape, Shape, op_kind};

#[cfg(test)]
mod tests;
