//! Blocksight's engine: it turns the bytes of a block-I/O trace into answers.
//!
//! # Architecture invariant: sans-IO
//!
//! This crate never touches the outside world. It has no `std::fs`, no threads, no clocks
//! (`Instant`, `SystemTime`), no network and no web crates (wasm-bindgen, web-sys, yew). It takes
//! byte slices and returns plain serde structs. That keeps one engine for the native CLI and the
//! browser's Web Worker, and makes every part testable by feeding bytes. `scripts/check-sans-io.sh`
//! checks the dependency tree and the source in CI.
//!
//! # Invariant: input data never panics the engine
//!
//! Decoders return [`decode::DecodeError`] for fatal problems and count recoverable bad records in
//! [`decode::Diagnostics`]. Every buffer is bounded, whatever the input's size or shape.

pub mod analysis;
pub mod array;
pub mod cache;
pub mod compress;
pub mod decode;
pub mod event;
pub mod export;
pub mod format;
pub mod hash;
pub mod http;
pub mod job;
pub mod merge;
pub mod mrc;
pub mod native;
pub mod prefetch;
pub mod report;
pub mod stat;
pub mod units;
pub mod varint;

pub use decode::{DecodeError, Decoder, Diagnostics};
pub use event::{DeviceInfo, IoEvent, Op, Sampling, TraceHeader};
pub use format::TraceFormat;
