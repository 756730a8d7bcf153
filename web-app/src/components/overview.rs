//! The Overview view: one card per headline number from the engine, the warnings a storage
//! engineer must see before trusting them, and the request-size histogram.
//!
//! Cards carry their raw value in `data-value` so the end-to-end tests compare them with
//! `blocksight stat --json` / `analyze --json` / `predict --json` exactly.
//!
//! The last three cards answer the product's question at a glance: the hot data size (the
//! hottest blocks serving [`HOT_SHARE`] of the I/O), the recommended cache size (the analysis'
//! recommendation, as `blocksight analyze` prints it and the Cache view uses it), and the
//! predicted speed-up of the Array view's first layout with an SSD cache of that size, which the
//! worker computes by replaying the trace ([`speedup_request`]).

use analyzer_core::analysis::devices::DeviceReport;
use analyzer_core::stat::rates_unmeasured_reason;
use yew::prelude::*;

use crate::charts::size_histogram::size_histogram;
use crate::components::chart_card::ChartCard;
use crate::state::PredictState;
use crate::units::{bytes, count, duration, pct};
use crate::worker::predict::{CacheParams, PredictRequest, PredictResult};
use crate::worker::protocol::Results;

/// The share of all I/O the hot data size card is stated at.
pub const HOT_SHARE: f64 = 0.90;

/// The speed-up card's prediction: the first layout of `base` (the Array view's request), with
/// and without an LRU write-through cache of the recommended size and the curve's line size.
/// `None` when the analysis has no recommendation.
pub fn speedup_request(r: &Results, base: PredictRequest) -> Option<PredictRequest> {
    let sizing = &r.analysis.cache_sizing;
    let size_bytes = sizing
        .recommendation
        .as_ref()?
        .recommended
        .as_ref()?
        .size_bytes;
    let first = base.configs.first()?.clone();
    Some(
        PredictRequest {
            configs: vec![first],
            cache: Some(CacheParams {
                size_bytes,
                line_bytes: sizing.line_bytes,
                policy: "lru".into(),
                mode: "wt".into(),
                ..CacheParams::default()
            }),
            ..base
        }
        .with_curve(false),
    )
}

#[derive(Properties, PartialEq)]
pub struct OverviewProps {
    pub results: std::rc::Rc<Results>,
    pub tables: Vec<String>,
    pub on_toggle_table: Callback<String>,
    #[prop_or_default]
    pub on_drawn: Callback<()>,
    /// The speed-up card's request (see [`speedup_request`]).
    #[prop_or_default]
    pub speedup: Option<PredictRequest>,
    /// The worker's last prediction (shown when it answers `speedup`).
    #[prop_or_default]
    pub predict: PredictState,
    /// Whether the whole trace can be re-read (false in a report with a sampled or no copy).
    #[prop_or_default]
    pub has_trace: bool,
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
    let mut out = vec![
        Card {
            key: "events",
            label: "Requests",
            value: count(s.events),
            raw: s.events.to_string(),
            detail: match rates_unmeasured_reason(s.duration_nanos, s.clock_resolution_nanos) {
                Some(why) => format!("rate {why}"),
                None => format!("{:.0} per second on average", s.iops),
            },
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
            value: if s.rates_measured {
                format!("{:.1} MiB/s", s.read_mib_per_sec + s.write_mib_per_sec)
            } else {
                "-".into()
            },
            raw: format!("{}", s.read_mib_per_sec + s.write_mib_per_sec),
            detail: match rates_unmeasured_reason(s.duration_nanos, s.clock_resolution_nanos) {
                Some(why) => why,
                None => format!(
                    "read {:.1} MiB/s, write {:.1} MiB/s",
                    s.read_mib_per_sec, s.write_mib_per_sec
                ),
            },
        },
        Card {
            key: "size",
            label: "Mean request",
            value: bytes(s.mean_request_bytes.round() as u64),
            raw: format!("{}", s.mean_request_bytes),
            detail: format!("{:.1}% sequential", s.sequential_fraction * 100.0),
        },
    ];
    let hot = &r.analysis.hot;
    if let Some(h) = hot
        .all
        .hot_sizes
        .iter()
        .find(|h| (h.io_fraction - HOT_SHARE).abs() < 1e-9)
    {
        out.push(Card {
            key: "hot-size",
            label: "Hot data",
            value: bytes(h.bytes),
            raw: h.bytes.to_string(),
            detail: format!(
                "{:.1}% of the footprint serves {:.0}% of the I/O{}",
                h.footprint_fraction * 100.0,
                HOT_SHARE * 100.0,
                if hot.exact {
                    ""
                } else {
                    " (estimated by sampling)"
                }
            ),
        });
    }
    let sizing = &r.analysis.cache_sizing;
    let rec = sizing.recommendation.as_ref();
    match rec.and_then(|rec| rec.recommended.as_ref().map(|p| (rec, p))) {
        Some((rec, p)) => {
            let why = if rec
                .knee
                .as_ref()
                .is_some_and(|k| k.size_bytes == p.size_bytes)
            {
                "the curve's knee".to_owned()
            } else {
                format!(
                    "90% of the achievable {:.1}%",
                    rec.achievable_hit_ratio * 100.0
                )
            };
            out.push(Card {
                key: "recommended-cache",
                label: "Recommended cache",
                value: bytes(p.size_bytes),
                raw: p.size_bytes.to_string(),
                detail: format!(
                    "{:.1}% LRU hit ratio with {} KiB lines ({why})",
                    p.hit_ratio * 100.0,
                    sizing.line_bytes >> 10
                ),
            });
        }
        None => out.push(Card {
            key: "recommended-cache",
            label: "Recommended cache",
            value: "–".into(),
            raw: String::new(),
            detail: "no recommendation: the hit-ratio curve has no usable shape".into(),
        }),
    }
    if let Some(l) = &r.analysis.trace_length {
        use analyzer_core::analysis::length::LengthVerdict;
        out.push(Card {
            key: "trace-length",
            label: "Trace length",
            value: match l.verdict {
                LengthVerdict::LongEnough => "long enough".into(),
                LengthVerdict::Borderline => "borderline".into(),
                LengthVerdict::TooShort => "too short".into(),
                LengthVerdict::Unknown => "-".into(),
            },
            raw: format!("{:?}", l.verdict),
            detail: l.advice.clone(),
        });
    }
    out
}

