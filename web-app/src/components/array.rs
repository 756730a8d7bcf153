//! The Array view: a layout editor for up to four RAID configurations side by side (level,
//! disks, disk preset, chunk, controller: Linux md with its settings, a generic hardware
//! controller's cache or a named controller preset) and their predicted IOPS, latency, per-disk
//! utilisation and bottleneck, with and without the SSD cache chosen in the Cache view, and the
//! IOPS-vs-latency curve of every layout over a sweep of outstanding I/Os. The numbers come from
//! the worker (the trace, or its brushed time window, replayed through `analyzer_core::array`);
//! while it computes, a spinner shows and the page stays live.

use analyzer_core::array::controller_preset::ControllerPreset;
use analyzer_core::array::{DiskPreset, RunResult, StandardLevel};
use analyzer_core::job::predict::CacheDevicesParams;
use wasm_bindgen::JsCast;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

use crate::charts::latency_curve::{latency_curve_chart, LatencyCurveChart};
use crate::components::chart_card::ChartCard;
use crate::state::PredictState;
use crate::units::{bytes, count, duration};
use crate::url_state::{cache_device_presets, UrlState, CACHE_DEVICE_COUNTS};
use crate::worker::predict::{
    ArrayParams, ConfigPrediction, PredictRequest, Staging, CONTROLLER_CACHE_BYTES, MAX_CONFIGS,
};

#[derive(Properties, PartialEq)]
pub struct ArrayProps {
    pub url: UrlState,
    pub on_url: Callback<UrlState>,
    pub predict: PredictState,
    /// The cache tier in words (size, policy, mode), as the prediction will use it.
    pub cache_label: String,
    pub on_toggle_table: Callback<String>,
}

const CHUNKS_KIB: [u64; 6] = [16, 32, 64, 128, 256, 512];
const DEPTHS: [u32; 7] = [1, 4, 8, 16, 32, 64, 128];
/// md's `stripe_cache_size` choices (md's default 256 first; its maximum is 32,768).
const STRIPE_CACHE_SIZES: [u32; 8] = [256, 512, 1024, 2048, 4096, 8192, 16384, 32768];
/// md's `group_thread_cnt` choices (0, md's default: `raid5d` alone).
const GROUP_THREADS: [u32; 5] = [0, 1, 2, 4, 8];
/// mdadm's RAID 10 layouts (`n2`, md's default, first).
const RAID10_LAYOUTS: [&str; 6] = ["n2", "f2", "o2", "n3", "f3", "o3"];
/// md's write-intent bitmap: mdadm's default (`auto`), none, or internal with 64 MiB chunks.
const BITMAPS: [&str; 3] = ["auto", "none", "internal"];

/// The controller select's value for a layout: `md`, `cache` (a generic hardware controller
/// with its write-back cache) or a controller preset's name.
fn controller_choice(a: &ArrayParams) -> String {
    match &a.controller.preset {
        Some(p) => p.clone(),
        None if a.controller_cache => "cache".into(),
        None => "md".into(),
    }
}

fn set_controller(a: &mut ArrayParams, v: &str) {
    let preset = ControllerPreset::by_name(v);
    a.controller.preset = preset.map(|p| p.name.to_owned());
    a.controller_cache = match preset {
        Some(p) => !p.software,
        None => v == "cache",
    };
}

/// One md setting's select: `text` and its `title`, the choices `values` with md's default
/// first, the current value (listed too when a link gave another), and the field it sets.
struct MdSelect<'a, T> {
    text: &'static str,
    title: &'static str,
    testid: &'static str,
    values: &'a [T],
    current: T,
    set: fn(&mut ArrayParams, &str),
}

impl<T: PartialEq + std::fmt::Display + Copy> MdSelect<'_, T> {
    fn view(&self, url: &UrlState, on_url: &Callback<UrlState>, i: usize) -> Html {
        let default = self.values[0];
        let extra = (!self.values.contains(&self.current)).then_some(self.current);
        let options = self.values.iter().copied().chain(extra).map(|v| {
            html! {
                <option value={v.to_string()} selected={v == self.current}>
                    { if v == default { format!("{v} (md's default)") } else { v.to_string() } }
                </option>
            }
        });
        html! {
            <label title={self.title}>{ self.text }{ " " }
                <select data-testid={format!("array-{}-{i}", self.testid)}
                    onchange={edit(url, on_url, i, self.set)}>{ for options }</select>
            </label>
        }
    }
}

