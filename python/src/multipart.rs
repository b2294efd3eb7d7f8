//! `multipart/form-data` bodies split into their parts by `multer`, without the GIL.

use bytes::Bytes;
use futures_core::Stream;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use std::convert::Infallible;
use std::future::Future;
use std::pin::{pin, Pin};
use std::task::{Context, Poll, Waker};

pyo3::create_exception!(
    _vireo,
    MultipartError,
    pyo3::exceptions::PyValueError,
    "A multipart body that cannot be read: `args` are `(status, message)`, 400 for a malformed body, 413 for one over a limit."
);

/// The whole body, already read, as the one-chunk stream `multer` reads from.
struct Whole(Option<Bytes>);

impl Stream for Whole {
    type Item = Result<Bytes, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Poll::Ready(self.0.take().map(Ok))
    }
}

/// One part: its name, file name, content type, header fields and content.
struct Part {
    name: String,
    filename: Option<String>,
    content_type: Option<String>,
    headers: Vec<(String, String)>,
    data: Bytes,
}

type Failure = (u16, String);

fn failure(e: multer::Error) -> Failure {
    let status = match e {
        multer::Error::FieldSizeExceeded { .. } | multer::Error::StreamSizeExceeded { .. } => 413,
        _ => 400,
    };
    (status, e.to_string())
}

async fn split(body: Bytes, boundary: String, max_parts: usize) -> Result<Vec<Part>, Failure> {
    let mut multipart = multer::Multipart::new(Whole(Some(body)), boundary);
    let mut parts = Vec::new();
    while let Some(field) = multipart.next_field().await.map_err(failure)? {
        if parts.len() == max_parts {
            return Err((400, format!("Too many parts: the maximum is {max_parts}")));
        }
        let name = field.name().unwrap_or_default().to_owned();
        let filename = field.file_name().map(str::to_owned);
        let content_type = field.content_type().map(|m| m.to_string());
        let headers = field
            .headers()
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into(),
                )
            })
            .collect();
        let data = field.bytes().await.map_err(failure)?;
        parts.push(Part {
            name,
            filename,
            content_type,
            headers,
            data,
        });
    }
    Ok(parts)
}

/// Run a future whose input is all in memory: it never waits on anything, so it is ready
/// within a few polls.
fn ready<F: Future>(fut: F) -> Option<F::Output> {
    let mut fut = pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    (0..64).find_map(|_| match fut.as_mut().poll(&mut cx) {
        Poll::Ready(v) => Some(v),
        Poll::Pending => None,
    })
}

/// `parse_multipart(body, content_type, max_parts) -> [(name, filename, content_type,
/// [(header, value)], data)]`; raises `MultipartError(status, message)`.
#[pyfunction]
#[pyo3(signature = (body, content_type, max_parts=1000))]
pub(crate) fn parse_multipart<'py>(
    body: &Bound<'py, PyBytes>,
    content_type: &str,
    max_parts: usize,
) -> PyResult<Bound<'py, PyList>> {
    let py = body.py();
    let boundary = multer::parse_boundary(content_type)
        .map_err(|e| MultipartError::new_err((400, e.to_string())))?;
    let data = Bytes::copy_from_slice(body.as_bytes());
    let parts = py
        .detach(move || ready(split(data, boundary, max_parts)))
        .unwrap_or_else(|| Err((400, "the multipart body could not be read".into())))
        .map_err(|(status, message)| MultipartError::new_err((status, message)))?;
    let out = PyList::empty(py);
    for part in parts {
        out.append((
            part.name,
            part.filename,
            part.content_type,
            part.headers,
            PyBytes::new(py, &part.data),
        ))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{ready, split};
    use bytes::Bytes;

    fn body(parts: &[&str]) -> Bytes {
        let mut out = String::new();
        for p in parts {
            out.push_str("--XX\r\n");
            out.push_str(p);
            out.push_str("\r\n");
        }
        out.push_str("--XX--\r\n");
        Bytes::from(out)
    }

    #[test]
    fn splits_fields_and_files() {
        let data = body(&[
            "Content-Disposition: form-data; name=\"a\"\r\n\r\none",
            "Content-Disposition: form-data; name=\"f\"; filename=\"x.txt\"\r\nContent-Type: text/plain\r\n\r\nfile body",
        ]);
        let parts = ready(split(data, "XX".into(), 10)).unwrap().unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(
            (parts[0].name.as_str(), &parts[0].data[..]),
            ("a", &b"one"[..])
        );
        assert_eq!(parts[1].filename.as_deref(), Some("x.txt"));
        assert_eq!(parts[1].content_type.as_deref(), Some("text/plain"));
        assert_eq!(&parts[1].data[..], b"file body");
    }

    #[test]
    fn too_many_parts_and_malformed_bodies_fail() {
        let data = body(&[
            "Content-Disposition: form-data; name=\"a\"\r\n\r\n1",
            "Content-Disposition: form-data; name=\"b\"\r\n\r\n2",
        ]);
        let err = ready(split(data, "XX".into(), 1)).unwrap().err().unwrap();
        assert_eq!(err.0, 400);
        let cut =
            Bytes::from_static(b"--XX\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nno end");
        let err = ready(split(cut, "XX".into(), 10)).unwrap().err().unwrap();
        assert_eq!(err.0, 400);
    }
}