/// The speed-up card: the prediction when the worker has answered this request, a spinner
/// while it computes, or why there is none.
fn speedup_card(props: &OverviewProps) -> Html {
    let answer: Option<&PredictResult> = props
        .predict
        .result
        .as_deref()
        .filter(|r| Some(&r.request) == props.speedup.as_ref());
    let first = answer.and_then(|r| r.configs.first());
    let pair = first.and_then(|c| c.with_cache.as_ref().map(|w| (&c.without_cache, w)));
    let (value, raw, detail, without, with) = match (&props.speedup, pair) {
        (None, _) => (
            "–".to_owned(),
            String::new(),
            "no prediction: there is no recommended cache size to put in front of the array"
                .to_owned(),
            None,
            None,
        ),
        (Some(_), Some((without, with))) => (
            format!("{:.2}×", with.iops / without.iops.max(1e-9)),
            format!("{}", with.iops / without.iops.max(1e-9)),
            format!(
                "{:.0} → {:.0} IOPS; mean latency {} → {}",
                without.iops,
                with.iops,
                duration(without.latency.mean_nanos.round() as u64),
                duration(with.latency.mean_nanos.round() as u64)
            ),
            Some(without.iops),
            Some(with.iops),
        ),
        (Some(_), None) if !props.has_trace => (
            "–".to_owned(),
            String::new(),
            "not available: this report embeds only a sample of the trace (or none), and the \
             prediction replays the whole trace"
                .to_owned(),
            None,
            None,
        ),
        (Some(_), None) => match &props.predict.error {
            Some(e) if props.predict.computing.is_none() => (
                "–".to_owned(),
                String::new(),
                format!("the prediction failed: {e}"),
                None,
                None,
            ),
            _ => (
                "…".to_owned(),
                String::new(),
                "replaying the trace in the worker".to_owned(),
                None,
                None,
            ),
        },
    };
    let computing = props.speedup.is_some()
        && props.has_trace
        && pair.is_none()
        && (props.predict.computing.is_some() || props.predict.error.is_none());
    html! {
        <div class="card" data-testid="card-speedup" data-value={raw}
            data-iops-without={without.map(|v| v.to_string())}
            data-iops-with={with.map(|v| v.to_string())}>
            <div class="label">{ "Predicted speed-up" }</div>
            <div class="value">
                if computing { <span class="spinner"></span>{ " " } }
                { value }
            </div>
            <div class="detail">{ detail }</div>
        </div>
    }
}

