//! The load progress bar: percent, MB/s, time left, detected format, and Cancel; below it the
//! load over time of what was read so far, redrawn as the worker reports it (the first chart a
//! user sees of a large trace, long before the full analysis).

use yew::prelude::*;

use crate::charts::timeline::{timeline_chart, Metric, TimelineChart};
use crate::components::chart_card::ChartCard;
use crate::state::Loading;
use crate::units::{bytes, count, eta};

#[derive(Properties, PartialEq)]
pub struct ProgressProps {
    pub loading: Loading,
    pub on_cancel: Callback<()>,
    /// Called when the live chart is first drawn.
    #[prop_or_default]
    pub on_drawn: Callback<()>,
}

#[function_component]
pub fn Progress(props: &ProgressProps) -> Html {
    let l = &props.loading;
    let percent = l.fraction().map(|f| f * 100.0);
    let rate = l.rate_bytes_per_sec();
    // The live chart's "Show as table" is local: the URL hash holds the views' state only.
    let as_table = use_state(|| false);
    let on_toggle_table = {
        let as_table = as_table.clone();
        Callback::from(move |_: String| as_table.set(!*as_table))
    };
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
            if let Some(t) = l.preview.as_deref().filter(|t| !t.bins.is_empty()) {
                <div data-testid="live-timeline">
                    <ChartCard<TimelineChart> chart={TimelineChart { live: true, ..timeline_chart(t, Metric::Iops, None) }}
                        as_table={*as_table} {on_toggle_table} on_drawn={props.on_drawn.clone()} />
                </div>
            }
        </section>
    }
}
