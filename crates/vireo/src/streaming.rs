//! Streaming response bodies: from an iterator or a `Stream`, and Server-Sent Events.

use crate::response::IntoResponse;
use bytes::Bytes;
use futures_core::Stream;
use http::{header, HeaderValue, StatusCode};
use std::pin::Pin;
use std::task::{Context, Poll};
use vireo_http::{Body, BoxError, Response};

/// A body sent chunked, one chunk per item of `iter`, each written as it is produced. The
/// next item is not asked for until the client has taken the previous one.
///
/// ```
/// let body = vireo::stream_iter((0..3).map(|k| format!("chunk {k}\n")));
/// let res = vireo::Response::new(vireo::http::StatusCode::OK, body);
/// assert_eq!(res.body().len(), None);
/// ```
pub fn stream_iter<I>(iter: I) -> Body
where
    I: IntoIterator + Send + 'static,
    I::IntoIter: Send + Unpin,
    I::Item: Into<Bytes>,
{
    Body::stream(IterStream(iter.into_iter()))
}

/// A body sent chunked from a `Stream` of byte chunks; an error ends the response early.
pub fn stream_body<S, B, E>(stream: S) -> Body
where
    S: Stream<Item = Result<B, E>> + Send + 'static,
    B: Into<Bytes>,
    E: Into<BoxError>,
{
    Body::stream(stream)
}

struct IterStream<I>(I);

impl<I> Stream for IterStream<I>
where
    I: Iterator + Unpin,
    I::Item: Into<Bytes>,
{
    type Item = Result<Bytes, std::convert::Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Poll::Ready(self.0.next().map(|item| Ok(item.into())))
    }
}

/// One Server-Sent Event.
///
/// ```
/// let e = vireo::Event::new("hello\nworld").event("greeting").id("1");
/// assert_eq!(e.to_bytes(), "event: greeting\nid: 1\ndata: hello\ndata: world\n\n");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    data: String,
    event: Option<String>,
    id: Option<String>,
    retry: Option<u64>,
}

impl Event {
    /// An event carrying `data` (several lines are sent as several `data:` lines).
    pub fn new(data: impl Into<String>) -> Self {
        Event {
            data: data.into(),
            ..Event::default()
        }
    }

    /// The event's type, for `addEventListener` on the client.
    pub fn event(mut self, name: impl Into<String>) -> Self {
        self.event = Some(name.into());
        self
    }

    /// The event's id, which the client sends back as `Last-Event-ID` when it reconnects.
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// How long the client waits before reconnecting, in milliseconds.
    pub fn retry(mut self, millis: u64) -> Self {
        self.retry = Some(millis);
        self
    }

    /// The event in the `text/event-stream` wire format. Line breaks inside the event name and
    /// id are dropped, since they would end the field.
    pub fn to_bytes(&self) -> String {
        let clean = |s: &str| s.replace(['\r', '\n'], "");
        let mut out = String::new();
        if let Some(event) = &self.event {
            out.push_str(&format!("event: {}\n", clean(event)));
        }
        if let Some(id) = &self.id {
            out.push_str(&format!("id: {}\n", clean(id)));
        }
        if let Some(retry) = self.retry {
            out.push_str(&format!("retry: {retry}\n"));
        }
        for line in self.data.split('\n') {
            out.push_str("data: ");
            out.push_str(line.strip_suffix('\r').unwrap_or(line));
            out.push('\n');
        }
        out.push('\n');
        out
    }
}

/// A Server-Sent Events response: `text/event-stream`, one event written per item as it is
/// produced.
///
/// ```
/// use vireo::{Event, Sse};
/// let mut app = vireo::App::new();
/// app.get("/events", |_req| Sse::from_iter((1..=2).map(|n| Event::new(n.to_string()))));
/// let res = vireo::TestClient::new(app).get("/events").send();
/// assert_eq!(res.header("content-type"), Some("text/event-stream"));
/// assert_eq!(res.text(), "data: 1\n\ndata: 2\n\n");
/// ```
#[derive(Debug)]
pub struct Sse(Body);

impl Sse {
    /// Events from a `Stream`.
    pub fn new<S, E>(events: S) -> Self
    where
        S: Stream<Item = Result<Event, E>> + Send + 'static,
        E: Into<BoxError>,
    {
        Sse(Body::stream(EventStream { events }))
    }

    /// Events from an iterator.
    #[allow(clippy::should_implement_trait)] // a constructor, not a collection
    pub fn from_iter<I>(events: I) -> Self
    where
        I: IntoIterator<Item = Event> + Send + 'static,
        I::IntoIter: Send + Unpin,
    {
        stream_sse(events.into_iter().map(|e| e.to_bytes()))
    }
}

fn stream_sse<I>(lines: I) -> Sse
where
    I: Iterator<Item = String> + Send + Unpin + 'static,
{
    Sse(stream_iter(lines))
}

pin_project_lite::pin_project! {
    struct EventStream<S> {
        #[pin]
        events: S,
    }
}

impl<S, E> Stream for EventStream<S>
where
    S: Stream<Item = Result<Event, E>>,
    E: Into<BoxError>,
{
    type Item = Result<Bytes, BoxError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.project()
            .events
            .poll_next(cx)
            .map(|item| item.map(|r| r.map(|e| Bytes::from(e.to_bytes())).map_err(Into::into)))
    }
}

impl IntoResponse for Sse {
    fn into_response(self) -> Response {
        let mut res = Response::new(StatusCode::OK, self.0);
        let headers = res.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        );
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        res
    }
}
