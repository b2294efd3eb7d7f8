//! Request bodies: the connection's reading state, the body a service reads from it, and the
//! buffer a whole body is collected in.

mod buffer;
mod read_state;
mod request_body;

pub(crate) use read_state::{
    give_read_state, release_pooled_read_states, take_read_state, BodyProgress, Continue,
    ReadState, READ_BUFFER_SIZE,
};
pub use request_body::{BodyError, RequestBody};