/// The speed-up card's assumptions, stated under the cards.
fn speedup_assumptions(req: Option<&PredictRequest>) -> Option<String> {
    let req = req?;
    let layout = req.configs.first()?;
    let cache = req.cache.as_ref()?;
    Some(format!(
        "Predicted speed-up: {} (the Array view's first layout), with and without a {} SSD \
         cache (the recommended size; LRU, write-through, {} KiB lines, on {}, starting \
         cold); the whole trace replayed in closed loop at QD {}.",
        layout.label(),
        bytes(cache.size_bytes),
        cache.line_bytes >> 10,
        req.cache_devices.describe(),
        req.outstanding
    ))
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
    if let Some(order) = &s.order_warning {
        w.push(format!("Time went backwards: {order}."));
    }
    if s.truncated_tail_bytes > 0 {
        w.push(format!(
            "The file ends with {} that do not form a whole record (was the recorder stopped mid-write?).",
            bytes(s.truncated_tail_bytes)
        ));
    }
    if s.end_marker_missing {
        w.push(
            "The recording has no end marker: its recorder was stopped before it finished (killed?), so events after the last complete chunk are missing."
                .into(),
        );
    }
    if !s.footprint_exact {
        w.push("The footprint is estimated by spatial sampling (about 1% error).".into());
    }
    for note in &s.notes {
        w.push(format!("Note: {note}."));
    }
    w
}

/// The per-device table's cells, one row per device then the `others` row: the engine's
/// `analysis::devices` report (ranked and cut there), formatted as `analyze --per-device` prints
/// it. Empty for a trace of one device, whose cards already say it all.
pub fn device_cells(d: &DeviceReport) -> Vec<[String; 8]> {
    if d.devices < 2 {
        return Vec::new();
    }
    d.cells()
}

