//! Rust core of toolweave.
//!
//! The pure modules ([`stream`], [`json`], [`schema`], [`usage`], [`errors`]) never touch Python, so
//! `cargo test --no-default-features` runs without an interpreter. `py` (feature `python`, on by
//! default) is the only place that knows about PyO3.

pub mod errors;
pub mod json;
pub mod schema;
pub mod stream;
pub mod usage;

#[cfg(feature = "python")]
mod py;

pub use errors::CoreError;
