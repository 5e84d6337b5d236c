//! Mutants of the spec's litmus tests (mutation testing, after MC Mutants,
//! Levine et al., ASPLOS 2023): a mutant is a test with exactly one
//! guarantee removed (`operators.rs`) whose condition both oracles now
//! allow (`judge.rs`). Run on a GPU, a mutant is *killed* when the GPU shows
//! an outcome the original test's verdict rules out (`kills`): the suite
//! would catch a driver that broke that guarantee. Mutants are generated
//! from the spec each time, never written to files that are maintained;
//! `<test>~<operator>` names one (`-<k>` when the operator applies at
//! several sites of the test, numbered in program order).

mod candidates;
mod judge;
mod operators;

pub use candidates::{
    Candidate, Rejected, SEPARATOR, candidates, file_stem, find, kills, programs, split_name,
};
pub use judge::{Judgement, MutantVerdict, judge};
pub use operators::Operator;
