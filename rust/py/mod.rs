//! The Python binding: `toolweave._core`.

mod decode;
mod errors;
mod incremental;
mod json;
mod model;
mod schema;
mod stream;
mod usage;

use pyo3::prelude::*;

/// `0.1.0-alpha.1` -> `0.1.0a1` (PEP 440), as pydantic-core and jiter do.
fn python_version() -> String {
    env!("CARGO_PKG_VERSION")
        .replace("-alpha.", "a")
        .replace("-alpha", "a")
        .replace("-beta.", "b")
        .replace("-beta", "b")
}

#[pymodule(gil_used = false)]
pub mod _core {
    #[pymodule_export]
    use super::decode::ArgumentDecoder;
    #[pymodule_export]
    use super::incremental::PartialArguments;
    #[pymodule_export]
    use super::json::parse_arguments;
    #[pymodule_export]
    use super::schema::{
        forbid_additional_properties, hoist_defs_to_root, numbers_fine, to_dialect,
        upper_case_type_values, SchemaValidator,
    };
    #[pymodule_export]
    use super::stream::StreamAggregator;
    #[pymodule_export]
    use super::usage::UsageAccumulator;

    use pyo3::prelude::*;

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", super::python_version())?;
        Ok(())
    }
}
