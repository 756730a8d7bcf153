//! The Cache view: hit-ratio curves by cache size, a size slider whose answer is read from the
//! precomputed curve (instant, no worker round trip), the sizing recommendation with its
//! stated assumptions, and the controls of the cache the worker simulates (product preset,
//! policy, line size, write mode, admission) with its answer and its hits and fills over time.

use std::rc::Rc;

use analyzer_core::cache::{Admission, PolicyKind, Preset, WriteMode};
use wasm_bindgen::JsCast;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

use crate::charts::hits_fills::HitsFillsChart;
use crate::charts::mrc::{Curve, MrcChart};
use crate::components::chart_card::ChartCard;
use crate::state::CacheSimState;
use crate::units::{bytes, count, duration, powers_of_two};
use crate::url_state::{dm_cache_blocks, kernel_modes, UrlState};
use crate::worker::cache_sim::{
    CacheSimResult, KernelModel, ModelRequest, ModelView, VIEW_LINE_SIZES,
};
use crate::worker::predict::CacheParams;
use crate::worker::protocol::Results;
use analyzer_core::job::simulate::model::refuse_generic_settings;
use analyzer_core::job::CacheSize;
use analyzer_core::mrc::MrcReport;

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

/// The simulation's answer: hit ratios and back-end reads and writes. An estimate from a
/// sample (the job's first stage) shows only its hit ratios, marked as such: the sample's
/// back-end counts are far off (a request's lines are sampled one by one, so its back-end
/// operations are not), and the exact simulation that follows brings them.
fn sim_card(r: &CacheSimResult) -> Html {
    let Some(run) = r.runs.first() else {
        return html! {};
    };
    let w = &run.result.whole;
    let b = &w.counts.backend;
    if r.runs_estimated {
        return html! {
            <div class="cards" data-testid="sim-result" data-final="false">
                <div class="card estimate" data-testid="sim-hit" data-value={format!("{}", w.ratios.line_hit_ratio.unwrap_or(0.0))}>
                    <div class="label">{ "Line hit ratio (estimate)" }</div>
                    <div class="value">{ format!("≈ {}", pct(w.ratios.line_hit_ratio)) }</div>
                    <div class="detail">{ format!("reads ≈ {}, writes ≈ {}", pct(w.ratios.read_line_hit_ratio), pct(w.ratios.write_line_hit_ratio)) }</div>
                </div>
                <div class="card estimate">
                    <div class="label">{ "Back-end reads and writes" }</div>
                    <div class="value"><span class="spinner"></span></div>
                    <div class="detail">{ "from the exact simulation, running" }</div>
                </div>
            </div>
        };
    }
    html! {
        <div class="cards" data-testid="sim-result" data-final="true">
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

/// One counter of a kernel model, under the name the kernel gives it (`dmsetup status`,
/// `stats_total/`), with its raw value in `data-value`.
fn counter_row(name: &str, value: u64, words: String) -> Html {
    html! {
        <tr data-testid={format!("model-{name}")} data-value={value.to_string()}>
            <th scope="row"><code>{ name }</code></th>
            <td class="num">{ count(value) }</td>
            <td>{ words }</td>
        </tr>
    }
}

/// A ratio card with its raw value in `data-value` (empty when undefined).
fn ratio_card(id: &str, label: &str, x: Option<f64>, detail: String) -> Html {
    html! {
        <div class="card" data-testid={id.to_owned()} data-value={x.map(|x| x.to_string()).unwrap_or_default()}>
            <div class="label">{ label.to_owned() }</div>
            <div class="value">{ pct(x) }</div>
            <div class="detail">{ detail }</div>
        </div>
    }
}

/// A kernel model's answer: its own counters, named as the kernel names them, with hit ratios
/// from the model's own definitions, and the run's assumptions (text nodes only). The worker
/// sends the core's view of the result (`ModelResult::view`), not the result itself.
fn model_card(r: &ModelView) -> Html {
    let cards = r.cards.iter().map(|c| match &c.value {
        Some(v) => html! {
            <div class="card" data-testid={c.id.clone()}>
                <div class="label">{ c.label.clone() }</div>
                <div class="value">{ v.clone() }</div>
                <div class="detail">{ c.detail.clone() }</div>
            </div>
        },
        None => ratio_card(&c.id, &c.label, c.ratio, c.detail.clone()),
    });
    let rows = r
        .counters
        .iter()
        .map(|c| counter_row(&c.name, c.value, c.meaning.clone()));
    html! {
        <div data-testid="model-result" data-model={r.request.model.name()}>
            <div class="cards">{ for cards }</div>
            <table class="data-table" data-testid="model-counters">
                <thead><tr><th>{ "counter" }</th><th>{ "value" }</th><th>{ "meaning" }</th></tr></thead>
                <tbody>{ for rows }</tbody>
            </table>
            <ul class="hint" data-testid="model-assumptions">
                { for r.assumptions.iter().map(|a| html! { <li>{ a.clone() }</li> }) }
            </ul>
        </div>
    }
}

/// How a policy's MiniSim curve was computed: `exact` when every miniature ran at rate 1, an
/// estimate from the first answer's one sample, else its lowest sampling rate.
fn curve_label(r: &MrcReport, estimate: bool) -> String {
    match r.sampling.as_ref().map(|s| s.rate) {
        Some(rate) if rate < 1.0 && estimate => {
            format!("estimate, {} sample", rate_words(rate))
        }
        Some(rate) if rate < 1.0 => format!("MiniSim, sampled ≥ {}", rate_words(rate)),
        _ => "MiniSim, exact".to_owned(),
    }
}

/// A sampling rate as a percentage with enough digits to be non-zero.
fn rate_words(rate: f64) -> String {
    let pct = rate * 100.0;
    if pct >= 10.0 {
        format!("{pct:.0}%")
    } else if pct >= 1.0 {
        format!("{pct:.1}%")
    } else {
        format!("{pct:.2}%")
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

/// The cache chosen on this view, which the Array view also puts in front of its layouts. The
/// line size is the link's, else the preset's, else the one of the analysis's LRU curve. With a
/// kernel model chosen it is `predict --preset dm-cache|bcache --mode M [--line-size B]`'s
/// cache: the Array view's replay runs the kernel's model as its tier.
pub fn chosen_cache(results: &Results, url: &UrlState) -> CacheParams {
    if let Some(model) = url.kernel_model() {
        let line = url
            .cache_line_bytes
            .filter(|_| model == KernelModel::DmCacheSmq);
        if let Ok(c) = CacheParams::choose(
            Some(model.product_name()),
            None,
            line,
            Some(&url.cache_mode),
            None,
            match url.cache_percent {
                Some(p) => CacheSize::FootprintPercent(p),
                None => CacheSize::Bytes(chosen_size(results, url)),
            },
        ) {
            return c;
        }
    }
    let preset = url.cache_preset.as_deref().and_then(Preset::from_name);
    CacheParams {
        size_bytes: chosen_size(results, url),
        line_bytes: url
            .cache_line_bytes
            .or(preset.map(|p| p.line_bytes))
            .unwrap_or(results.analysis.cache_sizing.line_bytes),
        policy: url.cache_policy.clone(),
        mode: url.cache_mode.clone(),
        preset: preset.map(|p| p.name.to_owned()),
        admission: url.cache_admission.clone(),
        footprint_percent: None,
    }
}

/// The kernel model chosen on this view, as `blocksight simulate --preset dm-cache|bcache`
/// takes it: the size (the slider's bytes, or `cpct`'s share of the footprint), the mode and
/// each model's own settings from the link; everything left out is the job's default. `None`
/// when no kernel model is chosen.
pub fn chosen_model(results: &Results, url: &UrlState) -> Option<ModelRequest> {
    let model = url.kernel_model()?;
    let size = match url.cache_percent {
        Some(p) => CacheSize::FootprintPercent(p),
        None => CacheSize::Bytes(chosen_size(results, url)),
    };
    let dm = model == KernelModel::DmCacheSmq;
    Some(ModelRequest {
        mode: Some(url.cache_mode.clone()),
        window_nanos: url.window_nanos(),
        block_bytes: url.cache_line_bytes.filter(|_| dm),
        origin_bytes: url.cache_origin_bytes.filter(|_| dm),
        sequential_cutoff_bytes: url.cache_seq_cutoff_bytes.filter(|_| !dm),
        bucket_bytes: url.cache_bucket_bytes.filter(|_| !dm),
        ..ModelRequest::new(model, size)
    })
}

/// The command line that runs the same request: `blocksight simulate TRACE --preset dm-cache
/// --cache-size 64MiB --mode wb`, sizes in bytes as the request holds them.
fn model_command(r: &ModelRequest) -> String {
    let mut c = format!(
        "blocksight simulate TRACE --preset {} --cache-size {}",
        r.model.product_name(),
        match r.cache_size {
            CacheSize::Bytes(b) => b.to_string(),
            CacheSize::FootprintPercent(p) => format!("{p}%"),
        }
    );
    let flags = [
        ("--mode", r.mode.clone()),
        ("--line-size", r.block_bytes.map(|b| b.to_string())),
        ("--origin-size", r.origin_bytes.map(|b| b.to_string())),
        (
            "--seq-cutoff",
            r.sequential_cutoff_bytes.map(|b| b.to_string()),
        ),
        ("--bucket-size", r.bucket_bytes.map(|b| b.to_string())),
    ];
    for (flag, value) in flags {
        if let Some(v) = value {
            c.push_str(&format!(" {flag} {v}"));
        }
    }
    if let Some((a, b)) = r.window_nanos {
        c.push_str(&format!(" --window {a}ns..{b}ns"));
    }
    c
}

/// Line sizes offered: the simulator's range, 4 KiB to 1 MiB.
fn line_sizes() -> impl Iterator<Item = u64> {
    VIEW_LINE_SIZES.into_iter()
}

/// bcache bucket sizes offered (`--bucket-size`): 4 KiB to 2 MiB (make-bcache's default
/// 512 KiB among them; a small cache needs small buckets, since bcache refuses fewer than 513).
fn bucket_sizes() -> impl Iterator<Item = u64> {
    powers_of_two(4 << 10, 2 << 20)
}

/// `1st`, `2nd`, `3rd`, `4th`, `11th`, `22nd`.
fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// The admission rule in words, with a preset's extra sequential cutoff.
fn admission_words(a: Admission, seq_cutoff_bytes: Option<u64>) -> String {
    let rule = match a {
        Admission::Always => "every miss".to_owned(),
        Admission::NHit { n } => format!("on the {} access (nhit:{n})", ordinal(n)),
        Admission::Smq => "hot regions only (smq)".to_owned(),
        Admission::SeqCutoff { cutoff_bytes } => format!(
            "every miss except in sequential streams of {} or more",
            bytes(cutoff_bytes)
        ),
    };
    match seq_cutoff_bytes {
        Some(c) if !matches!(a, Admission::SeqCutoff { .. }) => {
            format!(
                "{rule}, except in sequential streams of {} or more",
                bytes(c)
            )
        }
        _ => rule,
    }
}

/// The admission rule as `--admission` spells it, with a preset's extra sequential cutoff:
/// `nhit:3 + seqcut 1.0 MiB`.
fn admission_short(a: Admission, seq_cutoff_bytes: Option<u64>) -> String {
    let rule = match a {
        Admission::SeqCutoff { cutoff_bytes } => format!("seqcut {}", bytes(cutoff_bytes)),
        other => other.label(),
    };
    match seq_cutoff_bytes {
        Some(c) if !matches!(a, Admission::SeqCutoff { .. }) => {
            format!("{rule} + seqcut {}", bytes(c))
        }
        _ => rule,
    }
}

/// The product preset's description: what it models, where the numbers come from and what is
/// assumed (static text from `analyzer_core::cache::Preset`, the same as docs/cache.md).
fn preset_info(p: &Preset) -> Html {
    html! {
        <div class="preset-info hint" data-testid="cache-preset-info">
            <p><strong>{ p.title }</strong>{ format!(": {} eviction, {} lines, {}, admits {}.",
                p.policy.name(), bytes(p.line_bytes), p.mode.description(),
                admission_words(p.admission, p.sequential_cutoff_bytes)) }</p>
            <p>{ "Sources: " }</p>
            <ul>{ for p.sources.iter().map(|s| html! { <li>{ *s }</li> }) }</ul>
            <p>{ "Assumptions: " }{ p.assumptions }</p>
        </div>
    }
}

/// Emits the URL changed by `f` from a `<select>` or `<input>`'s new value.
fn on_value(
    on_url: &Callback<UrlState>,
    url: &UrlState,
    f: impl Fn(&UrlState, String) -> Option<UrlState> + 'static,
) -> Callback<Event> {
    let on_url = on_url.clone();
    let url = url.clone();
    Callback::from(move |e: Event| {
        let Some(t) = e.target() else {
            return;
        };
        let value = if let Some(s) = t.dyn_ref::<HtmlSelectElement>() {
            s.value()
        } else if let Some(i) = t.dyn_ref::<HtmlInputElement>() {
            i.value()
        } else {
            return;
        };
        if let Some(u) = f(&url, value) {
            on_url.emit(u);
        }
    })
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
    let on_policy = on_value(&props.on_url, &props.url, |u, v| {
        Some(UrlState {
            cache_policy: v,
            ..u.clone()
        })
    });
    let on_mode = on_value(&props.on_url, &props.url, |u, v| {
        Some(UrlState {
            cache_mode: v,
            ..u.clone()
        })
    });
    let on_preset = on_value(&props.on_url, &props.url, |u, v| {
        Some(u.with_cache_preset((!v.is_empty()).then_some(v.as_str())))
    });
    let on_line = on_value(&props.on_url, &props.url, |u, v| {
        Some(UrlState {
            cache_line_bytes: v.parse().ok(),
            ..u.clone()
        })
    });
    let policies = policy_options().map(|p| {
        html! { <option value={p.name()} selected={p.name() == props.url.cache_policy}>{ p.name() }</option> }
    });
    let kernel = props.url.kernel_model();
    let mode_names: Vec<&'static str> = match kernel {
        Some(m) => kernel_modes(m).to_vec(),
        None => WriteMode::ALL.into_iter().map(|m| m.name()).collect(),
    };
    let modes = mode_names.into_iter().map(|m| {
        html! { <option value={m} selected={m == props.url.cache_mode}>{ m }</option> }
    });
    let preset = props
        .url
        .cache_preset
        .as_deref()
        .and_then(Preset::from_name);
    let preset = preset.filter(|_| kernel.is_none());
    // The kernels' own models first (what `simulate --preset dm-cache|bcache` runs), then the
    // generic presets, the approximations among them.
    let kernels = KernelModel::ALL.into_iter().rev().map(|m| {
        html! { <option value={m.product_name()} selected={Some(m) == kernel}>{ format!("{} ({})", m.product_name(), m.title()) }</option> }
    });
    let presets = Preset::ALL.into_iter().map(|p| {
        html! { <option value={p.name} selected={Some(p) == preset}>{ format!("{} — {}", p.name, p.title) }</option> }
    });
    let admission = props
        .url
        .cache_admission
        .as_deref()
        .and_then(|a| Admission::parse(a).ok());
    let admission_kind = match admission {
        None if preset.is_some() => "",
        None | Some(Admission::Always) => "always",
        Some(Admission::NHit { .. }) => "nhit",
        Some(Admission::Smq) => "smq",
        Some(Admission::SeqCutoff { .. }) => "seqcut",
    };
    let nhit_n = match admission {
        Some(Admission::NHit { n }) => n,
        _ => 2,
    };
    let seqcut_bytes = match admission {
        Some(Admission::SeqCutoff { cutoff_bytes }) => cutoff_bytes,
        _ => 4 << 20,
    };
    let on_admission = on_value(&props.on_url, &props.url, move |u, v| {
        let has_preset = u.cache_preset.is_some();
        let spec = match v.as_str() {
            "always" if has_preset => Some("always".to_owned()),
            "nhit" => Some(format!("nhit:{nhit_n}")),
            "smq" => Some("smq".to_owned()),
            "seqcut" => Some(format!("seqcut:{seqcut_bytes}")),
            _ => None,
        };
        Some(UrlState {
            cache_admission: spec,
            ..u.clone()
        })
    });
    let on_nhit = on_value(&props.on_url, &props.url, |u, v| {
        let n = v.trim().parse::<u32>().ok().filter(|&n| n >= 1)?;
        Some(UrlState {
            cache_admission: Some(format!("nhit:{n}")),
            ..u.clone()
        })
    });
    let seqcut_error = use_state(|| None::<String>);
    // The size fields (the admission's cutoff, a kernel model's `--seq-cutoff` and
    // `--origin-size`): a size as typed (or empty) given to `set`; a typo, or a size `set`
    // refuses, says so and changes nothing.
    let size_field = |set: fn(&UrlState, Option<u64>) -> Option<UrlState>, what: &'static str| {
        let on_url = props.on_url.clone();
        let url = props.url.clone();
        let seqcut_error = seqcut_error.clone();
        Callback::from(move |e: Event| {
            let Some(i) = e
                .target()
                .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
            else {
                return;
            };
            let text = i.value();
            let size = match text.trim() {
                "" => Ok(None),
                t => analyzer_core::units::parse_size(t).map(Some),
            };
            match size.ok().and_then(|b| set(&url, b)) {
                Some(u) => {
                    seqcut_error.set(None);
                    on_url.emit(u);
                }
                None => seqcut_error.set(Some(format!(
                    "{what}: {text:?} is not a size like 4MiB or 512KiB"
                ))),
            }
        })
    };
    let on_kernel_seq = size_field(
        |u, b| {
            Some(UrlState {
                cache_seq_cutoff_bytes: b,
                ..u.clone()
            })
        },
        "sequential cutoff",
    );
    let on_kernel_origin = size_field(
        |u, b| {
            Some(UrlState {
                cache_origin_bytes: b,
                ..u.clone()
            })
        },
        "origin size",
    );
    let on_bucket = on_value(&props.on_url, &props.url, |u, v| {
        Some(UrlState {
            cache_bucket_bytes: v.parse().ok(),
            ..u.clone()
        })
    });
    let on_percent = on_value(&props.on_url, &props.url, |u, v| {
        let p = match v.trim() {
            "" => None,
            t => Some(
                t.parse::<f64>()
                    .ok()
                    .filter(|p| p.is_finite() && *p > 0.0 && *p <= 100.0)?,
            ),
        };
        Some(UrlState {
            cache_percent: p,
            ..u.clone()
        })
    });
    let on_seqcut = size_field(
        |u, b| {
            let a = Admission::parse(&format!("seqcut:{}", b?)).ok()?;
            Some(UrlState {
                cache_admission: Some(a.label()),
                ..u.clone()
            })
        },
        "sequential cutoff",
    );
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
                cache_percent: None,
                ..url.clone()
            });
        })
    };
    let wanted = chosen_cache(&props.results, &props.url);
    let wanted_window = props.url.window_nanos();
    let own_result = props
        .sim
        .result
        .as_ref()
        .filter(|r| r.request.cache == wanted && r.request.window_nanos == wanted_window)
        .filter(|_| kernel.is_none());
    // A new line size, mode, policy or preset: the estimate computed ahead for it (the same
    // numbers its own first stage will bring), until that stage answers.
    let variant = match own_result {
        Some(_) => None,
        None => props.sim.variants.iter().find(|v| {
            v.request.cache == wanted && v.request.window_nanos == wanted_window && kernel.is_none()
        }),
    };
    let sim_result = own_result.or(variant);
    // How many caches one control away from the chosen one would answer at once.
    let variants_ready = props.sim.variants_of_latest();
    // The chosen policy's curve answers a new size or policy at once (an estimate: no
    // admission rule), while the worker simulates it.
    let curves_estimated = props.sim.refining.is_some();
    let chosen_policy = props.url.cache_policy.as_str();
    // A variant's answer carries its policy's curve at its line size and mode.
    let policy_curve = variant
        .and_then(|v| v.curves.first())
        .or_else(|| {
            props
                .sim
                .curves
                .as_ref()
                .and_then(|c| c.iter().find(|r| r.policy == chosen_policy))
        })
        .map(Curve::from_report);
    let curve_answer = policy_curve
        .as_ref()
        .map(|c| c.hit_ratio_at(size))
        .filter(|_| kernel.is_none());
    let mut curves = vec![Curve {
        policy: if kernel.is_some() {
            format!("{} (exact; generic, not the kernel model)", curve.policy)
        } else {
            format!("{} (exact)", curve.policy)
        },
        ..curve
    }];
    if let Some(more) = &props.sim.curves {
        curves.extend(more.iter().map(|r| Curve {
            policy: format!("{} ({})", r.policy, curve_label(r, curves_estimated)),
            ..Curve::from_report(r)
        }));
    }
    let curves_rate = props.sim.curves.as_ref().and_then(|c| {
        c.iter()
            .filter_map(|r| r.sampling.as_ref().map(|s| s.rate))
            .reduce(f64::min)
    });
    let effective = wanted.sim_config(None).map_err(|e| e.to_string());
    let line_choices: Vec<u64> = if kernel.is_some() {
        dm_cache_blocks().collect()
    } else {
        line_sizes().collect()
    };
    let lines = line_choices.into_iter().map(|l| {
        html! { <option value={l.to_string()} selected={l == wanted.line_bytes}>{ bytes(l) }</option> }
    });
    let wanted_model = chosen_model(&props.results, &props.url);
    let model_result = props
        .sim
        .model
        .as_ref()
        .filter(|r| Some(&r.request) == wanted_model.as_ref());
    let bucket_bytes = props
        .url
        .cache_bucket_bytes
        .unwrap_or(analyzer_core::cache::bcache::DEFAULT_BUCKET_BYTES);
    let buckets = bucket_sizes().map(|b| {
        html! { <option value={b.to_string()} selected={b == bucket_bytes}>{ bytes(b) }</option> }
    });
    // Why the generic simulator's settings are off: the CLI's own refusal, word for word.
    let generic_off = kernel.map(|m| {
        refuse_generic_settings(m, &["policy", "admission", "warm-up"])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    });
    let scope = match props.url.window {
        Some((a, b)) => format!(
            "the window {} to {}",
            duration((a * 1e9) as u64),
            duration((b * 1e9) as u64)
        ),
        None => "the whole trace".to_owned(),
    };
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
                <span class="answer" data-testid="cache-size-value" data-value={size.to_string()}>{ bytes(size) }</span>
                <p class="answer-line" data-testid="cache-prediction" data-value={format!("{hit}")}>
                    { format!("An {} cache of {} ({}-byte lines) would serve {:.1}% of line accesses",
                        report.policy.to_uppercase(), bytes(size), report.line_bytes, hit * 100.0) }
                    if let Some(r) = rec { { format!(", of {:.1}% achievable with a cache as large as the footprint ({}).",
                        r.achievable_hit_ratio * 100.0, bytes(r.footprint_bytes)) } }
                </p>
                <p class="cache-controls">
                    <label>{ "Product " }
                        <select data-testid="cache-preset" onchange={on_preset}>
                            <option value="" selected={preset.is_none() && kernel.is_none()}>{ "none (custom)" }</option>
                            { for kernels }
                            { for presets }
                        </select></label>
                    <label title={generic_off.clone().unwrap_or_default()}>{ " policy " }
                        <select data-testid="cache-policy" onchange={on_policy} disabled={kernel.is_some()}>{ for policies }</select></label>
                    if kernel != Some(KernelModel::Bcache) {
                        <label>{ if kernel.is_some() { " block size " } else { " line size " } }
                            <select data-testid="cache-line" onchange={on_line}>{ for lines }</select></label>
                    }
                    <label>{ " write mode " }
                        <select data-testid="cache-mode" onchange={on_mode}>{ for modes }</select></label>
                    <label title={generic_off.clone().unwrap_or_default()}>{ " admission " }
                        <select data-testid="cache-admission" onchange={on_admission} disabled={kernel.is_some()}>
                            if let Some(p) = preset {
                                <option value="" selected={admission_kind.is_empty()}>
                                    { format!("the preset's: {}", admission_short(p.admission, p.sequential_cutoff_bytes)) }</option>
                            }
                            <option value="always" selected={admission_kind == "always"}>{ "always" }</option>
                            <option value="nhit" selected={admission_kind == "nhit"}>{ "nhit:N" }</option>
                            <option value="smq" selected={admission_kind == "smq"}>{ "smq" }</option>
                            <option value="seqcut" selected={admission_kind == "seqcut"}>{ "seqcut:SIZE" }</option>
                        </select></label>
                    if admission_kind == "nhit" && kernel.is_none() {
                        <label>{ " N " }<input type="number" min="1" max="255" size="3" data-testid="cache-nhit"
                            value={nhit_n.to_string()} onchange={on_nhit} /></label>
                    }
                    if admission_kind == "seqcut" && kernel.is_none() {
                        <label>{ " cutoff " }<input type="text" size="8" data-testid="cache-seqcut"
                            value={bytes(seqcut_bytes)} onchange={on_seqcut} /></label>
                    }
                </p>
                if let Some(model) = kernel {
                    <p class="cache-controls" data-testid="cache-kernel-controls">
                        <label>{ "or a share of the footprint " }
                            <input type="number" min="0" max="100" step="any" size="5" data-testid="cache-percent"
                                value={props.url.cache_percent.map(|p| p.to_string()).unwrap_or_default()}
                                placeholder="–" onchange={on_percent} />{ " % " }</label>
                        if model == KernelModel::DmCacheSmq {
                            <label>{ " origin size " }
                                <input type="text" size="10" data-testid="cache-origin"
                                    value={props.url.cache_origin_bytes.map(bytes).unwrap_or_default()}
                                    placeholder="as measured" onchange={on_kernel_origin} /></label>
                        } else {
                            <label>{ " sequential cutoff " }
                                <input type="text" size="8" data-testid="cache-kernel-seqcut"
                                    value={bytes(props.url.cache_seq_cutoff_bytes.unwrap_or(analyzer_core::cache::bcache::DEFAULT_SEQUENTIAL_CUTOFF_BYTES))}
                                    onchange={on_kernel_seq} /></label>
                            <label>{ " bucket size " }
                                <select data-testid="cache-bucket" onchange={on_bucket}>{ for buckets }</select></label>
                        }
                    </p>
                    <p class="hint" data-testid="cache-generic-off">{ format!("Policy, admission and warm-up are off: {}.", generic_off.clone().unwrap_or_default()) }</p>
                }
                if let Some(e) = (*seqcut_error).clone() { <p class="error" role="alert">{ e }</p> }
                if let Some((name, settings)) = &props.url.cache_preset_fallback {
                    <p class="notice" data-testid="cache-preset-fallback">{
                        format!("This link named {name:?} with settings only the generic approximation has ({}), as links made before {name} meant the kernel's model here did: it opened {}, the approximation. Choose \"{name}\" in Product for the kernel's own model (what `blocksight simulate --preset {name}` runs).",
                            settings.join(", "), props.url.cache_preset.clone().unwrap_or_default())
                    }</p>
                }
                <p class="hint" data-testid="cache-effective">{
                    match (&wanted_model, &effective) {
                        (Some(r), _) => format!("Runs the kernel's own model, the same job as `{}` (settings left out are its defaults). The Array view's cache tier is this model too, with predict's defaults for the settings beyond size, block size and mode.", model_command(r)),
                        (None, Ok(c)) => format!("Simulated: {} of {} lines of {}, {} eviction, {}, admitting {}. The policy, line size, mode and admission are also the Array view's cache tier.",
                            bytes(c.capacity_lines * c.line_bytes), count(c.capacity_lines), bytes(c.line_bytes),
                            c.policy.name(), c.mode.description(), admission_words(c.admission, c.sequential_cutoff_bytes)),
                        (None, Err(e)) => e.clone(),
                    }
                }</p>
                if let Some(p) = preset { { preset_info(&p) } }
                <p class="hint">
                    if kernel.is_some() { { "The curve and its answer above are the generic LRU simulation's, not the kernel model's (the model runs one size at a time, below). " } }
                    { "The curve's answer above assumes a write-back, write-allocate LRU cache; back-end I/O saved equals the hit ratio (destaging of dirty lines is not counted). " }
                    if let Some(rate) = sampled { { format!("Curve estimated from a {:.2}% spatial sample (SHARDS).", rate * 100.0) } }
                </p>
            </section>
            if let (Some(model), Some(request)) = (kernel, &wanted_model) {
                <section class="chart-card" data-testid="cache-sim" data-computing={computing.to_string()}
                    data-window-nanos={request.window_nanos.map(|(a, b)| format!("{a}-{b}")).unwrap_or_default()}>
                    <h3>{ format!("The kernel's model on {scope}: {} ({}), {}, {}",
                        model.product_name(), model.title(),
                        request.cache_size.label(),
                        props.url.cache_mode) }</h3>
                    if computing {
                        <p class="notice" data-testid="cache-computing"><span class="spinner"></span>{
                            format!(" Running the {} model in the worker… {:.0}%", model.product_name(), props.sim.model_progress * 100.0)
                        }</p>
                    }
                    if let Some(e) = &props.sim.error {
                        <p class="error-panel" role="alert">{ e.clone() }</p>
                    }
                    if let Some(r) = model_result { { model_card(r) } }
                    if let (Some(_), Some(ms), false) = (model_result, props.sim.elapsed_ms, computing) {
                        <p class="hint" data-testid="cache-sim-time" data-value={format!("{ms:.0}")}>{
                            format!("Computed in the worker in {} (the whole trace read once per pass of the job).", duration((ms * 1e6) as u64))
                        }</p>
                    }
                    <p class="hint">{ "The kernel's own model, cold from the cache's creation, one cache size at a time; its counters are the kernel's (docs/cache.md). The policies' curves below are the generic simulator's, not this model's." }</p>
                </section>
            } else {
            <section class="chart-card" data-testid="cache-sim" data-computing={computing.to_string()}
                data-variants={variants_ready.to_string()}
                data-variants-done={props.sim.variants_complete().to_string()}
                data-window-nanos={sim_result.and_then(|r| r.request.window_nanos).map(|(a, b)| format!("{a}-{b}")).unwrap_or_default()}>
                <h3>{ format!("Simulated on {scope}: {}{} of {} with {} KiB lines, {}",
                    wanted.preset.as_deref().map(|p| format!("{p} preset, ")).unwrap_or_default(),
                    wanted.policy, bytes(wanted.size_bytes), wanted.line_bytes >> 10, wanted.mode) }</h3>
                if computing {
                    <p class="notice" data-testid="cache-computing"><span class="spinner"></span>{ " Simulating in the worker…" }</p>
                }
                if let Some(e) = &props.sim.error {
                    <p class="error-panel" role="alert">{ e.clone() }</p>
                }
                if let Some(h) = curve_answer {
                    <p class="hint" data-testid="cache-curve-answer" data-value={h.to_string()}>{
                        format!("From the {chosen_policy} curve on this page: about {:.1}% of line accesses would hit at this size (an estimate, read at once, without the admission rule{}).",
                            h * 100.0, if sim_result.is_none() { "; the simulation follows" } else { "" })
                    }</p>
                }
                if let Some(r) = sim_result { { sim_card(r) } }
                if let Some(v) = variant {
                    <p class="notice" data-testid="cache-variant" data-value={v.estimate_rate.unwrap_or(1.0).to_string()}>{
                        match (v.runs_estimated, v.estimate_rate) {
                            (true, Some(rate)) => format!("Estimated ahead, while the previous choice was on the page: a {} spatial sample, the same estimate this choice's own first answer gives (shown at once; its exact simulation is running).", rate_words(rate)),
                            _ => "Computed ahead, while the previous choice was on the page: this cache simulated on every request (shown at once; the curves for it are being computed).".to_owned(),
                        }
                    }</p>
                }
                if let Some(rate) = sim_result.filter(|r| r.runs_estimated).and_then(|r| r.estimate_rate) {
                    <p class="notice" data-testid="cache-estimate" data-value={rate.to_string()}>{
                        format!("Estimate: a {} spatial sample of the lines ({} line accesses) ran in a cache scaled down by the same rate, with the sample's surplus or deficit of accesses counted as hits (MiniSim with SHARDS's correction; within about 0.01 of the exact hit ratio in our tests, docs/web.md). The exact simulation of every request is running and will replace it.",
                            rate_words(rate),
                            count(sim_result.and_then(|r| r.curves.first()).and_then(|c| c.sampling.as_ref()).map_or(0, |s| s.sampled_accesses)))
                    }</p>
                }
                if let Some(rate) = sim_result.and_then(|r| r.runs.first()).and_then(|r| r.sampled_rate) {
                    <p class="notice" data-testid="cache-sampled" data-value={rate.to_string()}>{
                        format!("Estimated: this cache would hold more lines than the tab simulates exactly ({} lines), so a {:.2}% spatial sample of the lines ran in a cache scaled down to match, and the counts are scaled back (MiniSim; about ±0.01 on the hit ratio). `blocksight simulate` computes it exactly.",
                            crate::units::count(crate::worker::cache_sim::MAX_EXACT_LINES), rate * 100.0)
                    }</p>
                }
                if let Some(rate) = curves_rate {
                    <p class="hint" data-testid="cache-curves-state"
                        data-value={if props.sim.refining.is_some() { "refining" } else { "done" }}
                        data-rate={rate.to_string()}
                        data-refined-ms={props.sim.refined_ms.map(|ms| format!("{ms:.0}")).unwrap_or_default()}>
                        if props.sim.refining.is_some() {
                            <span class="spinner"></span>
                            { format!(" The policies' curves are estimates from the same {} sample (MiniSim at that rate, every size); refining them with MiniSim's larger miniatures… {:.0}%",
                                rate_words(rate), props.sim.refine_progress * 100.0) }
                        } else if let Some(ms) = props.sim.refined_ms {
                            { format!("The policies' curves were refined in {} (lowest sampling rate {}).", duration((ms * 1e6) as u64), rate_words(rate)) }
                        } else {
                            { format!("The policies' curves: lowest sampling rate {}.", rate_words(rate)) }
                        }
                    </p>
                }
                if let (Some(_), Some(ms)) = (sim_result, props.sim.first_ms) {
                    <p class="hint" data-testid="cache-first-time" data-value={format!("{ms:.0}")}>{
                        match props.sim.elapsed_ms.filter(|_| !computing) {
                            Some(exact) if exact > ms => format!("First answer (an estimate) in {}, exact in {}.",
                                duration((ms * 1e6) as u64), duration((exact * 1e6) as u64)),
                            Some(_) => format!("Computed exactly in the worker in {}.", duration((ms * 1e6) as u64)),
                            None => format!("First answer (an estimate) in {}; simulating exactly…", duration((ms * 1e6) as u64)),
                        }
                    }</p>
                }
                if let (Some(_), Some(ms), false) = (sim_result, props.sim.elapsed_ms, computing) {
                    <p class="hint" data-testid="cache-sim-time" data-value={format!("{ms:.0}")}>{
                        format!("Exact answer {} after the request.", duration((ms * 1e6) as u64))
                    }</p>
                }
                <p class="hint">{ "Cold start; back-end writes include the final flush of dirty lines (write-back). Modes: ro read-only, wt write-through, wa write-around, wb write-back. The MiniSim curves are scaled-down simulations of each policy with the chosen line size and mode, without admission rules (docs/analysis.md)." }</p>
            </section>
            }
            if let Some(r) = sim_result {
                <ChartCard<HitsFillsChart> chart={HitsFillsChart::from_result(&r.runs[0].result)}
                    as_table={props.url.shows_table("hits-fills")}
                    on_toggle_table={props.on_toggle_table.clone()} />
            }
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
    fn admission_reads_in_words() {
        assert_eq!(
            admission_words(Admission::NHit { n: 3 }, Some(1 << 20)),
            "on the 3rd access (nhit:3), except in sequential streams of 1.0 MiB or more"
        );
        assert_eq!(
            admission_words(
                Admission::SeqCutoff {
                    cutoff_bytes: 4 << 20
                },
                Some(1 << 20)
            ),
            "every miss except in sequential streams of 4.0 MiB or more"
        );
        assert_eq!(
            admission_short(Admission::NHit { n: 3 }, Some(1 << 20)),
            "nhit:3 + seqcut 1.0 MiB"
        );
        assert_eq!(admission_short(Admission::Smq, None), "smq");
        assert_eq!(ordinal(2), "2nd");
        assert_eq!(ordinal(11), "11th");
        assert_eq!(ordinal(21), "21st");
    }

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
