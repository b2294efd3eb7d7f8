//! A parsed request head, from the worker's pool.

use crate::pool::{give_to, take_from};
use crate::proto::{parse_head, ProtoError, RequestHead};
use std::cell::RefCell;
use std::ops::{Deref, DerefMut};

// Heads are pooled boxed because a `Head` is a box: pooling the box is what saves the allocation.
#[allow(clippy::vec_box)]
mod pool {
    use super::*;
    thread_local! {
        pub(super) static HEADS: RefCell<Vec<Box<RequestHead>>> = const { RefCell::new(Vec::new()) };
    }
}

/// Free every head this thread's pool holds.
pub(crate) fn release_pooled_heads() {
    crate::pool::empty(&pool::HEADS);
}

/// A parsed request head from the worker's pool; returned to the pool when dropped.
///
/// It owns its bytes and is `Send`, so a handler may keep it, or move it to a blocking thread.
#[derive(Debug)]
pub struct Head(Option<Box<RequestHead>>);

impl Head {
    pub(crate) fn take() -> Head {
        Head(Some(take_from(&pool::HEADS, Box::default)))
    }

    /// Parse a complete request head from `bytes`, as the server would; for building requests
    /// outside a connection, such as in a test client. Returns the head and its length.
    pub fn parse(bytes: &[u8], limits: &crate::Limits) -> Result<(Head, usize), ProtoError> {
        let mut head = Head::take();
        match parse_head(bytes, limits, &mut head)? {
            Some(len) => Ok((head, len)),
            None => Err(ProtoError::BadRequest("incomplete request head")),
        }
    }
}

impl Clone for Head {
    /// A copy in a head from the pool, whose buffers it reuses.
    fn clone(&self) -> Head {
        let mut copy = Head::take();
        RequestHead::clone_from(&mut copy, self);
        copy
    }
}

impl Deref for Head {
    type Target = RequestHead;
    fn deref(&self) -> &RequestHead {
        self.0
            .as_deref()
            .expect("a Head holds its box until dropped")
    }
}

impl DerefMut for Head {
    fn deref_mut(&mut self) -> &mut RequestHead {
        self.0
            .as_deref_mut()
            .expect("a Head holds its box until dropped")
    }
}

impl Drop for Head {
    fn drop(&mut self) {
        if let Some(head) = self.0.take() {
            give_to(&pool::HEADS, head);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Head;
    use crate::Limits;

    #[test]
    fn a_cloned_head_is_a_copy_of_its_own() {
        let bytes = b"POST /a?b=1 HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n";
        let (head, _) = Head::parse(bytes, &Limits::default()).unwrap();
        let mut copy = head.clone();
        assert!(copy.strip_path_prefix("/a"));
        assert_eq!(copy.path(), "/");
        assert_eq!(head.path(), "/a");
        assert_eq!(copy.method(), head.method());
        assert_eq!(copy.header("host"), Some(&b"x"[..]));
        assert_eq!(copy.headers().len(), 2);
    }
}