fn device_table(r: &Results) -> Html {
    let Some(d) = r.analysis.per_device.as_ref() else {
        return Html::default();
    };
    let rows = device_cells(d);
    if rows.is_empty() {
        return Html::default();
    }
    let head = [
        "device",
        "requests",
        "reads",
        "footprint",
        "hot 90%",
        "cache to buy",
        "hit ratio",
        "I/Os saved",
    ];
    html! {
        <section class="chart-card">
            <header><h3>{ format!("Devices ({}), by the back-end I/O a cache would save", count(d.devices)) }</h3></header>
            <p class="hint">{ format!("One LRU cache per device of its recommended size, {} lines; \
                I/Os saved = its hit ratio × the device's line accesses. ~ estimated from a sample.",
                bytes(d.line_bytes)) }</p>
            <div class="table-wrap">
                <table class="data-table" data-testid="table-devices">
                    <thead><tr>{ for head.iter().map(|h| html! { <th>{ *h }</th> }) }</tr></thead>
                    <tbody>
                        { for rows.iter().map(|cells| html! {
                            <tr>{ for cells.iter().map(|c| html! { <td>{ c }</td> }) }</tr>
                        }) }
                    </tbody>
                </table>
            </div>
        </section>
    }
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
                { speedup_card(props) }
            </div>
            if let Some(a) = speedup_assumptions(props.speedup.as_ref()) {
                <p class="hint" data-testid="speedup-assumptions">{ a }</p>
            }
            <ChartCard<crate::charts::size_histogram::SizeHistogram>
                chart={size_histogram(s)}
                as_table={props.tables.iter().any(|t| t == "sizes")}
                on_toggle_table={props.on_toggle_table.clone()}
                on_drawn={props.on_drawn.clone()} />
            { device_table(r) }
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::cache::chosen_cache;
    use crate::url_state::UrlState;
    use crate::worker::predict::{ArrayParams, Staging};
    use crate::worker::session::Session;
    use analyzer_core::decode::DecodeOptions;
    use wasm_bindgen_test::wasm_bindgen_test;

    use crate::test_support::SAMPLE_ZST;

    /// What the app shows for `bytes` loaded as `file_name`.
    fn results_of(bytes: &[u8], file_name: &str) -> Results {
        let mut s = Session::new(None, DecodeOptions::default());
        s.push(bytes).map_err(|e| e.plain_words()).expect("loads");
        s.finish()
            .map_err(|e| e.plain_words())
            .expect("finishes")
            .into_results(file_name.into(), bytes.len() as u64)
    }

    fn sample_results() -> Results {
        results_of(SAMPLE_ZST, "pgbench.tracefs.txt.zst")
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn issue_11_a_recording_without_its_end_marker_is_a_warning() {
        // A recording cut exactly after its last events chunk (a SIGKILLed recorder): no
        // partial record, only the missing end marker says events may be lost.
        let whole: &[u8] = include_bytes!("../../../tests/data/native/0001_fio_loop.bst");
        let (mut pos, mut cut_at) = (12, 0);
        while pos + 20 <= whole.len() {
            let len = u32::from_le_bytes([
                whole[pos + 8],
                whole[pos + 9],
                whole[pos + 10],
                whole[pos + 11],
            ]) as usize;
            if whole[pos + 4] == 2 {
                cut_at = pos + 20 + len;
            }
            pos += 20 + len;
        }
        assert!(cut_at > 0 && cut_at < whole.len());
        let says = |w: &[String]| w.iter().any(|x| x.contains("no end marker"));
        assert!(says(&warnings(&results_of(&whole[..cut_at], "killed.bst"))));
        assert!(!says(&warnings(&results_of(whole, "whole.bst"))));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_tracefs_trace_of_a_dm_device_loads_as_bios_with_a_note() {
        // What `cat trace_pipe` gives for a dm device: bios only, no request of its own (before
        // the action was chosen by the trace, the page could only show the command-line flag).
        let trace = "fio-1 [000] 1.000000: block_bio_queue: 252,3 R 0 + 128 [fio]\n\
                     fio-1 [000] 1.000010: block_bio_queue: 252,3 W 512 + 8 [fio]\n\
                     <idle>-0 [001] 1.000200: block_bio_complete: 252,3 R 64 + 64 [0]\n\
                     <idle>-0 [001] 1.000300: block_bio_complete: 252,3 W 512 + 8 [0]\n";
        let r = results_of(trace.as_bytes(), "dm.trace");
        assert_eq!(r.stat.events, 2);
        let w = warnings(&r);
        assert!(
            w.iter()
                .any(|x| x.starts_with("Note: no block_rq_issue record")),
            "{w:?}"
        );
    }

    fn array_request(r: &Results, url: &UrlState) -> PredictRequest {
        PredictRequest::new(url.arrays.clone(), Some(chosen_cache(r, url)), url.qd)
            .with_curve(url.curve)
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn the_device_table_is_the_engines_ranking_with_others_last() {
        // The app's load asks for the table; the one-device sample shows none.
        let r = sample_results();
        let d = r.analysis.per_device.as_ref().expect("the app asks for it");
        assert_eq!(d.devices, 1);
        assert!(device_cells(d).is_empty());
        // Three devices, the first two rows kept: the engine's order, then the others.
        let mut d = d.clone();
        let row = d.rows[0].clone();
        d.devices = 3;
        d.rows = vec![
            analyzer_core::analysis::devices::DeviceRow {
                device_name: "vol-a".into(),
                saved_line_ios: 12_345,
                ..row.clone()
            },
            analyzer_core::analysis::devices::DeviceRow {
                device_name: "vol-b".into(),
                recommended_bytes: None,
                ..row
            },
        ];
        d.others = Some(analyzer_core::analysis::devices::OtherDevices {
            devices: 1,
            requests: 7,
            ..Default::default()
        });
        let cells = device_cells(&d);
        assert_eq!(cells.len(), 3);
        assert_eq!(cells[0][0], "vol-a");
        assert_eq!(cells[0][7], "12,345");
        assert_eq!((cells[1][5].as_str(), cells[1][6].as_str()), ("-", "-"));
        assert_eq!(cells[2][0], "1 other");
        assert_eq!(cells[2][1], "7");
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn new_cards_and_the_speedup_request_follow_the_analysis() {
        let r = sample_results();
        let rec = r
            .analysis
            .cache_sizing
            .recommendation
            .as_ref()
            .and_then(|x| x.recommended.clone())
            .expect("the sample has a recommendation");
        let hot90 = r.analysis.hot.all.hot_sizes[1].clone();
        assert_eq!(hot90.io_fraction, HOT_SHARE);
        let cards = cards(&r);
        let raw = |key: &str| {
            cards
                .iter()
                .find(|c| c.key == key)
                .map(|c| c.raw.clone())
                .unwrap_or_default()
        };
        assert_eq!(raw("hot-size"), hot90.bytes.to_string());
        assert_eq!(raw("recommended-cache"), rec.size_bytes.to_string());

        // With default knobs the card asks exactly what the Array view asks in its first exact
        // pass (the chosen depth without the curve; on this small trace there is no estimate
        // before it): one answer serves both.
        let url = UrlState::default();
        let array = array_request(&r, &url);
        assert_eq!(
            speedup_request(&r, array.clone()),
            Some(array.staged(None, r.stat.events))
        );

        // Otherwise: the first layout only, the recommended size, LRU write-through, the depth
        // chosen on the Array view.
        let mut other = url.clone();
        other.arrays.push(ArrayParams {
            disks: 12,
            ..ArrayParams::default()
        });
        other.cache_bytes = Some(1 << 20);
        other.cache_policy = "arc".into();
        other.qd = 4;
        let req = speedup_request(&r, array_request(&r, &other)).expect("a request");
        assert_eq!(req.configs, url.arrays);
        assert_eq!(req.outstanding, 4);
        let cache = req.cache.expect("a cache");
        assert_eq!(cache.size_bytes, rec.size_bytes);
        assert_eq!((cache.policy.as_str(), cache.mode.as_str()), ("lru", "wt"));
        assert_eq!(cache.line_bytes, r.analysis.cache_sizing.line_bytes);
    }
}
