//! The parameters of a WebSocket route (its handler's and its dependencies'), converted from
//! the handshake request by the same rules as an HTTP route's.

use crate::args::{through_converter, to_py};
use crate::convert::{convert, Arg, Fields};
use crate::errors::{validation_body, ValidationFailed};
use crate::plan::{Param, Source};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple};

/// The handshake as parameters read it: the scope's header fields and query string.
struct Handshake {
    headers: Vec<(Vec<u8>, Vec<u8>)>,
    query: String,
}

impl Handshake {
    fn from_scope(scope: &Bound<'_, PyDict>) -> PyResult<Self> {
        let headers = match scope.get_item("headers")? {
            Some(headers) => headers.extract()?,
            None => Vec::new(),
        };
        let query = match scope.get_item("query_string")? {
            Some(query) => String::from_utf8_lossy(query.cast::<PyBytes>()?.as_bytes()).into(),
            None => String::new(),
        };
        Ok(Self { headers, query })
    }
}

impl Fields for Handshake {
    fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, v)| v.as_slice())
    }

    fn header_values(&self, name: &str) -> Vec<&[u8]> {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, v)| v.as_slice())
            .collect()
    }

    fn query(&self) -> Option<&str> {
        (!self.query.is_empty()).then_some(self.query.as_str())
    }
}

/// A WebSocket route's parameter plan: `HandshakeParams(path_names, plan)`, where `plan` holds
/// keyword-only tuples as for an HTTP route and a `request` source stands for the WebSocket.
#[pyclass(frozen, module = "vireo._vireo")]
pub(crate) struct HandshakeParams {
    params: Vec<Param>,
    /// Each parameter's keyword, in `params` order.
    keywords: Vec<Py<PyString>>,
    path_names: usize,
}

#[pymethods]
impl HandshakeParams {
    #[new]
    fn new(
        py: Python<'_>,
        path_names: Vec<String>,
        plan: Vec<Bound<'_, PyTuple>>,
    ) -> PyResult<Self> {
        let names: Vec<Box<str>> = path_names.iter().map(|n| n.as_str().into()).collect();
        let params = plan
            .iter()
            .map(|t| Param::from_tuple(t, &names))
            .collect::<PyResult<Vec<_>>>()?;
        let mut keywords = Vec::with_capacity(params.len());
        for param in &params {
            if matches!(param.source, Source::Body(_) | Source::Form(_)) {
                return Err(PyValueError::new_err(format!(
                    "{}: a WebSocket handshake has no body to read",
                    param.key
                )));
            }
            let keyword = param.keyword.as_ref().ok_or_else(|| {
                PyValueError::new_err(format!("{}: not a keyword-only parameter", param.key))
            })?;
            keywords.push(keyword.clone_ref(py));
        }
        Ok(Self {
            params,
            keywords,
            path_names: names.len(),
        })
    }

    /// The keyword arguments of the route's call: each parameter converted from the handshake
    /// `scope` and the matched `path_values` (in `path_names` order), and `socket` for the
    /// WebSocket. Raises `ValidationFailed` (with the 422 body) if any value does not convert.
    fn bind<'py>(
        &self,
        scope: &Bound<'py, PyDict>,
        path_values: Vec<String>,
        socket: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let py = scope.py();
        if path_values.len() != self.path_names {
            return Err(PyValueError::new_err(format!(
                "expected {} path values, got {}",
                self.path_names,
                path_values.len()
            )));
        }
        let converted = convert(&self.params, &Handshake::from_scope(scope)?, &path_values);
        let kwargs = PyDict::new(py);
        let mut errors = Vec::new();
        let named = self.params.iter().zip(&self.keywords);
        for (arg, (param, keyword)) in converted.args.into_iter().zip(named) {
            let value = match arg {
                Arg::Request => socket.clone(),
                Arg::Default => to_py(py, arg, param)?,
                arg => {
                    let value = to_py(py, arg, param)?;
                    through_converter(py, param, value, &mut errors)?
                }
            };
            kwargs.set_item(keyword.bind(py), value)?;
        }
        if !converted.errors.is_empty() || !errors.is_empty() {
            let body = validation_body(&converted.errors, &errors);
            return Err(ValidationFailed::new_err((
                PyBytes::new(py, &body).unbind(),
            )));
        }
        Ok(kwargs)
    }
}
