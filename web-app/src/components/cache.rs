//! The Cache view: hit-ratio curves by cache size, a size slider whose answer is read from the
//! precomputed curve (instant, no worker round trip), and the sizing recommendation with its
//! stated assumptions.

use std::rc::Rc;

use analyzer_core::cache::{PolicyKind, WriteMode};
use wasm_bindgen::JsCast;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

use crate::charts::mrc::{Curve, MrcChart};
use crate::components::chart_card::ChartCard;
use crate::state::CacheSimState;
use crate::units::{bytes, count};
use crate::url_state::UrlState;
use crate::worker::cache_sim::CacheSimResult;
use crate::worker::predict::CacheParams;
use crate::worker::protocol::Results;

#[derive(Properties, PartialEq)]
pub struct CacheProps {
    pub results: Rc<Results>,
    pub url: UrlState,
    pub on_url: Callback<UrlState>,
    pub on_toggle_table: Callback<String>,
    #[prop_or_default]
    pub on_drawn: Callback<()>,
    /// The worker's simulation of the chosen cache and the policies' curves.
    #[prop_or_default]
    pub sim: CacheSimState,
}

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "–".to_owned(), |x| format!("{:.1}%", x * 100.0))
}

/// The simulation's answer: hit ratios and back-end reads and writes.
fn sim_card(r: &CacheSimResult) -> Html {
    let w = &r.sim.whole;
    let b = &w.counts.backend;
    html! {
        <div class="cards" data-testid="sim-result">
            <div class="card" data-testid="sim-hit" data-value={format!("{}", w.ratios.line_hit_ratio.unwrap_or(0.0))}>
                <div class="label">{ "Line hit ratio" }</div>
                <div class="value">{ pct(w.ratios.line_hit_ratio) }</div>
                <div class="detail">{ format!("reads {}, writes {}", pct(w.ratios.read_line_hit_ratio), pct(w.ratios.write_line_hit_ratio)) }</div>
            </div>
            <div class="card" data-testid="sim-backend-reads" data-value={b.read_ops.to_string()}>
                <div class="label">{ "Back-end reads" }</div>
                <div class="value">{ count(b.read_ops) }</div>
                <div class="detail">{ format!("{} (host: {} read requests)", bytes(b.read_bytes), count(w.counts.read.requests)) }</div>
            </div>
            <div class="card" data-testid="sim-backend-writes" data-value={b.write_ops.to_string()}>
                <div class="label">{ "Back-end writes" }</div>
                <div class="value">{ count(b.write_ops) }</div>
                <div class="detail">{ format!("{} (host: {} write requests)", bytes(b.write_bytes), count(w.counts.write.requests)) }</div>
            </div>
            <div class="card">
                <div class="label">{ "Back-end I/O saved" }</div>
                <div class="value">{ pct(w.ratios.backend_ops_reduction) }</div>
                <div class="detail">{ format!("{} fills, {} evictions ({} dirty)", count(w.counts.fills), count(w.counts.evictions), count(w.counts.dirty_evictions)) }</div>
            </div>
        </div>
    }
}

/// Slider steps: sizes are chosen on a square-root scale so small caches get resolution.
const STEPS: u32 = 1000;

fn size_from_step(step: u32, max: u64) -> u64 {
    let f = f64::from(step) / f64::from(STEPS);
    ((f * f) * max as f64).round() as u64
}

fn step_from_size(size: u64, max: u64) -> u32 {
    if max == 0 {
        return 0;
    }
    ((size as f64 / max as f64).clamp(0.0, 1.0).sqrt() * f64::from(STEPS)).round() as u32
}

/// The cache size chosen on this view: the slider's, else the recommendation, else a tenth of
/// the curve's range.
pub fn chosen_size(results: &Results, url: &UrlState) -> u64 {
    let report = &results.analysis.cache_sizing;
    let max = Curve::from_report(report).max_size();
    let default_size = report
        .recommendation
        .as_ref()
        .and_then(|r| r.recommended.as_ref())
        .map_or(max / 10, |p| p.size_bytes);
    url.cache_bytes.unwrap_or(default_size).min(max)
}

