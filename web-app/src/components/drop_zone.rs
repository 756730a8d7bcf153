//! The drop zone and file picker. Hands the chosen `File` to the app; reads nothing itself.

use wasm_bindgen::JsCast;
use web_sys::{DragEvent, File, HtmlInputElement};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct DropZoneProps {
    pub on_file: Callback<File>,
    /// Smaller, one-line form once results are shown.
    #[prop_or_default]
    pub compact: bool,
}

#[function_component]
pub fn DropZone(props: &DropZoneProps) -> Html {
    let hovering = use_state(|| false);
    let ondragover = {
        let hovering = hovering.clone();
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            hovering.set(true);
        })
    };
    let ondragleave = {
        let hovering = hovering.clone();
        Callback::from(move |_: DragEvent| hovering.set(false))
    };
    let ondrop = {
        let hovering = hovering.clone();
        let on_file = props.on_file.clone();
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            hovering.set(false);
            if let Some(file) = e
                .data_transfer()
                .and_then(|d| d.files())
                .and_then(|f| f.get(0))
            {
                on_file.emit(file);
            }
        })
    };
    let onchange = {
        let on_file = props.on_file.clone();
        Callback::from(move |e: Event| {
            let Some(input) = e
                .target()
                .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
            else {
                return;
            };
            if let Some(file) = input.files().and_then(|f| f.get(0)) {
                on_file.emit(file);
            }
            // Picking the same file again should load it again.
            input.set_value("");
        })
    };
    let class = classes!(
        "drop-zone",
        (*hovering).then_some("hover"),
        props.compact.then_some("compact")
    );
    html! {
        <div {class} {ondragover} {ondragleave} {ondrop} data-testid="drop-zone">
            <p>
                if props.compact { { "Drop another trace here, or " } }
                else { <strong>{ "Drop a block-I/O trace here" }</strong><br/>{ "or " } }
                <label class="button">
                    { "choose a file" }
                    <input type="file" data-testid="file-input" {onchange} />
                </label>
            </p>
            if !props.compact {
                <p class="hint">
                    { "blktrace, blkparse, tracefs, MSR, SPC, Alibaba, Tencent, fio iolog, vscsi, \
                       oracleGeneral or .bst, also .gz/.zst. The file is read in this tab and never \
                       uploaded." }
                </p>
            }
        </div>
    }
}
