//! Streaming responses: chunked text produced over time, and Server-Sent Events.
//!
//! ```text
//! cargo run -p vireo --example streaming
//! curl -N localhost:8080/count
//! curl -N localhost:8080/events
//! ```

use std::time::Duration;
use vireo::{App, Event, Sse};

/// A `Stream` that yields `0..n` with a pause before each.
fn ticks(
    n: u64,
    every: Duration,
) -> impl futures_core::Stream<Item = Result<u64, std::convert::Infallible>> {
    struct Ticks {
        next: u64,
        n: u64,
        interval: tokio::time::Interval,
    }
    impl futures_core::Stream for Ticks {
        type Item = Result<u64, std::convert::Infallible>;
        fn poll_next(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Self::Item>> {
            if self.next == self.n {
                return std::task::Poll::Ready(None);
            }
            match self.interval.poll_tick(cx) {
                std::task::Poll::Pending => std::task::Poll::Pending,
                std::task::Poll::Ready(_) => {
                    self.next += 1;
                    std::task::Poll::Ready(Some(Ok(self.next - 1)))
                }
            }
        }
    }
    Ticks {
        next: 0,
        n,
        interval: tokio::time::interval(every),
    }
}

/// Map each item of a stream.
fn map<S, T, U, E>(
    stream: S,
    f: impl FnMut(T) -> U + Unpin,
) -> impl futures_core::Stream<Item = Result<U, E>>
where
    S: futures_core::Stream<Item = Result<T, E>> + Unpin,
{
    struct Map<S, F>(S, F);
    impl<S, F, T, U, E> futures_core::Stream for Map<S, F>
    where
        S: futures_core::Stream<Item = Result<T, E>> + Unpin,
        F: FnMut(T) -> U + Unpin,
    {
        type Item = Result<U, E>;
        fn poll_next(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Self::Item>> {
            let this = &mut *self;
            std::pin::Pin::new(&mut this.0)
                .poll_next(cx)
                .map(|item| item.map(|r| r.map(&mut this.1)))
        }
    }
    Map(stream, f)
}

fn main() -> std::io::Result<()> {
    let mut app = App::new();
    app.get("/count", |_req| {
        let lines = map(Box::pin(ticks(10, Duration::from_millis(200))), |n| {
            format!("line {n}\n")
        });
        vireo::Response::new(vireo::http::StatusCode::OK, vireo::stream_body(lines))
    });
    app.get("/events", |_req| {
        Sse::new(map(Box::pin(ticks(5, Duration::from_secs(1))), |n| {
            Event::new(format!("tick {n}"))
                .event("tick")
                .id(n.to_string())
        }))
    });
    let server = vireo::Server::bind("127.0.0.1:8080")?;
    let server = server.on_ready(|addr| println!("listening on http://{addr}"));
    app.serve(server)
}
