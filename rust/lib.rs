//! Rust core of toolweave.
//!
//! The pure modules ([`stream`], [`json`], [`incremental`], [`schema`], [`usage`], [`errors`])
//! never touch Python, so `cargo test --no-default-features` (and the fuzz targets) run without an
//! interpreter. `py` (feature `python`, on by default) is the only place that knows about PyO3: it
//! converts arguments and results, nothing more.

pub mod errors;
pub mod incremental;
pub mod json;
pub mod schema;
pub mod stream;
pub mod usage;

#[cfg(feature = "python")]
mod py;

pub use errors::CoreError;
