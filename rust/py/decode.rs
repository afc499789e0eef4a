//! `ArgumentDecoder`: tool arguments parsed and validated against a pydantic core schema in one step.

use pyo3::prelude::*;
use pyo3::types::PyString;

/// A tool's arguments decoder compiled from a pydantic core schema.
#[pyclass(frozen, module = "toolweave._core")]
pub struct ArgumentDecoder {}

#[pymethods]
impl ArgumentDecoder {
    /// The decoder of `core_schema`, or None when the schema is outside the supported subset.
    #[staticmethod]
    fn build(core_schema: &Bound<'_, PyAny>) -> Option<ArgumentDecoder> {
        let _ = core_schema;
        None
    }

    /// The validated value of `text`, or None when not certain.
    fn decode<'py>(&self, text: &Bound<'py, PyString>) -> Option<Bound<'py, PyAny>> {
        let _ = text;
        None
    }
}
