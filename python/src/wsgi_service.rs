//! A WSGI (PEP 3333) application as the engine's service. The app runs on the blocking pool, so
//! a slow request does not stall the worker; `wsgi.input` streams the body to it as the client
//! sends it, and a streamed result is pulled there chunk by chunk.

use crate::asgi_config::AppConfig;
use crate::asgi_scope::origin;
use crate::asgi_service::server_error;
use crate::thread_state;
use crate::wsgi_call::{call_wsgi, Called};
use crate::wsgi_input::{Input, WsgiInput};
use crate::wsgi_stream::WsgiStream;
use bytes::{Bytes, BytesMut};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::pin::pin;
use std::sync::Arc;
use vireo_http::http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use vireo_http::{Body, BodyKind, ContentType, Response};

pub(crate) async fn serve(config: &Arc<AppConfig>, req: vireo_http::Request<'_>) -> Response {
    let peer = req.remote_addr().copied();
    let tls = req.tls();
    let (head, mut body) = req.into_parts();
    let input = Input::new(matches!(head.body_kind(), BodyKind::Empty));
    let is_head = head.method() == Method::HEAD;
    let origin = origin(&head, peer, tls, config);
    let app_config = config.clone();
    let app_input = input.clone();
    let mut called = tokio::task::spawn_blocking(move || {
        // The pool's threads are reused: each keeps its thread state between requests.
        thread_state::keep_until_exit();
        let config = app_config;
        Python::attach(|py| -> Result<Response, Response> {
            let environ = Bound::new(py, WsgiInput(app_input))
                .and_then(|input| config.environ.environ(py, &head, &origin, input))
                .map_err(|e| log_500(py, &config, "building the WSGI environ", e))?;
            drop(head);
            let called = call_wsgi(
                config.app.bind(py),
                &environ,
                config.wsgi_with_written.bind(py),
            )
            .map_err(|e| log_500(py, &config, "Exception in WSGI application", e))?;
            // A result still open (streamed) is closed if its status or headers are refused.
            let open = called.rest.as_ref().map(|_| called.result.clone());
            response(&config, called, is_head).map_err(|e| {
                if let Some(result) = open {
                    close_result(py, &config, &result);
                }
                log_500(py, &config, "Invalid WSGI response", e)
            })
        })
    });
    let _end = EndInput(input.clone());
    // The body is read as the app reads `wsgi.input`, while the app runs on the blocking pool.
    let mut pump = pin!(input.pump(&mut body));
    let mut pump_done = false;
    let called = loop {
        tokio::select! {
            called = &mut called => break called,
            read = &mut pump, if !pump_done => {
                pump_done = true;
                if let Err(e) = read {
                    return Response::typed(e.status(), e.to_string(), ContentType::Text);
                }
            }
        }
    };
    // An app that answers before reading all it began to read gets the rest read for it.
    if !pump_done && input.wants_rest() {
        input.drain();
        if let Err(e) = pump.as_mut().await {
            return Response::typed(e.status(), e.to_string(), ContentType::Text);
        }
    }
    match called {
        Ok(Ok(res)) | Ok(Err(res)) => res,
        Err(_) => server_error(),
    }
}

/// Ends `wsgi.input` when the service is done with the body, however it ends.
struct EndInput(Arc<Input>);

impl Drop for EndInput {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// Call the result's `close()`, if it has one; a failure is logged.
fn close_result(py: Python<'_>, config: &AppConfig, result: &Bound<'_, PyAny>) {
    let closed = match result.getattr(pyo3::intern!(py, "close")) {
        Ok(close) => close.call0().map(drop),
        Err(_) => Ok(()),
    };
    if let Err(e) = closed {
        config.log(py, "Exception closing the WSGI result", Some(e));
    }
}

fn log_500(py: Python<'_>, config: &AppConfig, message: &str, err: PyErr) -> Response {
    config.log(py, message, Some(err));
    server_error()
}

fn response(config: &Arc<AppConfig>, called: Called<'_>, is_head: bool) -> PyResult<Response> {
    let Called {
        status,
        headers,
        chunks,
        rest,
        result,
    } = called;
    let status = status.to_str()?;
    let code = status
        .split_ascii_whitespace()
        .next()
        .and_then(|c| c.parse::<u16>().ok())
        .and_then(|c| StatusCode::from_u16(c).ok())
        .filter(|s| *s >= StatusCode::OK)
        .ok_or_else(|| PyValueError::new_err(format!("invalid WSGI status {status:?}")))?;
    let mut map = HeaderMap::with_capacity(headers.len());
    let mut length = None;
    for pair in headers.iter() {
        let (name, value): (Bound<'_, PyString>, Bound<'_, PyString>) = pair.extract()?;
        let (name, value) = (name.to_str()?, value.to_str()?);
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| PyValueError::new_err(format!("invalid header name {name:?}")))?;
        let value = header_value(value).ok_or_else(|| {
            PyValueError::new_err(format!("invalid value for header {name}: {value:?}"))
        })?;
        if name == header::CONTENT_LENGTH {
            length = value
                .to_str()
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok());
        }
        map.append(name, value);
    }
    let body = match rest {
        None => {
            let mut all = BytesMut::with_capacity(chunks.iter().map(|c| c.as_bytes().len()).sum());
            for chunk in &chunks {
                all.extend_from_slice(chunk.as_bytes());
            }
            match length {
                Some(len) if is_head && all.is_empty() => {
                    Body::SizedStream(len, Box::pin(WsgiStream::empty()))
                }
                _ => Body::Bytes(all.freeze()),
            }
        }
        Some(rest) => {
            let first = chunks
                .iter()
                .map(|c| Bytes::copy_from_slice(c.as_bytes()))
                .collect();
            let stream = Box::pin(WsgiStream::new(
                first,
                rest.unbind(),
                result.unbind(),
                config.clone(),
            ));
            match length {
                Some(len) => Body::SizedStream(len, stream),
                None => Body::Stream(stream),
            }
        }
    };
    let mut res = Response::new(code, body);
    *res.headers_mut() = map;
    Ok(res)
}

/// A header value given as a "bytes-as-str" (PEP 3333), each character one byte; `None` if a
/// character does not fit in one or the bytes are not a valid value.
fn header_value(text: &str) -> Option<HeaderValue> {
    if text.is_ascii() {
        return HeaderValue::from_str(text).ok();
    }
    latin1_bytes(text).and_then(|bytes| HeaderValue::from_bytes(&bytes).ok())
}

/// A "bytes-as-str" back to its bytes; `None` if a character does not fit in one.
fn latin1_bytes(text: &str) -> Option<Vec<u8>> {
    text.chars().map(|c| u8::try_from(c).ok()).collect()
}
