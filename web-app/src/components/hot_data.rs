//! The Hot data view: the load over time (with the brush that scopes every view to a time
//! window), the skew curve, the LBA × time heat map, request sizes and the hottest regions.

use std::rc::Rc;

use yew::prelude::*;

use crate::charts::heatmap::{heat_map_chart, HeatMapChart, HeatOps};
use crate::charts::size_histogram::{size_histogram, SizeHistogram};
use crate::charts::skew::{skew_chart, SkewChart};
use crate::charts::timeline::{timeline_chart, Metric, TimelineChart};
use crate::components::chart_card::ChartCard;
use crate::units::{bytes, count, pct};
use crate::url_state::UrlState;
use crate::worker::protocol::Results;

#[derive(Properties, PartialEq)]
pub struct HotDataProps {
    pub results: Rc<Results>,
    /// The unscoped results, for the timeline (the brush selects within the whole trace).
    pub full: Rc<Results>,
    pub url: UrlState,
    pub on_url: Callback<UrlState>,
    pub on_toggle_table: Callback<String>,
}

fn toggle(label: &str, selected: bool, onclick: Callback<MouseEvent>, testid: String) -> Html {
    html! {
        <button class={classes!("toggle", selected.then_some("selected"))} {onclick} data-testid={testid}>
            { label.to_owned() }
        </button>
    }
}

#[function_component]
pub fn HotData(props: &HotDataProps) -> Html {
    let r = &props.results;
    let a = &r.analysis;
    let url = &props.url;
    let metric = Metric::from_id(&url.metric);
    let heat = HeatOps::from_id(&url.heat);
    let set = |f: Rc<dyn Fn(&mut UrlState)>| {
        let on_url = props.on_url.clone();
        let url = url.clone();
        Callback::from(move |_: MouseEvent| {
            let mut u = url.clone();
            f(&mut u);
            on_url.emit(u);
        })
    };
    let metric_buttons = [Metric::Iops, Metric::MegabytesPerSec].map(|m| {
        let id = m.id();
        toggle(
            if m == Metric::Iops { "IOPS" } else { "MB/s" },
            m == metric,
            set(Rc::new(move |u| u.metric = id.into())),
            format!("metric-{id}"),
        )
    });
    let heat_buttons = [HeatOps::All, HeatOps::Reads, HeatOps::Writes].map(|h| {
        let id = h.id();
        toggle(
            id,
            h == heat,
            set(Rc::new(move |u| u.heat = id.into())),
            format!("heat-{id}"),
        )
    });
    let timeline: TimelineChart = timeline_chart(&props.full.analysis.timeline, metric, url.window);
    let span = timeline.span_secs();
    let on_brush = {
        let on_url = props.on_url.clone();
        let url = url.clone();
        Callback::from(move |sel: Option<(f64, f64)>| {
            let mut u = url.clone();
            // Milliseconds, as the URL hash writes them: the window analysed is the one a
            // copied link reproduces.
            let ms = |x: f64| (x * span * 1000.0).round() / 1000.0;
            u.window = sel.map(|(a, b)| (ms(a), ms(b)));
            on_url.emit(u);
        })
    };
    let maps = &a.heatmaps.maps;
    let device = (url.device as usize).min(maps.len().saturating_sub(1));
    let device_buttons = if maps.len() > 1 {
        maps.iter()
            .enumerate()
            .map(|(i, m)| {
                let idx = i as u32;
                toggle(
                    &m.device_name,
                    i == device,
                    set(Rc::new(move |u| u.device = idx)),
                    format!("device-{i}"),
                )
            })
            .collect::<Html>()
    } else {
        html! {}
    };
    let heat_chart: Option<HeatMapChart> = maps.get(device).map(|m| heat_map_chart(m, heat));
    let skew: SkewChart = skew_chart(&a.hot);
    let sizes: SizeHistogram = size_histogram(&r.stat);
    let as_table = |id: &str| url.tables.iter().any(|t| t == id);
    let hot80 = a
        .hot
        .all
        .hot_sizes
        .iter()
        .find(|h| (h.io_fraction - 0.8).abs() < 1e-9);
    html! {
        <div class="view hot" data-testid="view-hot">
            <div class="controls">
                <span>{ "Timeline: " }</span>{ for metric_buttons }
                if url.window.is_some() {
                    <button class="link" data-testid="clear-window" onclick={set(Rc::new(|u| u.window = None))}>
                        { "Clear time window" }
                    </button>
                }
            </div>
            <ChartCard<TimelineChart> chart={timeline} as_table={as_table("timeline")}
                on_toggle_table={props.on_toggle_table.clone()} on_brush={Some(on_brush)} />
            if let Some(h) = hot80 {
                <p class="insight" data-testid="hot80">
                    { format!("80% of block accesses go to the hottest {} ({} of the {} footprint).",
                        bytes(h.bytes), pct((h.footprint_fraction * 1e4) as u64, 10_000), bytes(a.hot.all.footprint_bytes)) }
                    if !a.hot.exact { { format!(" Estimated from a {:.2}% spatial sample.", a.hot.sampling_rate * 100.0) } }
                </p>
            }
            <ChartCard<SkewChart> chart={skew} as_table={as_table("skew")} on_toggle_table={props.on_toggle_table.clone()} />
            <div class="controls">
                <span>{ "Heat map: " }</span>{ for heat_buttons }{ device_buttons }
            </div>
            if let Some(chart) = heat_chart {
                <ChartCard<HeatMapChart> {chart} as_table={as_table("heatmap")} on_toggle_table={props.on_toggle_table.clone()} />
            }
            <ChartCard<SizeHistogram> chart={sizes} as_table={as_table("sizes")} on_toggle_table={props.on_toggle_table.clone()} />
            if !a.hot.top_regions.is_empty() {
                <section class="chart-card">
                    <header><h3>{ "Hottest regions" }</h3></header>
                    <div class="table-wrap">
                        <table data-testid="table-regions">
                            <thead><tr><th>{ "device" }</th><th>{ "from" }</th><th>{ "to" }</th><th>{ "size" }</th>
                                <th>{ "accesses" }</th><th>{ "reads" }</th><th>{ "writes" }</th><th>{ "share" }</th></tr></thead>
                            <tbody>
                                { for a.hot.top_regions.iter().map(|g| html! {
                                    <tr>
                                        <td>{ &g.device_name }</td><td>{ bytes(g.start_bytes) }</td><td>{ bytes(g.end_bytes) }</td>
                                        <td>{ bytes(g.end_bytes.saturating_sub(g.start_bytes)) }</td><td>{ count(g.ios) }</td>
                                        <td>{ count(g.reads) }</td><td>{ count(g.writes) }</td>
                                        <td>{ format!("{:.1}%", g.io_fraction * 100.0) }</td>
                                    </tr>
                                }) }
                            </tbody>
                        </table>
                    </div>
                </section>
            }
        </div>
    }
}
