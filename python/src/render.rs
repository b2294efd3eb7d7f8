//! A handler's return value as the engine's response: `str` as text, `bytes` as is, a
//! `Response` object as it says, anything else as JSON encoded here.

use crate::app::AppInner;
use crate::errors::value_error;
use crate::file_range::AskRange;
use crate::json;
use crate::stream::{Pull, PyStream};
use bytes::Bytes;
use http::{header, HeaderName, HeaderValue, StatusCode};
use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use std::sync::Arc;
use vireo_http::{Body, ContentType, Response};

/// Bodies up to this size are copied out of Python; larger ones are sent from the Python
/// object itself, which the response keeps alive.
const COPY_LIMIT: usize = 4096;

fn str_body(s: &Bound<'_, PyString>) -> PyResult<Bytes> {
    let text = s.to_str()?;
    if text.len() <= COPY_LIMIT {
        return Ok(Bytes::copy_from_slice(text.as_bytes()));
    }
    Ok(Bytes::from_owner(PyBackedStr::try_from(s.clone())?))
}

fn bytes_body(b: &Bound<'_, PyBytes>) -> Bytes {
    let data = b.as_bytes();
    if data.len() <= COPY_LIMIT {
        return Bytes::copy_from_slice(data);
    }
    Bytes::from_owner(PyBackedBytes::from(b.clone()))
}

/// The engine response for `value`, with `status` unless `value` is a `Response`; a
/// `StreamingResponse`'s sync iterator is pulled where `pull` says, and a `FileResponse` is
/// narrowed to what `range` asks.
pub(crate) fn render(
    value: &Bound<'_, PyAny>,
    status: StatusCode,
    pull: Pull,
    app: &Arc<AppInner>,
    range: AskRange<'_>,
) -> PyResult<Response> {
    let py = value.py();
    if let Ok(s) = value.cast_exact::<PyString>() {
        if !app.str_as_json {
            return Ok(Response::typed(status, str_body(s)?, ContentType::Text));
        }
    }
    if let Ok(b) = value.cast_exact::<PyBytes>() {
        return Ok(Response::typed(
            status,
            bytes_body(b),
            ContentType::OctetStream,
        ));
    }
    // A plain dict or list is JSON; only other types can be a `Response`.
    let plain = value.is_exact_instance_of::<PyDict>() || value.is_exact_instance_of::<PyList>();
    if !plain && value.is_instance(app.refs.response.bind(py))? {
        return response_object(value, pull, app, range);
    }
    if let Some(starlette) = &app.refs.starlette_response {
        if !plain && value.is_instance(starlette.bind(py))? {
            let converted = app.refs.from_starlette.call1(py, (value,))?;
            return response_object(converted.bind(py), pull, app, range);
        }
    }
    let body = json::encode_body(value, app.refs.jsonable.bind(py))?;
    Ok(Response::typed(status, body, ContentType::Json))
}

/// The pooled `Content-Type` for a media type, when there is one.
fn known_type(media_type: &str) -> Option<ContentType> {
    match media_type {
        "text/plain" | "text/plain; charset=utf-8" => Some(ContentType::Text),
        "text/html" | "text/html; charset=utf-8" => Some(ContentType::Html),
        "application/json" => Some(ContentType::Json),
        "application/octet-stream" => Some(ContentType::OctetStream),
        _ => None,
    }
}

/// A `vireo.Response` (or subclass): `status_code`, `body` or `body_iterator`, `media_type`,
/// `charset` and `headers` (a dict, or a list of pairs), and `raw_headers` if it has any
/// (pairs sent as well, such as `set-cookie` fields).
fn response_object(
    obj: &Bound<'_, PyAny>,
    pull: Pull,
    app: &Arc<AppInner>,
    range: AskRange<'_>,
) -> PyResult<Response> {
    let py = obj.py();
    let narrowed = match obj.is_instance(app.refs.file_response.bind(py))? {
        true => match range() {
            Some(range) => range.narrow(obj)?,
            None => obj.clone(),
        },
        false => obj.clone(),
    };
    let obj = &narrowed;
    let res = response_fields(obj, pull, app)?;
    // Background tasks start once the response is made; they never delay it.
    let background = obj.getattr(pyo3::intern!(py, "background"))?;
    if !background.is_none() {
        app.refs.run_background.call1(py, (background,))?;
    }
    Ok(res)
}