/// The cache tier the Array view puts in front of its layouts.
pub fn chosen_cache(results: &Results, url: &UrlState) -> CacheParams {
    CacheParams {
        size_bytes: chosen_size(results, url),
        line_bytes: results.analysis.cache_sizing.line_bytes,
        policy: url.cache_policy.clone(),
        mode: url.cache_mode.clone(),
    }
}

/// Online policies offered for the cache tier (the ones needing the future are left out).
fn policy_options() -> impl Iterator<Item = PolicyKind> {
    PolicyKind::ALL.into_iter().filter(|p| !p.needs_future())
}

#[function_component]
pub fn CacheView(props: &CacheProps) -> Html {
    let report = &props.results.analysis.cache_sizing;
    let curve = Curve::from_report(report);
    let max = curve.max_size();
    let rec = report.recommendation.as_ref();
    let size = chosen_size(&props.results, &props.url);
    let on_policy = {
        let on_url = props.on_url.clone();
        let url = props.url.clone();
        Callback::from(move |e: Event| {
            if let Some(s) = e
                .target()
                .and_then(|t| t.dyn_into::<HtmlSelectElement>().ok())
            {
                on_url.emit(UrlState {
                    cache_policy: s.value(),
                    ..url.clone()
                });
            }
        })
    };
    let on_mode = {
        let on_url = props.on_url.clone();
        let url = props.url.clone();
        Callback::from(move |e: Event| {
            if let Some(s) = e
                .target()
                .and_then(|t| t.dyn_into::<HtmlSelectElement>().ok())
            {
                on_url.emit(UrlState {
                    cache_mode: s.value(),
                    ..url.clone()
                });
            }
        })
    };
    let policies = policy_options().map(|p| {
        html! { <option value={p.name()} selected={p.name() == props.url.cache_policy}>{ p.name() }</option> }
    });
    let modes = WriteMode::ALL.into_iter().map(|m| {
        html! { <option value={m.name()} selected={m.name() == props.url.cache_mode}>{ m.name() }</option> }
    });
    let hit = curve.hit_ratio_at(size);
    let oninput = {
        let on_url = props.on_url.clone();
        let url = props.url.clone();
        Callback::from(move |e: InputEvent| {
            let Some(input) = e
                .target()
                .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
            else {
                return;
            };
            let step = input.value().parse::<u32>().unwrap_or(0);
            on_url.emit(UrlState {
                cache_bytes: Some(size_from_step(step, max)),
                ..url.clone()
            });
        })
    };
    let mut curves = vec![Curve {
        policy: format!("{} (exact)", curve.policy),
        ..curve
    }];
    if let Some(more) = &props.sim.curves {
        curves.extend(more.iter().map(|r| Curve {
            policy: format!("{} (MiniSim)", r.policy),
            ..Curve::from_report(r)
        }));
    }
    let wanted = chosen_cache(&props.results, &props.url);
    let sim_result = props
        .sim
        .result
        .as_ref()
        .filter(|r| r.request.cache == wanted);
    let computing = props.sim.computing.is_some();
    let chart = MrcChart {
        curves,
        marker_bytes: Some(size),
    };
    let sampled = report.sampling.as_ref().map(|s| s.rate);
    html! {
        <div class="view cache" data-testid="view-cache">
            <section class="chart-card controls-card">
                <label for="cache-size">{ "Cache size" }</label>
                <input id="cache-size" type="range" min="0" max={STEPS.to_string()}
                    value={step_from_size(size, max).to_string()} {oninput} data-testid="cache-size" />
                <span class="answer" data-testid="cache-size-value">{ bytes(size) }</span>
                <p class="answer-line" data-testid="cache-prediction" data-value={format!("{hit}")}>
                    { format!("An {} cache of {} ({}-byte lines) would serve {:.1}% of line accesses",
                        report.policy.to_uppercase(), bytes(size), report.line_bytes, hit * 100.0) }
                    if let Some(r) = rec { { format!(", of {:.1}% achievable with a cache as large as the footprint ({}).",
                        r.achievable_hit_ratio * 100.0, bytes(r.footprint_bytes)) } }
                </p>
                <p>
                    <label>{ "Policy for the Array view's cache tier " }
                        <select data-testid="cache-policy" onchange={on_policy}>{ for policies }</select></label>
                    <label>{ " write mode " }
                        <select data-testid="cache-mode" onchange={on_mode}>{ for modes }</select></label>
                </p>
                <p class="hint">
                    { "Assumes a write-back, write-allocate cache; back-end I/O saved equals the hit ratio (destaging of dirty lines is not counted). " }
                    if let Some(rate) = sampled { { format!("Curve estimated from a {:.2}% spatial sample (SHARDS).", rate * 100.0) } }
                </p>
            </section>
            <section class="chart-card" data-testid="cache-sim" data-computing={computing.to_string()}>
                <h3>{ format!("Simulated on the whole trace: {} of {} with {} KiB lines, {}", wanted.policy, bytes(wanted.size_bytes), wanted.line_bytes >> 10, wanted.mode) }</h3>
                if computing {
                    <p class="notice" data-testid="cache-computing"><span class="spinner"></span>{ " Simulating in the worker…" }</p>
                }
                if let Some(e) = &props.sim.error {
                    <p class="error-panel" role="alert">{ e.clone() }</p>
                }
                if let Some(r) = sim_result { { sim_card(r) } }
                <p class="hint">{ "Cold start; back-end writes include the final flush of dirty lines (write-back). Modes: ro read-only, wt write-through, wa write-around, wb write-back. The MiniSim curves are scaled-down simulations of each policy (docs/analysis.md)." }</p>
            </section>
            if let Some(r) = rec {
                <div class="cards">
                    if let Some(p) = &r.recommended {
                        <div class="card" data-testid="card-recommended" data-value={p.size_bytes.to_string()}>
                            <div class="label">{ "Recommended cache" }</div>
                            <div class="value">{ bytes(p.size_bytes) }</div>
                            <div class="detail">{ format!("{:.1}% hit ratio (larger of the knee and 90% of achievable)", p.hit_ratio * 100.0) }</div>
                        </div>
                    }
                    if let Some(p) = &r.knee {
                        <div class="card"><div class="label">{ "Knee of the curve" }</div>
                            <div class="value">{ bytes(p.size_bytes) }</div>
                            <div class="detail">{ format!("{:.1}% hit ratio", p.hit_ratio * 100.0) }</div></div>
                    }
                    if let Some(p) = &r.for_95pct_of_achievable {
                        <div class="card"><div class="label">{ "95% of achievable" }</div>
                            <div class="value">{ bytes(p.size_bytes) }</div>
                            <div class="detail">{ format!("{:.1}% hit ratio", p.hit_ratio * 100.0) }</div></div>
                    }
                    <div class="card"><div class="label">{ "Rule of thumb 5% / 10%" }</div>
                        <div class="value">{ format!("{} / {}", bytes(r.rule_of_thumb_5pct.size_bytes), bytes(r.rule_of_thumb_10pct.size_bytes)) }</div>
                        <div class="detail">{ format!("{:.1}% / {:.1}% hit ratio", r.rule_of_thumb_5pct.hit_ratio * 100.0, r.rule_of_thumb_10pct.hit_ratio * 100.0) }</div></div>
                </div>
            }
            <ChartCard<MrcChart> {chart} as_table={props.url.tables.iter().any(|t| t == "mrc")}
                on_toggle_table={props.on_toggle_table.clone()} on_drawn={props.on_drawn.clone()} />
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn slider_steps_round_trip() {
        let max = 10u64 << 30;
        for size in [0, 1 << 20, 1 << 30, max] {
            let back = size_from_step(step_from_size(size, max), max);
            let err = (back as f64 - size as f64).abs() / max as f64;
            assert!(err < 0.002, "{size} -> {back}");
        }
    }
}
