//! The load progress bar: percent, MB/s, time left, detected format, and Cancel.

use yew::prelude::*;

use crate::state::Loading;
use crate::units::{bytes, count, eta};

#[derive(Properties, PartialEq)]
pub struct ProgressProps {
    pub loading: Loading,
    pub on_cancel: Callback<()>,
}

#[function_component]
pub fn Progress(props: &ProgressProps) -> Html {
    let l = &props.loading;
    let percent = l.fraction().map(|f| f * 100.0);
    let rate = l.rate_bytes_per_sec();
    let cancel = {
        let cb = props.on_cancel.clone();
        Callback::from(move |_| cb.emit(()))
    };
    html! {
        <section class="progress" data-testid="progress">
            <p>
                { "Reading " }<strong>{ &l.file_name }</strong>
                if let Some(f) = &l.format { { " as " }{ f } }
            </p>
            <div class="bar"><div class="fill" style={format!("width:{:.1}%", percent.unwrap_or(0.0))}></div></div>
            <p class="numbers">
                { percent.map(|p| format!("{p:.0}% · ")).unwrap_or_default() }
                { format!("{} of {} · {:.1} MB/s · {} events", bytes(l.bytes_read),
                    l.bytes_total.map(bytes).unwrap_or_else(|| "?".into()), rate / 1e6, count(l.events)) }
                { l.seconds_left().map(|s| format!(" · {} left", eta(s))).unwrap_or_default() }
                <button onclick={cancel} data-testid="cancel">{ "Cancel" }</button>
            </p>
        </section>
    }
}