/// The md settings of layout `i` that its level takes.
fn md_settings(url: &UrlState, on_url: &Callback<UrlState>, i: usize, a: &ArrayParams) -> Html {
    let c = &a.controller;
    let Some(level) = StandardLevel::from_name(&a.level).filter(|l| l.redundant()) else {
        return html! {};
    };
    let layout = MdSelect {
        text: "md layout",
        title: "mdadm --layout: near, far or offset copies",
        testid: "r10",
        values: &RAID10_LAYOUTS,
        current: c.md_raid10_layout.as_deref().unwrap_or(RAID10_LAYOUTS[0]),
        set: |a, v| a.controller.md_raid10_layout = (v != RAID10_LAYOUTS[0]).then(|| v.to_owned()),
    };
    let stripe_cache = MdSelect {
        text: "stripe_cache_size",
        title:
            "stripes of one page per member that md caches (/sys/block/mdX/md/stripe_cache_size)",
        testid: "sc",
        values: &STRIPE_CACHE_SIZES,
        current: c.md_stripe_cache_size.unwrap_or(STRIPE_CACHE_SIZES[0]),
        set: |a, v| {
            a.controller.md_stripe_cache_size =
                v.parse().ok().filter(|&n| n != STRIPE_CACHE_SIZES[0])
        },
    };
    let threads = MdSelect {
        text: "group_thread_cnt",
        title: "stripe-handling threads besides raid5d (/sys/block/mdX/md/group_thread_cnt)",
        testid: "gt",
        values: &GROUP_THREADS,
        current: c.md_group_thread_cnt.unwrap_or(GROUP_THREADS[0]),
        set: |a, v| {
            a.controller.md_group_thread_cnt = v.parse().ok().filter(|&n| n != GROUP_THREADS[0])
        },
    };
    let bitmap = MdSelect {
        text: "bitmap",
        title: "md's write-intent bitmap: mdadm's default (internal, 64 MiB chunks, on members over 100 GiB), none, or internal",
        testid: "bm",
        values: &BITMAPS,
        current: c.md_bitmap.as_deref().unwrap_or(BITMAPS[0]),
        set: |a, v| a.controller.md_bitmap = (v != BITMAPS[0]).then(|| v.to_owned()),
    };
    html! {
        <div class="array-editor md-settings" data-testid={format!("array-md-{i}")}>
            <strong>{ "Linux md settings" }</strong>
            if level == StandardLevel::Raid10 { { layout.view(url, on_url, i) } }
            if level.parity() {
                { stripe_cache.view(url, on_url, i) }
                { threads.view(url, on_url, i) }
            }
            { bitmap.view(url, on_url, i) }
        </div>
    }
}

/// The groups of a nested level (RAID 50/60, a controller's RAID 10), where the layout takes
/// a choice: the level's default first, then every count the engine builds.
fn groups_select(url: &UrlState, on_url: &Callback<UrlState>, i: usize, a: &ArrayParams) -> Html {
    let choices = a.group_choices();
    if choices.is_empty() {
        return html! {};
    }
    let default = if a.level == StandardLevel::Raid10.name() {
        format!("default ({} pairs)", a.disks / 2)
    } else {
        "default (2)".to_owned()
    };
    let options = std::iter::once((String::new(), default))
        .chain(
            choices
                .iter()
                .map(|g| (g.to_string(), format!("{g} of {} disks", a.disks / g))),
        )
        .map(|(value, text)| {
            let selected = a.groups.map(|g| g.to_string()).unwrap_or_default() == value;
            html! { <option value={value} {selected}>{ text }</option> }
        });
    html! {
        <label title="RAID 0 over this many mirrors or parity groups, the disks split evenly (--groups)">{ "Groups " }
            <select data-testid={format!("array-groups-{i}")}
                onchange={edit(url, on_url, i, |a, v| a.groups = v.parse().ok())}>{ for options }</select>
        </label>
    }
}