fn response_fields(obj: &Bound<'_, PyAny>, pull: Pull, app: &Arc<AppInner>) -> PyResult<Response> {
    let py = obj.py();
    let code: u16 = obj.getattr("status_code")?.extract()?;
    let status = StatusCode::from_u16(code).map_err(value_error)?;
    let body = if obj.is_instance(app.refs.streaming_response.bind(py))? {
        let stream = Box::pin(PyStream::new(
            obj.getattr("body_iterator")?,
            app.clone(),
            pull,
        )?);
        // A stream of known length (a file) is sent with `content-length`, not chunked.
        let length = obj.getattr(pyo3::intern!(py, "content_length"))?;
        if length.is_none() {
            Body::Stream(stream)
        } else {
            Body::SizedStream(length.extract()?, stream)
        }
    } else {
        let body = obj.getattr("body")?;
        match body.cast::<PyBytes>() {
            Ok(b) => Body::Bytes(bytes_body(b)),
            Err(_) if body.is_none() => Body::Empty,
            Err(_) => {
                return Err(pyo3::exceptions::PyTypeError::new_err(
                    "Response.body must be bytes",
                ))
            }
        }
    };
    let media_type = obj.getattr("media_type")?;
    let headers = obj.getattr("headers")?;
    let raw = Some(obj.getattr(pyo3::intern!(py, "raw_headers"))?).filter(|r| !r.is_none());
    let no_headers = (headers.is_none() || headers.len()? == 0) && raw.is_none();
    let media_type: Option<String> = if media_type.is_none() {
        None
    } else {
        let media_type: String = media_type.extract()?;
        Some(
            if media_type.starts_with("text/") && !media_type.contains("charset") {
                let charset: String = obj.getattr("charset")?.extract()?;
                format!("{media_type}; charset={charset}")
            } else {
                media_type
            },
        )
    };
    if no_headers {
        if let Some(known) = media_type.as_deref().and_then(known_type) {
            return Ok(Response::typed(status, body, known));
        }
    }
    let mut res = Response::new(status, body);
    let fields = res.headers_mut();
    if let Some(media_type) = media_type {
        fields.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_str(&media_type).map_err(value_error)?,
        );
    }
    // A `MutableHeaders` (a dict) keeps a name's fields after the first in `extra`.
    let extra =
        match headers.is_instance_of::<PyDict>() && !headers.is_exact_instance_of::<PyDict>() {
            true => headers
                .getattr(pyo3::intern!(py, "extra"))
                .ok()
                .filter(|extra| extra.is_truthy().unwrap_or(false)),
            false => None,
        };
    let headers = match headers.cast::<PyDict>() {
        Ok(d) => Some(d.items().into_any()),
        Err(_) if headers.is_none() => None,
        Err(_) => Some(headers),
    };
    for pairs in [headers, extra, raw].into_iter().flatten() {
        for pair in pairs.try_iter()? {
            let (name, value): (String, String) = pair?.extract()?;
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(value_error)?;
            let value = HeaderValue::from_str(&value).map_err(value_error)?;
            if name == header::CONTENT_TYPE {
                fields.insert(name, value);
            } else {
                fields.append(name, value);
            }
        }
    }
    Ok(res)
}

/// `render_body(value, jsonable, str_as_json=False) -> (bytes, media_type)`: a plain return
/// value as the body the fast path would send, for building a `Response` object (behind
/// middleware); a `str` as text unless `str_as_json`.
#[pyfunction]
#[pyo3(signature = (value, jsonable, str_as_json=false))]
pub(crate) fn render_body<'py>(
    value: &Bound<'py, PyAny>,
    jsonable: &Bound<'py, PyAny>,
    str_as_json: bool,
) -> PyResult<(Bound<'py, PyAny>, &'static str)> {
    let py = value.py();
    if let (false, Ok(s)) = (str_as_json, value.cast::<PyString>()) {
        let encoded = PyBytes::new(py, s.to_str()?.as_bytes()).into_any();
        return Ok((encoded, "text/plain"));
    }
    if value.is_instance_of::<PyBytes>() {
        return Ok((value.clone(), "application/octet-stream"));
    }
    let body = json::encode(value, jsonable)?;
    Ok((PyBytes::new(py, &body).into_any(), "application/json"))
}
