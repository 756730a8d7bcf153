//! The output file: native `.bst` chunks written as the recording goes, so a killed collector
//! leaves every flushed chunk readable, and a full disk stops the recording cleanly.

use std::io::Write;

use analyzer_core::native::{EncodeOptions, NativeEncoder};
use analyzer_core::{IoEvent, TraceHeader};

/// What the sink writes to: a file in production, a failing fake in tests.
pub trait OutputFile {
    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()>;
    /// Cuts the file back to `len` bytes (drops a partly written chunk after an error).
    fn truncate(&mut self, len: u64) -> std::io::Result<()>;
    fn sync(&mut self) -> std::io::Result<()>;
}

impl OutputFile for std::fs::File {
    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        Write::write_all(self, bytes)
    }
    fn truncate(&mut self, len: u64) -> std::io::Result<()> {
        use std::io::Seek;
        self.set_len(len)?;
        self.seek(std::io::SeekFrom::Start(len)).map(|_| ())
    }
    fn sync(&mut self) -> std::io::Result<()> {
        self.sync_data()
    }
}

/// A native trace being written. After a write error nothing more is written; the file keeps
/// every chunk written before it.
pub struct Sink<F: OutputFile> {
    file: F,
    encoder: Option<NativeEncoder>,
    buf: Vec<u8>,
    written_bytes: u64,
    events: u64,
    /// Events in chunks that reached the file.
    events_in_file: u64,
    failed: Option<std::io::Error>,
}

impl<F: OutputFile> Sink<F> {
    /// Writes the file header and the trace header at once, so even an empty recording reads
    /// back.
    pub fn new(file: F, header: &TraceHeader, options: EncodeOptions) -> std::io::Result<Sink<F>> {
        let mut buf = Vec::new();
        let encoder = NativeEncoder::new(header, options, &mut buf);
        let mut sink = Sink {
            file,
            encoder: Some(encoder),
            buf,
            written_bytes: 0,
            events: 0,
            events_in_file: 0,
            failed: None,
        };
        sink.write_buf(0);
        match sink.failed.take() {
            Some(e) => Err(e),
            None => Ok(sink),
        }
    }

    /// Bytes in the file.
    pub fn written_bytes(&self) -> u64 {
        self.written_bytes
    }

    /// Events handed to the sink.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Events in complete chunks in the file (fewer than [`Sink::events`] after a write error,
    /// or while a chunk is being filled).
    pub fn events_in_file(&self) -> u64 {
        self.events_in_file
    }

    /// The file, for tests that inspect what was written.
    #[cfg(test)]
    pub fn into_file(self) -> F {
        self.file
    }

    /// The write error that stopped the sink.
    pub fn error(&self) -> Option<&std::io::Error> {
        self.failed.as_ref()
    }

    /// Writes the buffered bytes; `events_in_chunks` is the encoder's count of events in
    /// chunks so far, which are all in the file once the write succeeds.
    fn write_buf(&mut self, events_in_chunks: u64) {
        if self.buf.is_empty() {
            return;
        }
        if self.failed.is_none() {
            match self.file.write_all(&self.buf) {
                Ok(()) => {
                    self.written_bytes += self.buf.len() as u64;
                    self.events_in_file = events_in_chunks;
                }
                Err(e) => {
                    // Keep the file a sequence of whole chunks.
                    let _ = self.file.truncate(self.written_bytes);
                    self.failed = Some(e);
                }
            }
        }
        self.buf.clear();
    }

    pub fn push(&mut self, event: &IoEvent) {
        if self.failed.is_some() {
            return;
        }
        let mut in_chunks = 0;
        if let Some(enc) = self.encoder.as_mut() {
            enc.push(event, &mut self.buf);
            self.events += 1;
            in_chunks = enc.written_events();
        }
        self.write_buf(in_chunks);
    }

    /// Writes buffered events as a chunk (the once-a-second flush).
    pub fn flush(&mut self) {
        let mut in_chunks = 0;
        if let Some(enc) = self.encoder.as_mut() {
            enc.flush(&mut self.buf);
            in_chunks = enc.written_events();
        }
        self.write_buf(in_chunks);
    }

    /// Writes the final header (dropped-event count) and the end marker, and syncs the file.
    pub fn finish(&mut self, header: &TraceHeader) -> std::io::Result<()> {
        let mut in_chunks = self.events_in_file;
        if let Some(mut enc) = self.encoder.take() {
            enc.update_header(header, &mut self.buf);
            in_chunks = enc.written_events();
            enc.finish(&mut self.buf);
        }
        self.write_buf(in_chunks);
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        self.file.sync()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use analyzer_core::Op;

    /// A file that fails with ENOSPC once it holds `capacity` bytes, like a full filesystem.
    pub struct FullDisk {
        pub data: Vec<u8>,
        pub capacity: usize,
    }

    impl OutputFile for FullDisk {
        fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
            let room = self.capacity.saturating_sub(self.data.len());
            self.data.extend_from_slice(&bytes[..room.min(bytes.len())]);
            if bytes.len() > room {
                return Err(std::io::Error::from_raw_os_error(libc::ENOSPC));
            }
            Ok(())
        }
        fn truncate(&mut self, len: u64) -> std::io::Result<()> {
            self.data.truncate(len as usize);
            Ok(())
        }
        fn sync(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    pub fn ev(i: u64) -> IoEvent {
        IoEvent {
            time_nanos: i * 1000,
            device: 0,
            offset_bytes: i * 4096,
            len_bytes: 4096,
            op: Op::Read,
            latency_nanos: Some(50),
            pid: None,
        }
    }

    #[test]
    fn a_full_disk_keeps_whole_chunks_and_reports_enospc() {
        let header = TraceHeader::new("blocksight-record");
        let options = EncodeOptions {
            chunk_events: 100,
            ..EncodeOptions::default()
        };
        let mut sink = Sink::new(
            FullDisk {
                data: Vec::new(),
                capacity: 2_000,
            },
            &header,
            options,
        )
        .expect("header fits");
        for i in 0..1_000 {
            sink.push(&ev(i));
        }
        let err = sink.finish(&header).expect_err("disk full");
        assert_eq!(err.raw_os_error(), Some(libc::ENOSPC));
        let data = &sink.file.data;
        assert_eq!(data.len() as u64, sink.written_bytes());
        // What is in the file reads back as whole chunks with no damaged tail.
        let mut dec = analyzer_core::native::NativeDecoder::new();
        use analyzer_core::Decoder;
        dec.push(data);
        dec.finish();
        let mut n = 0u64;
        while let Some(e) = dec.next_event().expect("decodes") {
            assert_eq!(e, ev(n));
            n += 1;
        }
        assert!(n > 0 && n < 1_000 && n % 100 == 0, "{n}");
        assert_eq!(sink.events_in_file(), n);
    }
}
