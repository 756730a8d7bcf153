//! The input buffer of the fixed-record binary decoders (vscsi, oracleGeneral, lcs): bytes pushed
//! in any chunking, read in whole records, with the input offset of the next unread byte for
//! error messages.

/// Pushed bytes not yet read. Read bytes are dropped once they are half the buffer, so memory
/// stays within about twice the largest push plus one record.
#[derive(Debug, Default)]
pub(crate) struct PushBuffer {
    buf: Vec<u8>,
    pos: usize,
    /// Input offset of `buf[0]`.
    base: u64,
}

impl PushBuffer {
    pub fn push(&mut self, bytes: &[u8]) {
        if self.pos > 0 && self.pos >= self.buf.len() / 2 {
            self.base += self.pos as u64;
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The bytes not read yet.
    pub fn unread(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    /// Marks the first `n` unread bytes read.
    pub fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.buf.len());
    }

    /// The input offset of the first unread byte.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Drops every unread byte (a cut-off tail, or input after a fatal error) and returns how
    /// many there were.
    pub fn discard(&mut self) -> usize {
        let n = self.buf.len() - self.pos;
        self.base += self.buf.len() as u64;
        self.buf.clear();
        self.pos = 0;
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_survive_dropping_read_bytes() {
        let mut b = PushBuffer::default();
        b.push(&[1, 2, 3, 4]);
        b.consume(3);
        assert_eq!((b.unread(), b.offset()), (&[4u8][..], 3));
        b.push(&[5, 6]); // drops the three read bytes
        assert_eq!((b.unread(), b.offset()), (&[4u8, 5, 6][..], 3));
        b.consume(10);
        assert_eq!((b.unread(), b.offset()), (&[][..], 6));
        b.push(&[7, 8]);
        assert_eq!(b.discard(), 2);
        assert_eq!((b.unread(), b.offset()), (&[][..], 8));
    }
}
