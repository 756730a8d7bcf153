//! Reads a `Blob` or a same-origin URL's response body, one chunk per await. Memory is one
//! chunk, whatever the file's size.
//!
//! Where the browser offers it (Chromium, Firefox, Safari 16.4+: a `Blob`'s stream and a fetch
//! body are byte streams), the bytes are read with a BYOB ("bring your own buffer") reader into
//! one 4 MiB `ArrayBuffer` that goes round and round: each read hands it to the stream and gets
//! it back filled. Reading a slice's own `arrayBuffer()` per chunk instead leaves one 4 MiB
//! buffer of garbage per chunk, which the worker's garbage collector lets pile up (external
//! memory, invisible to its heap's own pressure): on a 1.2 GB trace read by both load workers
//! the tab's renderer grew by about 250 MB of such buffers above the engines' own memory. The
//! slice reader and the default stream reader stay as the fallback where a byte stream is not
//! offered.

use js_sys::{ArrayBuffer, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    Blob, ReadableStream, ReadableStreamByobReader, ReadableStreamDefaultReader, Response,
    WorkerGlobalScope,
};

/// Bytes read from a `Blob` per step: large enough that per-chunk overhead is negligible, small
/// enough that a cancel is seen quickly and memory stays low.
pub const CHUNK_BYTES: usize = 4 << 20;

pub enum ChunkReader {
    /// A byte stream read into one reused buffer (a `Blob`'s stream or a fetch body).
    Byob {
        reader: ReadableStreamByobReader,
        /// The buffer the stream fills; `None` once the stream has taken it and ended.
        array: Option<ArrayBuffer>,
        total: Option<u64>,
        buf: Vec<u8>,
    },
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

/// Awaits a stream reader's `read()` promise: whether the stream is done, and the chunk it gave.
async fn read_step(read: js_sys::Promise) -> Result<(bool, JsValue), String> {
    let step = JsFuture::from(read).await.map_err(js_error)?;
    let done = Reflect::get(&step, &"done".into())
        .map_err(js_error)?
        .as_bool()
        .unwrap_or(true);
    let value = Reflect::get(&step, &"value".into()).map_err(js_error)?;
    Ok((done, value))
}

/// Copies `bytes` into `buf` (resized to fit) and returns it.
fn copy_into<'a>(buf: &'a mut Vec<u8>, bytes: &Uint8Array) -> &'a [u8] {
    buf.resize(bytes.length() as usize, 0);
    bytes.copy_to(buf);
    buf.as_slice()
}

impl ChunkReader {
    pub fn from_blob(blob: Blob) -> ChunkReader {
        let total = Some(blob.size() as u64);
        match ChunkReader::byob(&blob.stream(), total) {
            Some(reader) => reader,
            None => ChunkReader::Blob {
                blob,
                pos: 0.0,
                buf: Vec::new(),
            },
        }
    }

