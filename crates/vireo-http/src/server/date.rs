//! The `Date` field, formatted at most once per second per thread.
//!
//! Formatting an IMF-fixdate costs more than the rest of a small response head, so each worker
//! keeps the rendered value and a ticker task re-renders it every second ([`refresh`]). A thread
//! without a ticker renders it on first use.

use std::cell::RefCell;
use std::time::SystemTime;

use crate::proto::DATE_LEN;

thread_local! {
    static CACHED: RefCell<Option<[u8; DATE_LEN]>> = const { RefCell::new(None) };
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
