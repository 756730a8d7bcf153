//! A chart on a canvas with a hover read-out and a "show as table" toggle; generic over
//! [`Chart`], so every chart gets the same behaviour.

use std::cell::RefCell;
use std::rc::Rc;

use plotters::prelude::IntoDrawingArea;
use plotters_canvas::CanvasBackend;
use wasm_bindgen::JsCast;
use web_sys::HtmlCanvasElement;
use yew::prelude::*;

use crate::charts::{Chart, Layout};

#[derive(Properties, PartialEq)]
pub struct ChartCardProps<C: Chart> {
    pub chart: C,
    /// Show the data as a table instead of the drawing (state lives in the URL hash).
    pub as_table: bool,
    pub on_toggle_table: Callback<String>,
    /// Called once the chart has been drawn (timing of the first chart).
    #[prop_or_default]
    pub on_drawn: Callback<()>,
    /// Dragging across the chart selects a range of its x axis, reported as fractions of the
    /// plotting area; a click without dragging clears it (`None`).
    #[prop_or_default]
    pub on_brush: Option<Callback<Option<(f64, f64)>>>,
}

/// The pointer's position in canvas pixels (the canvas may be scaled by CSS or zoom).
fn canvas_point(e: &MouseEvent) -> Option<(i32, i32)> {
    let canvas = e
        .target()
        .and_then(|t| t.dyn_into::<HtmlCanvasElement>().ok())?;
    let sx = f64::from(canvas.width()) / f64::from(canvas.client_width().max(1));
    let sy = f64::from(canvas.height()) / f64::from(canvas.client_height().max(1));
    Some((
        (f64::from(e.offset_x()) * sx) as i32,
        (f64::from(e.offset_y()) * sy) as i32,
    ))
}

const HEIGHT_PX: u32 = 300;

#[function_component]
pub fn ChartCard<C: Chart>(props: &ChartCardProps<C>) -> Html {
    let canvas_ref = use_node_ref();
    let layout: Rc<RefCell<Layout>> = use_mut_ref(Layout::default);
    let readout = use_state(|| None::<String>);
    let error = use_state(|| None::<String>);

    {
        let canvas_ref = canvas_ref.clone();
        let layout = layout.clone();
        let error = error.clone();
        let on_drawn = props.on_drawn.clone();
        use_effect_with(
            (props.chart.clone(), props.as_table),
            move |(chart, as_table)| {
                if !*as_table {
                    if let Some(canvas) = canvas_ref.cast::<HtmlCanvasElement>() {
                        let width = canvas.client_width().max(320) as u32;
                        canvas.set_width(width);
                        canvas.set_height(HEIGHT_PX);
                        let result = CanvasBackend::with_canvas_object(canvas)
                            .ok_or_else(|| "this browser has no 2D canvas".to_owned())
                            .and_then(|backend| {
                                let area = backend.into_drawing_area();
                                let l = chart.draw(&area)?;
                                area.present().map_err(crate::charts::draw_error)?;
                                Ok(l)
                            });
                        match result {
                            Ok(l) => {
                                *layout.borrow_mut() = l;
                                error.set(None);
                                on_drawn.emit(());
                            }
                            Err(e) => error.set(Some(e)),
                        }
                    }
                }
            },
        );
    }

    let onmousemove = {
        let layout = layout.clone();
        let readout = readout.clone();
        let chart = props.chart.clone();
        Callback::from(move |e: MouseEvent| {
            if let Some((x, y)) = canvas_point(&e) {
                readout.set(chart.hover(&layout.borrow(), x, y));
            }
        })
    };
    let brush_start: Rc<RefCell<Option<f64>>> = use_mut_ref(|| None);
    let onmousedown = {
        let layout = layout.clone();
        let brush_start = brush_start.clone();
        Callback::from(move |e: MouseEvent| {
            if let Some((x, y)) = canvas_point(&e) {
                *brush_start.borrow_mut() = layout.borrow().x_fraction(x, y);
            }
        })
    };
    let onmouseup = {
        let layout = layout.clone();
        let on_brush = props.on_brush.clone();
        Callback::from(move |e: MouseEvent| {
            let (Some(cb), Some(start)) = (on_brush.as_ref(), brush_start.borrow_mut().take())
            else {
                return;
            };
            let l = layout.borrow();
            let end = canvas_point(&e).and_then(|(x, _)| {
                // Past the plotting area's ends counts as its ends.
                let (x0, x1) = l.x_px;
                (x1 > x0).then(|| f64::from(x.clamp(x0, x1) - x0) / f64::from(x1 - x0))
            });
            match end {
                Some(end) if (end - start).abs() > 0.01 => {
                    cb.emit(Some((start.min(end), start.max(end))))
                }
                _ => cb.emit(None),
            }
        })
    };
    let onmouseleave = {
        let readout = readout.clone();
        Callback::from(move |_| readout.set(None))
    };
    let id = props.chart.id();
    let toggle = {
        let cb = props.on_toggle_table.clone();
        Callback::from(move |_| cb.emit(id.to_owned()))
    };

    let body = if props.as_table {
        let table = props.chart.table();
        html! {
            <div class="table-wrap">
                <table data-testid={format!("table-{id}")}>
                    <thead><tr>{ for table.headers.iter().map(|h| html! { <th>{ h }</th> }) }</tr></thead>
                    <tbody>
                        { for table.rows.iter().map(|r| html! {
                            <tr>{ for r.iter().map(|c| html! { <td>{ c }</td> }) }</tr>
                        }) }
                    </tbody>
                </table>
            </div>
        }
    } else {
        html! {
            <>
                <canvas ref={canvas_ref} id={format!("chart-{id}")} class="chart" height={HEIGHT_PX.to_string()}
                    {onmousemove} {onmouseleave} {onmousedown} {onmouseup} />
                <div class="readout" data-testid={format!("readout-{id}")}>
                    { (*readout).clone().unwrap_or_else(|| "Point at the chart for values.".into()) }
                </div>
            </>
        }
    };

    html! {
        <section class="chart-card" data-testid={format!("chart-{id}")}>
            <header>
                <h3>{ props.chart.title() }</h3>
                <span class="legend">
                    { for props.chart.legend().into_iter().map(|(name, color)| html! {
                        <span><i style={format!("background:{color}")}></i>{ name }</span>
                    }) }
                </span>
                <button class="link" onclick={toggle}>
                    { if props.as_table { "Show as chart" } else { "Show as table" } }
                </button>
            </header>
            if let Some(e) = (*error).clone() { <p class="error">{ e }</p> }
            { body }
        </section>
    }
}
