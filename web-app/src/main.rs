//! The UI thread's entry point: mounts the Yew app on `<body>`.

fn main() {
    yew::Renderer::<web_app::app::App>::new().render();
}