/// Failed disks (degraded mode): none, or the first `k` of the engine's failure order, each
/// one the layout still survives (`--failed`).
fn failed_select(url: &UrlState, on_url: &Callback<UrlState>, i: usize, a: &ArrayParams) -> Html {
    let order = a.failure_order();
    if order.is_empty() {
        return html! {};
    }
    // A link may have named other disks than the order's first: listed as given.
    let given = (!a.failed.is_empty() && a.failed[..] != order[..a.failed.len().min(order.len())])
        .then(|| a.failed.clone());
    let list = |d: &[u32]| d.iter().map(u32::to_string).collect::<Vec<_>>();
    let options = std::iter::once((String::new(), "none".to_owned()))
        .chain((1..=order.len()).map(|k| {
            let disks = list(&order[..k]);
            (
                disks.join("-"),
                format!(
                    "{k} (disk{} {})",
                    if k == 1 { "" } else { "s" },
                    disks.join(", ")
                ),
            )
        }))
        .chain(given.map(|g| {
            (
                list(&g).join("-"),
                format!(
                    "{} (disk{} {})",
                    g.len(),
                    if g.len() == 1 { "" } else { "s" },
                    list(&g).join(", ")
                ),
            )
        }))
        .map(|(value, text)| {
            let selected = list(&a.failed).join("-") == value;
            html! { <option value={value} {selected}>{ text }</option> }
        });
    html! {
        <>
        <label title="Degraded mode: these disks have failed (--failed); reads of their chunks are rebuilt from the survivors">{ "Failed " }
            <select data-testid={format!("array-failed-{i}")}
                onchange={edit(url, on_url, i, |a, v| {
                    a.failed = v.split('-').filter_map(|d| d.parse().ok()).collect()
                })}>{ for options }</select>
        </label>
        if !a.failed.is_empty() && a.software() {
            <label title="Linux md rebuilds the failed disks onto replacements while the load runs, yielding to it as md does (--rebuilding): the numbers are those during the rebuild">
                <input type="checkbox" data-testid={format!("array-rebuilding-{i}")} checked={a.rebuilding}
                    onchange={edit(url, on_url, i, |a, v| a.rebuilding = v == "1")} />
                { " rebuilding" }
            </label>
        }
        </>
    }
}

/// The callback that changes the cache tier's devices.
fn on_cache_devices(
    url: &UrlState,
    on_url: &Callback<UrlState>,
    f: fn(&mut CacheDevicesParams, &str),
) -> Callback<Event> {
    let url = url.clone();
    let on_url = on_url.clone();
    Callback::from(move |e: Event| {
        let mut u = url.clone();
        f(&mut u.cache_devices, &target_value(&e));
        on_url.emit(u);
    })
}

fn target_value(e: &Event) -> String {
    let Some(t) = e.target() else {
        return String::new();
    };
    if let Some(s) = t.dyn_ref::<HtmlSelectElement>() {
        return s.value();
    }
    t.dyn_ref::<HtmlInputElement>()
        .map(|i| {
            if i.type_() == "checkbox" {
                if i.checked() { "1" } else { "0" }.to_owned()
            } else {
                i.value()
            }
        })
        .unwrap_or_default()
}

/// The callback that changes one field of layout `i`.
fn edit(
    url: &UrlState,
    on_url: &Callback<UrlState>,
    i: usize,
    f: fn(&mut ArrayParams, &str),
) -> Callback<Event> {
    let url = url.clone();
    let on_url = on_url.clone();
    Callback::from(move |e: Event| {
        let v = target_value(&e);
        let mut u = url.clone();
        if let Some(a) = u.arrays.get_mut(i) {
            f(a, &v);
            // What the new level, disks or controller do not take goes (the engine's rule).
            a.prune_settings();
        }
        on_url.emit(u);
    })
}

