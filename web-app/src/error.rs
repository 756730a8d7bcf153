//! Errors the user sees, in plain words: what went wrong, where in the file (byte offset or
//! line) and what to do about it.

use analyzer_core::DecodeError;
use serde::{Deserialize, Serialize};

/// Why loading a trace failed. Carries the position when the engine knows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadError {
    pub kind: LoadErrorKind,
    /// The engine's own message (format, position and what was expected).
    pub detail: String,
    /// Byte offset in the (decompressed) input, when known.
    pub byte_offset: Option<u64>,
    /// 1-based line, for text formats, when known.
    pub line: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LoadErrorKind {
    /// No format recognised the first bytes.
    UnknownFormat,
    /// The format was recognised but the data is not valid.
    Decode,
    /// The file is compressed and the compressed stream is broken.
    Decompress,
    /// The browser could not read the file or URL.
    Read,
    /// The file has no block requests at all.
    Empty,
}

impl LoadError {
    pub fn new(kind: LoadErrorKind, detail: impl Into<String>) -> LoadError {
        LoadError {
            kind,
            detail: detail.into(),
            byte_offset: None,
            line: None,
        }
    }

    pub fn from_decode(e: &DecodeError) -> LoadError {
        let (byte_offset, line, format) = match e {
            DecodeError::AtByte { offset, format, .. } => (Some(*offset), None, format.as_str()),
            DecodeError::AtLine { line, format, .. } => (None, Some(*line), format.as_str()),
            DecodeError::Other { format, .. } => (None, None, format.as_str()),
            _ => (None, None, ""),
        };
        // The decompressor names its codec where decoders name their format.
        let kind = if matches!(format, "gzip" | "zstd") {
            LoadErrorKind::Decompress
        } else {
            LoadErrorKind::Decode
        };
        LoadError {
            kind,
            detail: e.to_string(),
            byte_offset,
            line,
        }
    }

    /// One or two sentences for the error panel.
    pub fn plain_words(&self) -> String {
        let position = match (self.byte_offset, self.line) {
            (Some(b), _) => format!(" The problem is at byte {b} of the file."),
            (None, Some(l)) => format!(" The problem is on line {l} of the file."),
            (None, None) => String::new(),
        };
        match self.kind {
            LoadErrorKind::UnknownFormat => format!(
                "Blocksight does not recognise this file as a block-I/O trace. {} It reads \
                 blktrace, blkparse and tracefs output, MSR/SNIA, SPC, Alibaba and Tencent CSV, \
                 fio iologs, vscsi, libCacheSim oracleGeneral and its own .bst files (also gzip \
                 or zstd compressed).",
                self.detail
            ),
            LoadErrorKind::Decode => {
                format!(
                    "This file could not be read to the end.{position} Details: {}",
                    self.detail
                )
            }
            LoadErrorKind::Decompress => {
                format!(
                    "The compressed data in this file is damaged.{position} Details: {}",
                    self.detail
                )
            }
            LoadErrorKind::Read => format!("The browser could not read the file: {}", self.detail),
            LoadErrorKind::Empty => format!(
                "The file was read but holds no block requests. {}",
                self.detail
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn decode_errors_keep_their_position() {
        let e = LoadError::from_decode(&DecodeError::at_byte("blktrace", 4096, "bad magic"));
        assert_eq!(e.byte_offset, Some(4096));
        let text = e.plain_words();
        assert!(text.contains("byte 4096"), "{text}");
        assert!(text.contains("bad magic"), "{text}");
        let e = LoadError::from_decode(&DecodeError::at_line("msr", 12, "expected 7 fields"));
        assert!(e.plain_words().contains("line 12"));
    }
}
