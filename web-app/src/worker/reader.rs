//! Reads a `Blob` in `slice()` chunks, or a same-origin URL as a response stream, one chunk per
//! await. Memory is one chunk, whatever the file's size.

use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{Blob, ReadableStreamDefaultReader, Response, WorkerGlobalScope};

/// Bytes read from a `Blob` per step: large enough that per-chunk overhead is negligible, small
/// enough that a cancel is seen quickly and memory stays low.
pub const CHUNK_BYTES: usize = 4 << 20;

pub enum ChunkReader {
    Blob {
        blob: Blob,
        pos: f64,
        buf: Vec<u8>,
    },
    Stream {
        reader: ReadableStreamDefaultReader,
        total: Option<u64>,
        buf: Vec<u8>,
    },
}

fn js_error(e: JsValue) -> String {
    e.as_string()
        .or_else(|| {
            e.dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
        })
        .unwrap_or_else(|| format!("{e:?}"))
}

impl ChunkReader {
    pub fn from_blob(blob: Blob) -> ChunkReader {
        ChunkReader::Blob {
            blob,
            pos: 0.0,
            buf: Vec::new(),
        }
    }

    /// Starts fetching `url` (the UI only passes same-origin URLs, and the page's CSP allows
    /// nothing else).
    pub async fn from_url(url: &str) -> Result<ChunkReader, String> {
        let global: WorkerGlobalScope = js_sys::global().unchecked_into();
        let response: Response = JsFuture::from(global.fetch_with_str(url))
            .await
            .map_err(|e| format!("cannot fetch {url}: {}", js_error(e)))?
            .unchecked_into();
        if !response.ok() {
            return Err(format!(
                "cannot fetch {url}: HTTP {} {}",
                response.status(),
                response.status_text()
            ));
        }
        let total = response
            .headers()
            .get("content-length")
            .ok()
            .flatten()
            .and_then(|v| v.parse::<u64>().ok());
        let body = response
            .body()
            .ok_or_else(|| format!("{url}: the response has no body"))?;
        let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
        Ok(ChunkReader::Stream {
            reader,
            total,
            buf: Vec::new(),
        })
    }

    pub fn total_bytes(&self) -> Option<u64> {
        match self {
            ChunkReader::Blob { blob, .. } => Some(blob.size() as u64),
            ChunkReader::Stream { total, .. } => *total,
        }
    }

    /// The next chunk, or `None` at the end.
    pub async fn next_chunk(&mut self) -> Result<Option<&[u8]>, String> {
        match self {
            ChunkReader::Blob { blob, pos, buf } => {
                let size = blob.size();
                if *pos >= size {
                    return Ok(None);
                }
                let end = (*pos + CHUNK_BYTES as f64).min(size);
                let piece = blob.slice_with_f64_and_f64(*pos, end).map_err(js_error)?;
                let array = JsFuture::from(piece.array_buffer())
                    .await
                    .map_err(js_error)?;
                let bytes = Uint8Array::new(&array);
                buf.resize(bytes.length() as usize, 0);
                bytes.copy_to(buf);
                *pos = end;
                Ok(Some(buf.as_slice()))
            }
            ChunkReader::Stream { reader, buf, .. } => {
                let step = JsFuture::from(reader.read()).await.map_err(js_error)?;
                let done = Reflect::get(&step, &"done".into())
                    .map_err(js_error)?
                    .as_bool()
                    .unwrap_or(true);
                if done {
                    return Ok(None);
                }
                let value = Reflect::get(&step, &"value".into()).map_err(js_error)?;
                let bytes: Uint8Array = value.unchecked_into();
                buf.resize(bytes.length() as usize, 0);
                bytes.copy_to(buf);
                Ok(Some(buf.as_slice()))
            }
        }
    }
}
