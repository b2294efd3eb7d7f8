//! How much room a WebSocket receiver's reads offer beyond the bytes it already holds.

/// How far ahead of the bytes that arrived a buffer may grow for a frame larger than the
/// read buffer (or the read buffer's size, if that is larger).
const MIN_GROWTH: usize = 32 << 10;

/// The most the read-ahead grows to.
const MAX_READ_AHEAD: usize = 64 << 10;

/// The room policy of one receiver: the rest of the frame being read (a step at a time when
/// it is large, so a header announcing a large frame commits little memory), and a
/// read-ahead that starts at the configured read buffer size and doubles while reads fill
/// all the room they are given, so a connection whose messages come in many frames (or
/// several messages at once) takes them in one `recv` rather than one each.
#[derive(Debug, Clone, Copy)]
pub(super) struct ReadRoom {
    base: usize,
    ahead: usize,
}

impl ReadRoom {
    pub(super) fn new(read_buffer_size: usize) -> Self {
        let base = read_buffer_size.max(1);
        ReadRoom { base, ahead: base }
    }

    /// The configured read buffer size: what a buffer is first lent with.
    pub(super) fn base(&self) -> usize {
        self.base
    }

    /// The bytes a buffer should hold from the first undecoded one, with `pending` of them
    /// read and `need` wanted to complete the frame.
    pub(super) fn wanted(&self, pending: usize, need: usize) -> usize {
        let step = self.base.max(MIN_GROWTH);
        let frame = need.min(pending + step).max(pending + 1);
        frame.max(pending + self.ahead)
    }

    /// After a read that returned `n` bytes into `offered` bytes of room.
    pub(super) fn after_read(&mut self, n: usize, offered: usize) {
        if n == offered {
            self.ahead = (self.ahead * 2).min(MAX_READ_AHEAD.max(self.base));
        } else if n < offered / 4 {
            self.ahead = (self.ahead / 2).max(self.base);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_frame_gets_the_read_buffer_size() {
        let room = ReadRoom::new(4096);
        assert_eq!(room.wanted(0, 2), 4096);
        assert_eq!(room.wanted(10, 40), 10 + 4096);
    }

    #[test]
    fn a_frame_larger_than_the_buffer_gets_room_for_all_of_it() {
        let room = ReadRoom::new(4096);
        assert_eq!(room.wanted(100, 20_000), 20_000);
    }

    #[test]
    fn a_huge_frame_commits_only_a_step_beyond_what_arrived() {
        let room = ReadRoom::new(4096);
        assert_eq!(room.wanted(14, 1 << 30), 14 + MIN_GROWTH);
        assert_eq!(room.wanted(50_000, 1 << 30), 50_000 + MIN_GROWTH);
    }

    #[test]
    fn reads_that_fill_their_room_double_the_read_ahead_up_to_the_cap() {
        let mut room = ReadRoom::new(4096);
        room.after_read(4096, 4096);
        assert_eq!(room.wanted(0, 2), 8192);
        for _ in 0..10 {
            room.after_read(100, 100);
        }
        assert_eq!(room.wanted(0, 2), MAX_READ_AHEAD);
    }

    #[test]
    fn small_reads_shrink_it_back_to_the_read_buffer_size() {
        let mut room = ReadRoom::new(4096);
        for _ in 0..4 {
            room.after_read(1, 1);
        }
        assert_eq!(room.wanted(0, 2), 65536);
        room.after_read(1000, 65536);
        assert_eq!(room.wanted(0, 2), 32768);
        for _ in 0..10 {
            room.after_read(10, 65536);
        }
        assert_eq!(room.wanted(0, 2), 4096);
        room.after_read(30_000, 65536);
        assert_eq!(
            room.wanted(0, 2),
            4096,
            "a read of a quarter or more keeps it"
        );
    }

    #[test]
    fn a_read_buffer_larger_than_the_cap_is_kept() {
        let mut room = ReadRoom::new(1 << 20);
        room.after_read(1 << 20, 1 << 20);
        assert_eq!(room.wanted(0, 2), 1 << 20);
    }
}
