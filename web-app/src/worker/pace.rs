//! Keeps the worker answering while a job reads the trace. A worker runs one JavaScript task at a
//! time: a newer request (a new depth, size or file, a cancel) is a message, and it is only
//! delivered when the running job gives the event loop back. Awaiting the next chunk does not
//! always do that: a response stream's `read()` resolves as a microtask when its data is already
//! buffered (a local `blocksight serve`), and a `Blob` chunk is 4 MiB, seconds of work for the
//! heavier jobs. So the file's chunks are fed to the job in pieces sized to take about
//! [`PIECE_MS`] each, and every [`YIELD_EVERY_MS`] the job yields a task (a message to itself on
//! a `MessageChannel`, which, unlike `setTimeout`, is never clamped to 4 ms), then looks whether
//! it was replaced.
//!
//! A background job (the Cache view's curves, refined after its answers) waits before each
//! piece while a foreground job runs ([`Foreground`]: the answer the user is waiting for, such
//! as a new size's), so the two do not share the worker half and half.

use std::cell::Cell;

use js_sys::Promise;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::MessageChannel;

/// A running job gives the event loop back at least this often (milliseconds of its work).
pub const YIELD_EVERY_MS: f64 = 20.0;
/// A piece of a chunk is sized to take about this long to decode and process.
pub const PIECE_MS: f64 = 10.0;
/// The first piece, before the job's speed is known.
pub const FIRST_PIECE_BYTES: usize = 256 << 10;
/// Bounds of a piece: small enough that a slow job still yields often, large enough that the
/// per-piece overhead stays negligible.
pub const MIN_PIECE_BYTES: usize = 4 << 10;
pub const MAX_PIECE_BYTES: usize = 4 << 20;

/// How long a background job sleeps before it looks again whether the foreground is free.
pub const PAUSE_MS: i32 = 10;

thread_local! {
    static FOREGROUND: Cell<u32> = const { Cell::new(0) };
}

/// While one lives, background jobs' pacers wait ([`Pacer::background`]).
pub struct Foreground(());

impl Foreground {
    pub fn enter() -> Foreground {
        FOREGROUND.with(|f| f.set(f.get() + 1));
        Foreground(())
    }

    /// Whether a foreground job runs.
    pub fn running() -> bool {
        FOREGROUND.with(|f| f.get() > 0)
    }
}

impl Drop for Foreground {
    fn drop(&mut self) {
        FOREGROUND.with(|f| f.set(f.get().saturating_sub(1)));
    }
}

/// The next piece's size after `bytes` took `elapsed_ms`: the size that takes [`PIECE_MS`] at
/// that speed, at most twice or half the last one (a single slow or fast piece, such as one
/// that finished a compressed frame, does not swing it), within the bounds.
pub fn next_piece_bytes(bytes: usize, elapsed_ms: f64) -> usize {
    let bytes = bytes.max(1);
    let target = if elapsed_ms > 0.0 {
        (bytes as f64 * PIECE_MS / elapsed_ms).clamp(bytes as f64 / 2.0, bytes as f64 * 2.0)
    } else {
        bytes as f64 * 2.0
    };
    (target as usize).clamp(MIN_PIECE_BYTES, MAX_PIECE_BYTES)
}

/// Feeds chunks to a job in pieces and yields between them (see the module documentation).
pub struct Pacer {
    piece: usize,
    last_yield_ms: f64,
    channel: Option<MessageChannel>,
    background: bool,
}

impl Default for Pacer {
    fn default() -> Self {
        Pacer::new()
    }
}

impl Pacer {
    pub fn new() -> Pacer {
        Pacer {
            piece: FIRST_PIECE_BYTES,
            last_yield_ms: js_sys::Date::now(),
            channel: None,
            background: false,
        }
    }

    /// A pacer that also waits before each piece while a [`Foreground`] job runs.
    pub fn background() -> Pacer {
        Pacer {
            background: true,
            ..Pacer::new()
        }
    }

