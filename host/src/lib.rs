//! Blocksight's native host layer: the file-reading loop that every native host shares (the
//! `blocksight` CLI and the Python bindings). It opens files, removes compression, sniffs
//! formats, merges inputs by time and feeds a job's passes, and reads and writes traces as Parquet (`parquet`); it holds no job logic (that is
//! `analyzer_core::job`).

pub mod input;
#[cfg(feature = "parquet")]
pub mod parquet;
