//! The Overview view: one card per headline number from the engine, the warnings a storage
//! engineer must see before trusting them, and the request-size histogram.
//!
//! Cards carry their raw value in `data-value` so the end-to-end tests compare them with
//! `blocksight stat --json` exactly.

use yew::prelude::*;

use crate::charts::size_histogram::size_histogram;
use crate::components::chart_card::ChartCard;
use crate::units::{bytes, count, duration, pct};
use crate::worker::protocol::Results;

#[derive(Properties, PartialEq)]
pub struct OverviewProps {
    pub results: std::rc::Rc<Results>,
    pub tables: Vec<String>,
    pub on_toggle_table: Callback<String>,
    #[prop_or_default]
    pub on_drawn: Callback<()>,
}

struct Card {
    key: &'static str,
    label: &'static str,
    value: String,
    raw: String,
    detail: String,
}

fn cards(r: &Results) -> Vec<Card> {
    let s = &r.stat;
    let data = s.reads + s.writes;
    vec![
        Card {
            key: "events",
            label: "Requests",
            value: count(s.events),
            raw: s.events.to_string(),
            detail: format!("{:.0} per second on average", s.iops),
        },
        Card {
            key: "duration",
            label: "Duration",
            value: duration(s.duration_nanos),
            raw: s.duration_nanos.to_string(),
            detail: "first to last request".into(),
        },
        Card {
            key: "reads",
            label: "Reads",
            value: pct(s.reads, data),
            raw: s.reads.to_string(),
            detail: format!("{} requests, {}", count(s.reads), bytes(s.read_bytes)),
        },
        Card {
            key: "writes",
            label: "Writes",
            value: pct(s.writes, data),
            raw: s.writes.to_string(),
            detail: format!("{} requests, {}", count(s.writes), bytes(s.write_bytes)),
        },
        Card {
            key: "footprint",
            label: "Footprint",
            value: bytes(s.footprint_bytes),
            raw: s.footprint_bytes.to_string(),
            detail: format!(
                "{} distinct 4 KiB blocks{}",
                count(s.footprint_blocks),
                if s.footprint_exact {
                    ""
                } else {
                    " (estimated by sampling)"
                }
            ),
        },
        Card {
            key: "throughput",
            label: "Mean throughput",
            value: format!("{:.1} MiB/s", s.read_mib_per_sec + s.write_mib_per_sec),
            raw: format!("{}", s.read_mib_per_sec + s.write_mib_per_sec),
            detail: format!(
                "read {:.1} MiB/s, write {:.1} MiB/s",
                s.read_mib_per_sec, s.write_mib_per_sec
            ),
        },
        Card {
            key: "size",
            label: "Mean request",
            value: bytes(s.mean_request_bytes.round() as u64),
            raw: format!("{}", s.mean_request_bytes),
            detail: format!("{:.1}% sequential", s.sequential_fraction * 100.0),
        },
    ]
}

fn warnings(r: &Results) -> Vec<String> {
    let s = &r.stat;
    let mut w = Vec::new();
    if s.dropped_events > 0 {
        w.push(format!(
            "The recorder lost {} events; numbers undercount the real load.",
            count(s.dropped_events)
        ));
    }
    if let Some(rate) = s.sampling_rate {
        w.push(format!(
            "This trace was spatially sampled when recorded (rate {rate}); counts are of the sample."
        ));
    }
    if s.skipped_records > 0 {
        w.push(format!(
            "{} records could not be read and were skipped.",
            count(s.skipped_records)
        ));
    }
    if s.truncated_tail_bytes > 0 {
        w.push(format!(
            "The file ends with {} that do not form a whole record (was the recorder stopped mid-write?).",
            bytes(s.truncated_tail_bytes)
        ));
    }
    if !s.footprint_exact {
        w.push("The footprint is estimated by spatial sampling (about 1% error).".into());
    }
    w
}

#[function_component]
pub fn Overview(props: &OverviewProps) -> Html {
    let r = &props.results;
    let s = &r.stat;
    let warnings = warnings(r);
    html! {
        <div class="view overview" data-testid="view-overview">
            <p class="trace-line" data-testid="trace-line">
                <strong data-testid="file-name">{ &r.file_name }</strong>
                { format!(" · {} · {}", bytes(r.file_bytes), r.format_description) }
                if !s.devices.is_empty() {
                    { " · devices: " }<span data-testid="devices">{ s.devices.join(", ") }</span>
                }
                if let Some(h) = &r.host { { " · host: " }<span data-testid="host">{ h }</span> }
            </p>
            if !warnings.is_empty() {
                <div class="warnings" data-testid="warnings">
                    { for warnings.iter().map(|w| html! { <p>{ "⚠ " }{ w }</p> }) }
                    if !s.skip_reasons.is_empty() {
                        <details>
                            <summary>{ "First reasons" }</summary>
                            <ul>{ for s.skip_reasons.iter().map(|r| html! { <li>{ r }</li> }) }</ul>
                        </details>
                    }
                </div>
            }
            <div class="cards">
                { for cards(r).into_iter().map(|c| html! {
                    <div class="card" data-testid={format!("card-{}", c.key)} data-value={c.raw}>
                        <div class="label">{ c.label }</div>
                        <div class="value">{ c.value }</div>
                        <div class="detail">{ c.detail }</div>
                    </div>
                }) }
            </div>
            <ChartCard<crate::charts::size_histogram::SizeHistogram>
                chart={size_histogram(s)}
                as_table={props.tables.iter().any(|t| t == "sizes")}
                on_toggle_table={props.on_toggle_table.clone()}
                on_drawn={props.on_drawn.clone()} />
        </div>
    }
}