    /// Feeds `chunk` to `feed` piece by piece. Returns `Ok(false)` as soon as `replaced()` says
    /// so after a yield (the rest of the chunk is not fed), `Ok(true)` when all of it was fed,
    /// or `feed`'s error.
    pub async fn feed<E>(
        &mut self,
        chunk: &[u8],
        replaced: &dyn Fn() -> bool,
        feed: &mut dyn FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<bool, E> {
        let mut rest = chunk;
        while !rest.is_empty() {
            while self.background && Foreground::running() {
                sleep_ms(PAUSE_MS).await;
                self.last_yield_ms = js_sys::Date::now();
                if replaced() {
                    return Ok(false);
                }
            }
            let (piece, after) = rest.split_at(self.piece.min(rest.len()));
            rest = after;
            let start = js_sys::Date::now();
            feed(piece)?;
            let now = js_sys::Date::now();
            // A short last piece of a chunk says little about the speed.
            if piece.len() == self.piece || now - start > PIECE_MS {
                self.piece = next_piece_bytes(piece.len(), now - start);
            }
            if now - self.last_yield_ms >= YIELD_EVERY_MS {
                self.yield_now().await;
                if replaced() {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// Gives the event loop back for one task: pending messages are delivered first.
    pub async fn yield_now(&mut self) {
        let channel = match &self.channel {
            Some(c) => c,
            None => match MessageChannel::new() {
                Ok(c) => self.channel.insert(c),
                // No channel (never in a worker or a page): nothing to yield with.
                Err(_) => return,
            },
        };
        let (port1, port2) = (channel.port1(), channel.port2());
        let promise = Promise::new(&mut |resolve, _| {
            port1.set_onmessage(Some(resolve.unchecked_ref()));
            let _ = port2.post_message(&JsValue::UNDEFINED);
        });
        let _ = JsFuture::from(promise).await;
        port1.set_onmessage(None);
        self.last_yield_ms = js_sys::Date::now();
    }
}

/// Resolves after `ms` milliseconds (the global `setTimeout`: a worker's or a page's).
pub async fn sleep_ms(ms: i32) {
    let promise = Promise::new(&mut |resolve, _| {
        let global: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
        let _ = global.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
    });
    let _ = JsFuture::from(promise).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn a_piece_takes_about_piece_ms_within_bounds() {
        // Steady speed: the size that takes PIECE_MS.
        assert_eq!(next_piece_bytes(64 << 10, PIECE_MS), 64 << 10);
        assert_eq!(
            next_piece_bytes(64 << 10, PIECE_MS * 1.5),
            (64 << 10) * 2 / 3
        );
        // At most halved or doubled per piece.
        assert_eq!(next_piece_bytes(64 << 10, 1000.0), 32 << 10);
        assert_eq!(next_piece_bytes(64 << 10, 0.1), 128 << 10);
        assert_eq!(next_piece_bytes(64 << 10, 0.0), 128 << 10);
        // Within the bounds, whatever the speed.
        assert_eq!(next_piece_bytes(MIN_PIECE_BYTES, 1e9), MIN_PIECE_BYTES);
        assert_eq!(next_piece_bytes(MAX_PIECE_BYTES, 0.0), MAX_PIECE_BYTES);
        assert_eq!(next_piece_bytes(0, 0.0), MIN_PIECE_BYTES);
        // Converges: a job of 10 KB/ms settles at 100 KB a piece from either side.
        for start in [MIN_PIECE_BYTES, MAX_PIECE_BYTES] {
            let mut p = start;
            for _ in 0..20 {
                p = next_piece_bytes(p, p as f64 / 10_000.0);
            }
            assert!((99_000..=101_000).contains(&p), "{start} -> {p}");
        }
    }

    /// Spins for `ms` milliseconds: a job's work.
    fn busy(ms: f64) {
        let end = js_sys::Date::now() + ms;
        while js_sys::Date::now() < end {}
    }

    #[wasm_bindgen_test]
    async fn a_message_posted_before_a_long_chunk_is_seen_within_it() {
        // A newer request arrives as a message while the job runs through a chunk that would
        // take seconds; the job sees it at its first yield and stops there.
        let replaced = Rc::new(Cell::new(false));
        let channel = MessageChannel::new().expect("a channel");
        let flag = replaced.clone();
        let on_message = Closure::<dyn FnMut()>::new(move || flag.set(true));
        channel
            .port1()
            .set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        channel
            .port2()
            .post_message(&JsValue::NULL)
            .expect("posted");
        let chunk = vec![0u8; 4 << 20];
        let mut fed = 0usize;
        let mut pacer = Pacer::new();
        let done = pacer
            .feed(&chunk, &|| replaced.get(), &mut |piece: &[u8]| {
                fed += piece.len();
                // About 1 ms per 4 KiB: the whole chunk would take a second.
                busy(piece.len() as f64 / 4096.0);
                Ok::<(), ()>(())
            })
            .await;
        assert_eq!(done, Ok(false), "replaced within the chunk");
        assert!(replaced.get());
        assert!(
            fed < chunk.len() / 4,
            "stopped after {fed} of {} bytes",
            chunk.len()
        );
        channel.port1().set_onmessage(None);
        drop(on_message);
    }

    #[wasm_bindgen_test]
    async fn a_background_job_waits_while_a_foreground_one_runs() {
        // A foreground job holds the worker for 60 ms; the background job's pieces all come
        // after it (none while it runs), and every byte still arrives in order.
        let guard = Rc::new(Cell::new(Some(Foreground::enter())));
        let g = guard.clone();
        let release = Closure::<dyn FnMut()>::new(move || drop(g.take()));
        let global: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
        global
            .set_timeout_with_callback_and_timeout_and_arguments_0(
                release.as_ref().unchecked_ref(),
                60,
            )
            .expect("a timer");
        let start = js_sys::Date::now();
        let chunk: Vec<u8> = (0..(256u32 << 10)).map(|i| (i % 253) as u8).collect();
        let mut got = Vec::new();
        let mut during = 0;
        let done = Pacer::background()
            .feed(&chunk, &|| false, &mut |piece: &[u8]| {
                during += usize::from(Foreground::running());
                got.extend_from_slice(piece);
                Ok::<(), ()>(())
            })
            .await;
        assert_eq!(done, Ok(true));
        assert_eq!(during, 0, "pieces fed while the foreground ran");
        assert!(
            js_sys::Date::now() - start >= 55.0,
            "waited for the foreground"
        );
        assert_eq!(got, chunk);
        // A foreground pacer does not wait.
        let _fg = Foreground::enter();
        let mut fed = 0;
        let done = Pacer::new()
            .feed(&chunk, &|| false, &mut |piece: &[u8]| {
                fed += piece.len();
                Ok::<(), ()>(())
            })
            .await;
        assert_eq!((done, fed), (Ok(true), chunk.len()));
        drop(release);
    }

    #[wasm_bindgen_test]
    async fn an_unreplaced_job_is_fed_every_byte_in_order() {
        let chunk: Vec<u8> = (0..(1u32 << 20)).map(|i| (i * 7 % 251) as u8).collect();
        let mut got = Vec::new();
        let mut pacer = Pacer::new();
        for half in chunk.chunks(chunk.len() / 2 + 3) {
            let done = pacer
                .feed(half, &|| false, &mut |piece: &[u8]| {
                    got.extend_from_slice(piece);
                    busy(0.2);
                    Ok::<(), ()>(())
                })
                .await;
            assert_eq!(done, Ok(true));
        }
        assert_eq!(got, chunk);
        // A feed error stops the chunk and is returned.
        let err = pacer
            .feed(&chunk, &|| false, &mut |_: &[u8]| Err("bad byte"))
            .await;
        assert_eq!(err, Err("bad byte"));
    }
}