/// A rebuild's duration to the minute (`19 h 53 min`, `42 min`).
fn rebuild_time(secs: f64) -> String {
    let min = (secs / 60.0).round().max(1.0) as u64;
    match (min / 60, min % 60) {
        (0, m) => format!("{m} min"),
        (h, 0) => format!("{h} h"),
        (h, m) => format!("{h} h {m} min"),
    }
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

fn lat(n: f64) -> String {
    duration(n.max(0.0).round() as u64)
}

/// IOPS, mean and p99 cells; the IOPS cell carries its exact value for tests (`data-value`).
fn run_cells(r: Option<&RunResult>, testid: String) -> Html {
    match r {
        None => html! { <><td>{ "–" }</td><td>{ "–" }</td><td>{ "–" }</td></> },
        Some(r) => html! {
            <>
                <td data-testid={testid} data-value={format!("{}", r.iops)}>{ format!("{:.0}", r.iops) }</td>
                <td>{ lat(r.latency.mean_nanos) }</td>
                <td>{ duration(r.latency.p99_nanos) }</td>
            </>
        },
    }
}

/// Per-disk utilisation as bars, array disks then cache devices; `failed` array disks say so,
/// or, while md rebuilds them (`rebuilding`), that they are the replacements being written.
fn disk_bars(r: &RunResult, tier: &str, failed: &[u32], rebuilding: bool) -> Html {
    let bars = r.disks.iter().filter(|d| d.tier.as_str() == tier).map(|d| {
        let w = (d.utilisation.clamp(0.0, 1.0) * 100.0).round();
        let lost = tier == "array" && failed.contains(&d.index) && !rebuilding;
        let replacement = tier == "array" && failed.contains(&d.index) && rebuilding;
        let (title, value) = if lost {
            (format!("{tier} disk {}: failed", d.index), "failed".to_owned())
        } else if replacement {
            (
                format!("{tier} disk {}: the replacement md is rebuilding, {} busy", d.index, pct(d.utilisation)),
                format!("{} rebuild", pct(d.utilisation)),
            )
        } else {
            (format!("{tier} disk {}: {} busy, {:.0} IOPS", d.index, pct(d.utilisation), d.iops), pct(d.utilisation))
        };
        html! {
            <div class={classes!("disk-bar", lost.then_some("failed"), replacement.then_some("replacement"))} {title}>
                <span class="disk-label">{ format!("{}", d.index) }</span>
                <span class="bar"><span class={classes!("fill", tier.to_owned())} style={format!("width:{w}%")}></span></span>
                <span class="disk-value">{ value }</span>
            </div>
        }
    });
    html! { <div class="disk-bars">{ for bars }</div> }
}

fn result_block(c: &ConfigPrediction) -> Html {
    let speedup = c
        .with_cache
        .as_ref()
        .map(|w| w.iops / c.without_cache.iops.max(1e-9));
    html! {
        <div class="array-result">
            <p class="hint">{ format!("{}, {} usable", c.description, bytes(c.capacity_bytes)) }</p>
            <h4>{ "Without cache" }</h4>
            <p class="answer-line">{ format!("{:.0} IOPS, mean {}, p99 {}", c.without_cache.iops,
                lat(c.without_cache.latency.mean_nanos), duration(c.without_cache.latency.p99_nanos)) }</p>
            <p class="hint" data-testid="bottleneck">{ format!("Bottleneck: {}", c.without_cache.bottleneck) }</p>
            if let Some(r) = c.rebuild_secs {
                <p class="hint" data-testid="rebuild" data-value={r.to_string()}>{
                    match &c.without_cache.rebuild {
                        Some(m) => format!("md rebuilds {}/s of each replacement beside this load: about {} for the whole disk",
                            bytes(m.bytes_per_sec as u64), rebuild_time(r)),
                        None => format!("Rebuild of one disk at this load: about {} (an estimate)", rebuild_time(r)),
                    }
                }</p>
            }
            { disk_bars(&c.without_cache, "array", &c.params.failed, c.params.rebuilding) }
            if let Some(w) = &c.with_cache {
                <h4>{ "With the SSD cache" }</h4>
                <p class="answer-line">{ format!("{:.0} IOPS, mean {}, p99 {}", w.iops,
                    lat(w.latency.mean_nanos), duration(w.latency.p99_nanos)) }
                    if let Some(s) = speedup { { format!(" ({s:.2}× IOPS)") } }
                </p>
                <p class="hint">{ format!("Bottleneck: {}", w.bottleneck) }</p>
                { disk_bars(w, "array", &c.params.failed, c.params.rebuilding) }
                { disk_bars(w, "cache", &[], false) }
            }
        </div>
    }
}

#[function_component]
pub fn ArrayView(props: &ArrayProps) -> Html {
    let url = &props.url;
    let computing = props.predict.computing.is_some();
    // The answer belongs to the layouts shown only if it was computed for them.
    let result = props.predict.result.as_ref().filter(|r| {
        r.request.configs == url.arrays
            && r.request.outstanding == url.qd
            && r.request.window_nanos == PredictRequest::window_from_secs(url.window)
    });
    let columns = url.arrays.iter().enumerate().map(|(i, a)| {
        let levels = StandardLevel::ALL.iter().map(|l| {
            html! { <option value={l.name()} selected={l.name() == a.level}>{ l.name() }</option> }
        });
        let presets = DiskPreset::ALL.iter().map(|p| {
            html! { <option value={p.name()} selected={p.name() == a.disk}>{ p.name() }</option> }
        });
        let chosen = controller_choice(a);
        let controllers = [
            ("md", "Linux md".to_owned(), "Linux software RAID: no controller, no cache".to_owned()),
            ("cache", format!("hardware, {} write-back cache", bytes(CONTROLLER_CACHE_BYTES)),
                "a hardware RAID controller with no published ceilings assumed".to_owned()),
        ]
        .into_iter()
        .chain(ControllerPreset::ALL.iter().map(|p| {
            // The product's short name (before its details), the preset's name, and the
            // whole description as the option's title.
            let short = p.product.split([',', '(', ':']).next().unwrap_or(p.product).trim();
            (p.name, format!("{short} ({})", p.name), p.product.to_owned())
        }))
        .map(|(value, text, title)| html! { <option value={value} selected={value == chosen} {title}>{ text }</option> });
        let chunks = CHUNKS_KIB.iter().map(|&k| {
            html! { <option value={(k << 10).to_string()} selected={k << 10 == a.chunk_bytes}>{ format!("{k} KiB") }</option> }
        });
        let remove = {
            let url = url.clone();
            let on_url = props.on_url.clone();
            Callback::from(move |_| {
                let mut u = url.clone();
                if u.arrays.len() > 1 {
                    u.arrays.remove(i);
                }
                on_url.emit(u);
            })
        };
        let answer = result.and_then(|r| r.configs.get(i));
        html! {
            <section class="chart-card array-config" data-testid={format!("array-config-{i}")}>
                <h3>{ format!("Layout {}", i + 1) }</h3>
                <div class="array-editor">
                    <label>{ "RAID level " }
                        <select data-testid={format!("array-level-{i}")}
                            onchange={edit(url, &props.on_url, i, |a, v| a.level = v.to_owned())}>{ for levels }</select>
                    </label>
                    <label>{ "Disks " }
                        <input type="number" min="1" max="64" value={a.disks.to_string()} data-testid={format!("array-disks-{i}")}
                            onchange={edit(url, &props.on_url, i, |a, v| if let Ok(n) = v.parse::<u32>() { a.disks = n.clamp(1, 64) })} />
                    </label>
                    <label>{ "Disk " }
                        <select data-testid={format!("array-disk-{i}")}
                            onchange={edit(url, &props.on_url, i, |a, v| a.disk = v.to_owned())}>{ for presets }</select>
                    </label>
                    <label>{ "Chunk " }
                        <select data-testid={format!("array-chunk-{i}")}
                            onchange={edit(url, &props.on_url, i, |a, v| if let Ok(c) = v.parse() { a.chunk_bytes = c })}>{ for chunks }</select>
                    </label>
                    <label>{ "Controller " }
                        <select data-testid={format!("array-controller-{i}")}
                            onchange={edit(url, &props.on_url, i, set_controller)}>{ for controllers }</select>
                    </label>
                    { groups_select(url, &props.on_url, i, a) }
                    { failed_select(url, &props.on_url, i, a) }
                    if url.arrays.len() > 1 {
                        <button class="link" onclick={remove}>{ "Remove" }</button>
                    }
                </div>
                if a.software() { { md_settings(url, &props.on_url, i, a) } }
                if let Some(c) = answer { { result_block(c) } }
            </section>
        }
    });
    let add = {
        let url = url.clone();
        let on_url = props.on_url.clone();
        Callback::from(move |_| {
            let mut u = url.clone();
            if u.arrays.len() < MAX_CONFIGS {
                let next = u.arrays.last().cloned().unwrap_or_default();
                u.arrays.push(next);
            }
            on_url.emit(u);
        })
    };
    let on_qd = {
        let url = url.clone();
        let on_url = props.on_url.clone();
        Callback::from(move |e: Event| {
            if let Ok(q) = target_value(&e).parse() {
                on_url.emit(UrlState {
                    qd: q,
                    ..url.clone()
                });
            }
        })
    };
    let on_curve = {
        let url = url.clone();
        let on_url = props.on_url.clone();
        Callback::from(move |e: Event| {
            on_url.emit(UrlState {
                curve: target_value(&e) == "1",
                ..url.clone()
            });
        })
    };
    // The curve arrives after the chosen depth's numbers (a second pass in the worker).
    let curve_chart = result
        .filter(|_| url.curve)
        .and_then(|r| latency_curve_chart(r));
    let curve_pending = url.curve && result.is_some_and(|r| !r.request.curve);
    let depths = DEPTHS.iter().map(
        |&d| html! { <option value={d.to_string()} selected={d == url.qd}>{ d.to_string() }</option> },
    );
    let table_rows = result.map(|r| {
        r.configs
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let busiest = c
                    .without_cache
                    .disks
                    .iter()
                    .filter(|d| d.tier == analyzer_core::array::Tier::Array)
                    .map(|d| d.utilisation)
                    .fold(0.0, f64::max);
                html! {
                    <tr data-testid={format!("array-row-{i}")}>
                        <td>{ format!("{}: {}", i + 1, c.params.label()) }</td>
                        <td>{ bytes(c.capacity_bytes) }</td>
                        { run_cells(Some(&c.without_cache), format!("iops-{i}")) }
                        <td>{ pct(busiest) }</td>
                        { run_cells(c.with_cache.as_ref(), format!("iops-cache-{i}")) }
                        <td>{ c.with_cache.as_ref().map(|w| format!("{:.2}×", w.iops / c.without_cache.iops.max(1e-9))).unwrap_or_default() }</td>
                        <td>{ c.without_cache.bottleneck.clone() }</td>
                    </tr>
                }
            })
            .collect::<Html>()
    });
    let devices = &url.cache_devices;
    let cache_counts = CACHE_DEVICE_COUNTS.iter().map(|&n| {
        html! { <option value={n.to_string()} selected={n == devices.count}>{ n.to_string() }</option> }
    });
    let cache_disks = cache_device_presets().map(|p| {
        html! { <option value={p.name()} selected={p.name() == devices.disk} title={p.description()}>{ p.name() }</option> }
    });
    html! {
        <div class="view array" data-testid="view-array" data-computing={computing.to_string()}>
            <section class="chart-card controls-card">
                <label>{ "Outstanding I/Os " }
                    <select data-testid="array-qd" onchange={on_qd}>{ for depths }</select>
                </label>
                <label>
                    <input type="checkbox" checked={url.curve} data-testid="array-curve" onchange={on_curve} />
                    { " IOPS-vs-latency curve (1 to 256 outstanding I/Os)" }
                </label>
                if url.arrays.len() < MAX_CONFIGS {
                    <button onclick={add} data-testid="array-add">{ "Add a layout" }</button>
                }
                <p class="hint">{ format!("SSD cache tier (from the Cache view): {}, on ", props.cache_label) }
                    <select data-testid="array-cache-disks" title="cache devices: RAID 1 when two, RAID 0 otherwise (--cache-disks)"
                        onchange={on_cache_devices(url, &props.on_url, |d, v| if let Ok(n) = v.parse() { d.count = n })}>{ for cache_counts }</select>
                    { " × " }
                    <select data-testid="array-cache-disk" title="the cache devices' model (--cache-disk)"
                        onchange={on_cache_devices(url, &props.on_url, |d, v| d.disk = v.to_owned())}>{ for cache_disks }</select>
                    { match url.cache_devices.count { 1 => " (one device).", 2 => " (RAID 1).", _ => " (RAID 0)." } }
                </p>
                if computing {
                    <p class="notice" data-testid="array-computing"><span class="spinner"></span>{
                        if curve_pending {
                            " Replaying the trace at 1 to 256 outstanding I/Os for the curve in the worker…"
                        } else {
                            " Replaying the trace through the layouts in the worker…"
                        }
                    }</p>
                }
                if let Some((a, b)) = url.window {
                    <p class="hint" data-testid="array-window">{ format!("Only the brushed time window is replayed: {} to {} after the first request.",
                        duration((a * 1e9) as u64), duration((b * 1e9) as u64)) }</p>
                }
                if let Some(r) = result.filter(|r| r.request.sample.is_some()) {
                    <p class="notice" data-testid="array-estimate">{ format!(
                        "An estimate: {} of the trace's {} requests replayed, in evenly spaced slices (the SSD cache tier saw every request){}. The exact replay follows.",
                        count(r.replayed_requests), count(r.trace_requests),
                        if r.request.cache.is_none() { "; the numbers with the cache come next" } else { "" }) }</p>
                }
                if let Some(e) = &props.predict.error {
                    <p class="error-panel" data-testid="array-error" role="alert">{ e.clone() }</p>
                }
            </section>
            if result.is_none() && !computing && props.predict.error.is_none() {
                <p class="notice" data-testid="array-no-trace">{ "No prediction: the array model replays the trace, and none is loaded in full (a report whose trace copy is sampled has only its results)." }</p>
            }
            <div class="array-columns">{ for columns }</div>
            if let Some(chart) = curve_chart {
                <ChartCard<LatencyCurveChart> {chart} as_table={url.shows_table("latency-curve")}
                    on_toggle_table={props.on_toggle_table.clone()} />
            }
            if let Some(rows) = table_rows {
                <section class="chart-card">
                    <h3>{ "Comparison" }</h3>
                    <table class="data-table" data-testid="array-table">
                        <thead><tr>
                            <th>{ "Layout" }</th><th>{ "Usable" }</th>
                            <th>{ "IOPS" }</th><th>{ "Mean" }</th><th>{ "p99" }</th><th>{ "Busiest disk" }</th>
                            <th>{ "IOPS with cache" }</th><th>{ "Mean" }</th><th>{ "p99" }</th><th>{ "Speed-up" }</th>
                            <th>{ "Bottleneck (no cache)" }</th>
                        </tr></thead>
                        <tbody>{ rows }</tbody>
                    </table>
                    if let Some(r) = result {
                        <p class="hint">{ if r.request.sample.is_some() {
                            format!("{} of {} requests replayed (an estimate).", count(r.replayed_requests), count(r.trace_requests))
                        } else {
                            format!("{} requests replayed.", count(r.replayed_requests))
                        } }</p>
                        <ul class="hint">{ for r.assumptions.iter().map(|a| html! { <li>{ a.clone() }</li> }) }</ul>
                    }
                </section>
            }
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use analyzer_core::job::predict::ControllerSettings;
    use wasm_bindgen_test::wasm_bindgen_test;

    /// The select's values round-trip, and a change of controller, followed by the pruning
    /// every edit ends with, drops md's settings as the engine's rule says
    /// (`ArrayParams::prune_settings`, tested in the core).
    #[wasm_bindgen_test(unsupported = test)]
    fn the_controller_select_maps_to_the_layout_and_back() {
        let values = ["md", "cache"]
            .into_iter()
            .chain(ControllerPreset::ALL.iter().map(|p| p.name));
        for v in values {
            let mut a = ArrayParams {
                controller: ControllerSettings {
                    md_stripe_cache_size: Some(4096),
                    ..ControllerSettings::default()
                },
                ..ArrayParams::default()
            };
            set_controller(&mut a, v);
            a.prune_settings();
            assert_eq!(controller_choice(&a), v);
            let md = v == "md" || v == "intel-vroc";
            assert_eq!(a.software(), md, "{v}");
            assert_eq!(a.controller.md_stripe_cache_size.is_some(), md, "{v}");
            if let Err(e) = a.config() {
                panic!("{v}: {e}");
            }
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn rebuild_times_read_in_hours_and_minutes() {
        assert_eq!(rebuild_time(10.0), "1 min");
        assert_eq!(rebuild_time(42.0 * 60.0 + 10.0), "42 min");
        assert_eq!(rebuild_time(3600.0), "1 h");
        assert_eq!(rebuild_time(71_572.0), "19 h 53 min");
    }
}