    /// A BYOB reader of `stream`, or `None` when the stream is not a byte stream (the
    /// constructor throws) and must be read otherwise.
    fn byob(stream: &ReadableStream, total: Option<u64>) -> Option<ChunkReader> {
        let reader = ReadableStreamByobReader::new(stream).ok()?;
        Some(ChunkReader::Byob {
            reader,
            array: Some(ArrayBuffer::new(CHUNK_BYTES as u32)),
            total,
            buf: Vec::new(),
        })
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
        if let Some(reader) = ChunkReader::byob(&body, total) {
            return Ok(reader);
        }
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
            ChunkReader::Stream { total, .. } | ChunkReader::Byob { total, .. } => *total,
        }
    }

    /// The next chunk, or `None` at the end.
    pub async fn next_chunk(&mut self) -> Result<Option<&[u8]>, String> {
        match self {
            ChunkReader::Byob {
                reader, array, buf, ..
            } => {
                // Fill the buffer (a byte stream hands out what it has, often less than asked,
                // so a chunk takes a few reads), or stop at the end.
                let mut filled = 0u32;
                while let Some(whole) = array.take() {
                    let room = whole.byte_length();
                    if filled == room {
                        *array = Some(whole);
                        break;
                    }
                    let view =
                        Uint8Array::new_with_byte_offset_and_length(&whole, filled, room - filled);
                    // The stream gives the buffer back (transferred) as the view it filled; at
                    // the end it may keep it, and the loop stops.
                    let (done, value) =
                        read_step(reader.read_with_array_buffer_view(&view)).await?;
                    if let Some(filled_view) = value.dyn_ref::<Uint8Array>() {
                        filled += filled_view.byte_length();
                        *array = Some(filled_view.buffer());
                    }
                    if done {
                        break;
                    }
                }
                if filled == 0 {
                    return Ok(None);
                }
                let Some(whole) = array.as_ref() else {
                    return Err("the stream kept its buffer".to_string());
                };
                let bytes = Uint8Array::new_with_byte_offset_and_length(whole, 0, filled);
                Ok(Some(copy_into(buf, &bytes)))
            }
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
                *pos = end;
                Ok(Some(copy_into(buf, &Uint8Array::new(&array))))
            }
            ChunkReader::Stream { reader, buf, .. } => {
                let (done, value) = read_step(reader.read()).await?;
                if done {
                    return Ok(None);
                }
                Ok(Some(copy_into(buf, value.unchecked_ref())))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    /// Bytes that differ from chunk to chunk and within one.
    fn pattern(len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| ((i * 31 + i / 4099) % 251) as u8)
            .collect()
    }

    fn blob_of(bytes: &[u8]) -> Blob {
        let parts = js_sys::Array::of1(&Uint8Array::from(bytes));
        Blob::new_with_u8_array_sequence(&parts).expect("a blob")
    }

    /// Reads `reader` to its end: every chunk's length and all the bytes.
    async fn read_all(reader: &mut ChunkReader) -> (Vec<usize>, Vec<u8>) {
        let mut sizes = Vec::new();
        let mut all = Vec::new();
        while let Some(chunk) = reader.next_chunk().await.expect("readable") {
            sizes.push(chunk.len());
            all.extend_from_slice(chunk);
        }
        // The end stays the end.
        assert!(reader.next_chunk().await.expect("readable").is_none());
        (sizes, all)
    }

    #[wasm_bindgen_test]
    async fn a_blob_is_read_in_full_chunks_through_one_reused_buffer() {
        let bytes = pattern(2 * CHUNK_BYTES + 12_345);
        let mut reader = ChunkReader::from_blob(blob_of(&bytes));
        // Chromium's Blob stream is a byte stream: the BYOB path, not the per-slice fallback.
        assert!(matches!(reader, ChunkReader::Byob { .. }));
        assert_eq!(reader.total_bytes(), Some(bytes.len() as u64));
        let (sizes, all) = read_all(&mut reader).await;
        assert_eq!(sizes, vec![CHUNK_BYTES, CHUNK_BYTES, 12_345]);
        assert!(all == bytes, "the bytes read differ from the blob's");
    }

    #[wasm_bindgen_test]
    async fn the_slice_fallback_reads_the_same_bytes() {
        let bytes = pattern(CHUNK_BYTES + 7);
        let mut reader = ChunkReader::Blob {
            blob: blob_of(&bytes),
            pos: 0.0,
            buf: Vec::new(),
        };
        let (sizes, all) = read_all(&mut reader).await;
        assert_eq!(sizes, vec![CHUNK_BYTES, 7]);
        assert!(all == bytes);
    }

    #[wasm_bindgen_test]
    async fn the_default_stream_fallback_reads_the_same_bytes() {
        let bytes = pattern(CHUNK_BYTES / 2 + 3);
        let url = web_sys::Url::create_object_url_with_blob(&blob_of(&bytes)).expect("a URL");
        let global: WorkerGlobalScope = js_sys::global().unchecked_into();
        let response: Response = JsFuture::from(global.fetch_with_str(&url))
            .await
            .expect("fetched")
            .unchecked_into();
        let body = response.body().expect("a body");
        let mut reader = ChunkReader::Stream {
            reader: body.get_reader().unchecked_into(),
            total: None,
            buf: Vec::new(),
        };
        let (_, all) = read_all(&mut reader).await;
        web_sys::Url::revoke_object_url(&url).expect("revoked");
        assert!(all == bytes, "the bytes read differ from the body's");
    }

    #[wasm_bindgen_test]
    async fn an_empty_blob_has_no_chunk() {
        let mut reader = ChunkReader::from_blob(blob_of(&[]));
        let (sizes, _) = read_all(&mut reader).await;
        assert!(sizes.is_empty());
    }

    #[wasm_bindgen_test]
    async fn a_fetched_body_is_read_in_full_and_in_order() {
        let bytes = pattern(CHUNK_BYTES + CHUNK_BYTES / 3);
        let url = web_sys::Url::create_object_url_with_blob(&blob_of(&bytes)).expect("a URL");
        let mut reader = ChunkReader::from_url(&url).await.expect("fetched");
        // Chromium's fetch bodies are byte streams too.
        assert!(matches!(reader, ChunkReader::Byob { .. }));
        assert_eq!(reader.total_bytes(), Some(bytes.len() as u64));
        let (_, all) = read_all(&mut reader).await;
        web_sys::Url::revoke_object_url(&url).expect("revoked");
        assert!(all == bytes, "the bytes read differ from the body's");
    }
}
