//! gridcheck's spec: the rules of the CUDA Programming Guide on launching
//! work from the GPU (CDP2, CDP1, PDL) and the tests that check them.
//!
//! This crate is the only reader of `spec/**/*.yaml`. [`load_dir`] returns a
//! validated [`Spec`] or every problem found, each located by file, rule or
//! test, field, line and column. No input makes it panic.

pub mod ast;
pub mod condition;
pub mod cuda_errors;
pub mod documents;
pub mod error;
pub mod limits;
pub mod load;
pub mod locate;
pub mod ops;
pub mod place;
pub mod programs;
pub mod raw;
pub mod render;
pub mod scan;
pub mod seeds;
pub mod sentences;
pub mod shapes;
pub mod sized;
pub mod state;
pub mod thread_name;
pub mod tile;

pub use ast::*;
pub use condition::{Condition, Expr};
pub use cuda_errors::{cuda_error_name, cuda_error_value};
pub use error::{SpecError, SpecErrors};
pub use load::{MAX_THREADS, load_dir, load_sources};
pub use place::Place;
pub use seeds::Seeds;
pub use tile::TilePlan;
