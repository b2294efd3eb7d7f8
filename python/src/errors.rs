//! Failures as responses: FastAPI's shapes for 404, 405, 422 and `HTTPException`, and a 500
//! with the traceback logged for anything else.

use crate::app::AppInner;
use crate::json;
use bytes::Bytes;
use http::{header, HeaderName, HeaderValue, StatusCode};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use vireo_http::{ContentType, Response};

pyo3::create_exception!(
    _vireo,
    ValidationFailed,
    pyo3::exceptions::PyException,
    "Request parameters failed validation; args[0] is the 422 body as JSON bytes."
);

/// A handler call that did not produce a value.
pub(crate) enum CallError {
    /// The request's parameters were invalid: the 422 body.
    Invalid(Vec<u8>),
    /// The handler (or a validator) raised.
    Raised(PyErr),
}

impl From<PyErr> for CallError {
    fn from(e: PyErr) -> Self {
        CallError::Raised(e)
    }
}

fn json_response(status: StatusCode, body: impl Into<Bytes>) -> Response {
    Response::typed(status, body.into(), ContentType::Json)
}

pub(crate) fn not_found() -> Response {
    Response::typed(
        StatusCode::NOT_FOUND,
        &b"{\"detail\":\"Not Found\"}"[..],
        ContentType::Json,
    )
}

pub(crate) fn method_not_allowed(allow: &HeaderValue) -> Response {
    let mut res = Response::typed(
        StatusCode::METHOD_NOT_ALLOWED,
        &b"{\"detail\":\"Method Not Allowed\"}"[..],
        ContentType::Json,
    );
    res.headers_mut().insert(header::ALLOW, allow.clone());
    res
}

pub(crate) fn internal_error() -> Response {
    Response::typed(
        StatusCode::INTERNAL_SERVER_ERROR,
        "Internal Server Error",
        ContentType::Text,
    )
}

/// The 422 body from every error found: `{"detail":[...]}`.
/// The items of a JSON-encoded list of errors, to splice into another list; a value that is not
/// a list (from an `errors()` overridden to return one) is one item.
pub(crate) fn error_items(encoded: &[u8]) -> &[u8] {
    match encoded {
        [b'[', items @ .., b']'] => items,
        other => other,
    }
}

pub(crate) fn validation_body(rust: &[serde_json::Value], python: &[u8]) -> Vec<u8> {
    let mut out = b"{\"detail\":[".to_vec();
    for (i, error) in rust.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let _ = serde_json::to_writer(&mut out, error);
    }
    if !python.is_empty() {
        if !rust.is_empty() {
            out.push(b',');
        }
        out.extend_from_slice(python);
    }
    out.extend_from_slice(b"]}");
    out
}

/// A Python exception as the client's answer.
pub(crate) fn error_response(py: Python<'_>, err: PyErr, app: &AppInner) -> Response {
    match handled_error(py, &err, app) {
        Some(res) => res,
        None => log_and_500(py, err, app, "in a request handler"),
    }
}

/// The answer for an HTTP error (`HTTPException`, a validation error); `None` for others.
pub(crate) fn handled_error(py: Python<'_>, err: &PyErr, app: &AppInner) -> Option<Response> {
    let refs = &app.refs;
    let value = err.value(py);
    if value
        .is_instance(refs.http_exception.bind(py))
        .unwrap_or(false)
    {
        return Some(match http_exception(value, app) {
            Ok(res) => res,
            Err(e) => log_and_500(py, e, app, "rendering an HTTPException"),
        });
    }
    if let Ok(failed) = value.cast::<ValidationFailed>() {
        if let Ok(body) = failed.getattr("args").and_then(|a| a.get_item(0)) {
            if let Ok(body) = body.cast::<PyBytes>() {
                let body = Bytes::copy_from_slice(body.as_bytes());
                return Some(json_response(StatusCode::UNPROCESSABLE_ENTITY, body));
            }
        }
    }
    if value
        .is_instance(refs.request_validation_error.bind(py))
        .unwrap_or(false)
    {
        let errors = value.call_method0("errors").and_then(|errors| {
            let encoded = json::encode(&errors, refs.jsonable.bind(py))?;
            Ok(validation_body(&[], error_items(&encoded)))
        });
        return Some(match errors {
            Ok(body) => json_response(StatusCode::UNPROCESSABLE_ENTITY, body),
            Err(e) => log_and_500(py, e, app, "rendering a validation error"),
        });
    }
    None
}

/// Log the traceback through the `vireo` logger and answer 500.
pub(crate) fn log_and_500(py: Python<'_>, err: PyErr, app: &AppInner, context: &str) -> Response {
    log(py, err, app, context);
    internal_error()
}

pub(crate) fn log(py: Python<'_>, err: PyErr, app: &AppInner, context: &str) {
    let value = err.into_value(py);
    if let Err(e) = app.refs.log_exception.call1(py, (value, context)) {
        e.print(py);
    }
}

fn http_exception(exc: &Bound<'_, PyAny>, app: &AppInner) -> PyResult<Response> {
    let py = exc.py();
    let code: u16 = exc.getattr("status_code")?.extract()?;
    let status = StatusCode::from_u16(code)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    let detail = PyDict::new(py);
    detail.set_item("detail", exc.getattr("detail")?)?;
    let body = json::encode(detail.as_any(), app.refs.jsonable.bind(py))?;
    let mut res = json_response(status, body);
    let headers = exc.getattr("headers")?;
    if !headers.is_none() {
        let headers = headers.cast::<PyDict>()?;
        for (name, value) in headers.iter() {
            let name: String = name.extract()?;
            let value: String = value.str()?.extract()?;
            res.headers_mut().append(
                HeaderName::from_bytes(name.as_bytes()).map_err(value_error)?,
                HeaderValue::from_str(&value).map_err(value_error)?,
            );
        }
    }
    Ok(res)
}

pub(crate) fn value_error(e: impl std::fmt::Display) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::validation_body;

    #[test]
    fn lists_every_error() {
        let rust = [serde_json::json!({"a": 1}), serde_json::json!({"b": 2})];
        assert_eq!(
            validation_body(&rust, b""),
            b"{\"detail\":[{\"a\":1},{\"b\":2}]}"
        );
        assert_eq!(
            validation_body(&rust[..1], b"{\"c\":3}"),
            b"{\"detail\":[{\"a\":1},{\"c\":3}]}"
        );
        assert_eq!(validation_body(&[], b""), b"{\"detail\":[]}");
    }
}
