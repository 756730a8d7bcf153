//! The "Export report" button and its status line (spinner while the worker builds the trace
//! copy, then the file's name and size, or why it could not be exported, in plain words).

use yew::prelude::*;

use crate::export::ExportStatus;
use crate::units::{bytes, duration};

#[derive(Properties, PartialEq)]
pub struct ExportProps {
    pub status: ExportStatus,
    pub on_export: Callback<()>,
}

#[function_component]
pub fn ExportButton(props: &ExportProps) -> Html {
    let working = matches!(props.status, ExportStatus::Working { .. });
    let onclick = {
        let on_export = props.on_export.clone();
        Callback::from(move |_| on_export.emit(()))
    };
    let state = match &props.status {
        ExportStatus::Idle => "idle",
        ExportStatus::Working { .. } => "working",
        ExportStatus::Done(_) => "done",
        ExportStatus::Failed(_) => "failed",
    };
    html! {
        <span class="export" data-testid="export" data-state={state}>
            <button class="export-button" data-testid="export-report" disabled={working} {onclick}
                title="Download one self-contained HTML file (app, results and a copy of the trace) that opens offline">
                { "Export report" }
            </button>
            { match &props.status {
                ExportStatus::Idle => html! {},
                ExportStatus::Working { stage } => html! {
                    <span class="export-status" data-testid="export-status"><span class="spinner"></span>{ " " }{ stage }</span>
                },
                ExportStatus::Done(d) => html! {
                    <span class="export-status" data-testid="export-status" data-bytes={d.bytes.to_string()}
                        data-millis={format!("{:.0}", d.millis)}>
                        { format!("Saved {} ({}, {}; embeds {}).", d.file_name, bytes(d.bytes),
                            duration((d.millis * 1e6) as u64), d.copy) }
                    </span>
                },
                ExportStatus::Failed(why) => html! {
                    <span class="export-status error" data-testid="export-error" role="alert">{ why }</span>
                },
            } }
        </span>
    }
}
