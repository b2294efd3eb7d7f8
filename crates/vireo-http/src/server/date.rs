//! The `Date` field, formatted at most once per second per thread.
//!
//! Formatting an IMF-fixdate costs more than the rest of a small response head, so each worker
//! keeps the rendered value and a ticker task re-renders it every second ([`refresh`]). A thread
//! without a ticker renders it on first use.

use std::cell::RefCell;
use std::time::SystemTime;

use http::HeaderValue;

use crate::proto::DATE_LEN;

thread_local! {
    static CACHED: RefCell<Option<[u8; DATE_LEN]>> = const { RefCell::new(None) };
    /// The same date as a header value (for HTTP/2), made on first use after each render.
    static VALUE: RefCell<Option<HeaderValue>> = const { RefCell::new(None) };
}

fn render() -> [u8; DATE_LEN] {
    let text = httpdate::fmt_http_date(SystemTime::now());
    let mut bytes = [0u8; DATE_LEN];
    bytes.copy_from_slice(&text.as_bytes()[..DATE_LEN]);
    bytes
}

/// Re-render this thread's cached date from the clock.
pub(crate) fn refresh() {
    CACHED.with(|cell| *cell.borrow_mut() = Some(render()));
    VALUE.with(|cell| cell.borrow_mut().take());
}

/// This thread's cached date as a header value: a reference count, not a copy, per response.
#[cfg(feature = "http2")]
pub(crate) fn header_value() -> HeaderValue {
    VALUE.with(|cell| {
        if let Some(value) = cell.borrow().as_ref() {
            return value.clone();
        }
        let value = with_current(|date| HeaderValue::from_bytes(date))
            .expect("an IMF-fixdate is a valid header value");
        *cell.borrow_mut() = Some(value.clone());
        value
    })
}

/// Call `f` with this thread's cached date, rendered now if it never was. Lent rather than
/// returned, so the bytes are not copied through the stack for every response.
pub(crate) fn with_current<R>(f: impl FnOnce(&[u8; DATE_LEN]) -> R) -> R {
    CACHED.with(|cell| {
        if cell.borrow().is_none() {
            refresh();
        }
        f(cell.borrow().as_ref().expect("rendered just above"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_value_is_the_cached_date_and_follows_each_refresh() {
        let value = header_value();
        assert_eq!(value.as_bytes(), with_current(|date| date.to_vec()));
        // A refresh replaces the cached value; a stale one would keep the old bytes.
        CACHED.with(|cell| *cell.borrow_mut() = Some(*b"Thu, 01 Jan 1970 00:00:00 GMT"));
        VALUE.with(|cell| cell.borrow_mut().take());
        assert_eq!(header_value(), "Thu, 01 Jan 1970 00:00:00 GMT");
        refresh();
        assert_eq!(
            header_value().as_bytes(),
            with_current(|date| date.to_vec())
        );
        assert_ne!(header_value(), "Thu, 01 Jan 1970 00:00:00 GMT");
    }
}
