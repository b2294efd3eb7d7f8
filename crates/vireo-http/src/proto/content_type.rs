//! The `Content-Type` values most responses carry, pre-rendered.

use http::HeaderValue;

/// The `Content-Type` most responses carry. A response made with [`crate::Response::typed`] starts
/// from a pooled header map that already holds the field, and gives it back unchanged if
/// nothing changed its fields: inserting and clearing the field through `HeaderMap` costs more
/// than the rest of encoding a small response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContentType {
    /// `text/plain; charset=utf-8`
    Text,
    /// `text/html; charset=utf-8`
    Html,
    /// `application/json`
    Json,
    /// `application/octet-stream`
    OctetStream,
}

impl ContentType {
    pub(crate) const ALL: [ContentType; 4] = [
        ContentType::Text,
        ContentType::Html,
        ContentType::Json,
        ContentType::OctetStream,
    ];

    /// The field value.
    pub const fn value(self) -> HeaderValue {
        HeaderValue::from_static(match self {
            ContentType::Text => "text/plain; charset=utf-8",
            ContentType::Html => "text/html; charset=utf-8",
            ContentType::Json => "application/json",
            ContentType::OctetStream => "application/octet-stream",
        })
    }

    /// Append the whole field as encoded in a response head. A constant per arm, copied as a
    /// constant length: one slice picked at run time is a `memcpy` call.
    #[inline(always)]
    pub(crate) fn put_field_line(self, out: &mut Vec<u8>) {
        match self {
            ContentType::Text => {
                out.extend_from_slice(b"content-type: text/plain; charset=utf-8\r\n")
            }
            ContentType::Html => {
                out.extend_from_slice(b"content-type: text/html; charset=utf-8\r\n")
            }
            ContentType::Json => out.extend_from_slice(b"content-type: application/json\r\n"),
            ContentType::OctetStream => {
                out.extend_from_slice(b"content-type: application/octet-stream\r\n")
            }
        }
    }
}
