//! The message codec between the UI thread and the worker: plain JS values through
//! `serde-wasm-bindgen`, so a `File`/`Blob` travels by structured clone (no copy of its bytes)
//! and 64-bit counters survive as BigInt instead of losing precision as JS numbers.

use gloo_worker::Codec;
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;

/// See the module documentation.
#[derive(Debug)]
pub struct JsCodec;

impl Codec for JsCodec {
    fn encode<I>(input: I) -> JsValue
    where
        I: Serialize,
    {
        let serializer = serde_wasm_bindgen::Serializer::new()
            .serialize_large_number_types_as_bigints(true)
            .serialize_maps_as_objects(true);
        // Our messages are plain data (numbers, strings, vectors, blobs); serialising them cannot
        // fail, and gloo's Codec has no error channel.
        input
            .serialize(&serializer)
            .expect("worker messages are plain data")
    }

    fn decode<O>(input: JsValue) -> O
    where
        O: for<'de> Deserialize<'de>,
    {
        serde_wasm_bindgen::from_value(input).expect("worker messages come from the same build")
    }
}
