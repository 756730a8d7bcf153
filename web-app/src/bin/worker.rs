//! The engine's Web Worker entry point: registers [`web_app::worker::EngineWorker`] with the
//! codec the UI thread uses.

use gloo_worker::Registrable;

fn main() {
    web_app::worker::EngineWorker::registrar()
        .encoding::<web_app::worker::codec::JsCodec>()
        .register();
}
