//! What a request with a `Range` field asks of the `FileResponse` it is answered with: the
//! method and its `Range` and `If-Range` fields, handed to the response's `_for_range` (see
//! `vireo.responses.FileResponse`), which narrows it to the part asked for.

use crate::request::latin1;
use pyo3::intern;
use pyo3::prelude::*;
use vireo_http::Head;

/// How the response to a request finds what the request asks: called only when the response
/// is a `FileResponse`, so the other responses never look for a `Range` field.
pub(crate) type AskRange<'a> = &'a dyn Fn() -> Option<RangeAsk>;

/// For a response made where the request is no longer at hand.
pub(crate) const NO_RANGE: AskRange<'static> = &|| None;

#[derive(Clone)]
pub(crate) struct RangeAsk {
    method: String,
    range: String,
    if_range: Option<String>,
}

impl RangeAsk {
    /// What the request asks, when it has a `Range` field (most have none).
    pub(crate) fn of(head: &Head) -> Option<RangeAsk> {
        let range = head.header("range")?;
        Some(RangeAsk {
            method: head.method().as_str().to_owned(),
            range: latin1(range),
            if_range: head.header("if-range").map(latin1),
        })
    }

    /// The response to send in place of `file`, a `FileResponse`: itself whole or narrowed,
    /// or the 400 or 416 a malformed or unsatisfiable range is answered with.
    pub(crate) fn narrow<'py>(&self, file: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = file.py();
        file.call_method1(
            intern!(py, "_for_range"),
            (&self.method, &self.range, self.if_range.as_deref()),
        )
    }
}
