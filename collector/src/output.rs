//! The engine's formatting and parsing (`analyzer_core::units`, `analyzer_core::job`) under the
//! names `record` uses; no formatting logic lives in the CLI.

pub use analyzer_core::units::{bytes, bytes_per_sec, count, duration, parse_size, per_sec};

/// [`analyzer_core::job::parse_duration`] with its error in words (for clap).
pub fn parse_duration(text: &str) -> Result<u64, String> {
    analyzer_core::job::parse_duration(text).map_err(|e| e.to_string())
}
