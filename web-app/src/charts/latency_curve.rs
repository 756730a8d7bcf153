//! The Array view's IOPS-vs-latency curve: for every layout, the trace replayed in closed loop at
//! each depth of the sweep (1 to 256 outstanding I/Os), IOPS on x and mean latency on y, one
//! colour per layout, solid without the SSD cache and dashed with it, the chosen depth marked.
//! Both axes are logarithmic: layouts side by side differ by orders of magnitude (NVMe against
//! 7,200 rpm disks), and a linear axis would flatten the slower ones onto it.

use analyzer_core::array::CurvePoint;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{draw_error, Chart, Layout, Table, AXIS_FONT, READ_COLOR, WRITE_COLOR};
use crate::units::{count, duration};
use crate::worker::predict::PredictResult;

/// One line of the chart: a layout with or without the cache.
#[derive(Clone, Debug, PartialEq)]
pub struct CurveSeries {
    /// The layout's index in the view (its colour).
    pub layout: usize,
    /// The layout in words, for the read-out and the table.
    pub label: String,
    pub with_cache: bool,
    /// Ascending by depth (`load` is the number of outstanding I/Os).
    pub points: Vec<CurvePoint>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LatencyCurveChart {
    pub series: Vec<CurveSeries>,
    /// The view's outstanding I/Os, marked on every line.
    pub chosen_qd: u32,
}

/// Colours by layout index.
const PALETTE: [RGBColor; 4] = [
    READ_COLOR,
    WRITE_COLOR,
    RGBColor(60, 150, 80),
    RGBColor(150, 60, 160),
];
const LEGEND: [(&str, &str); 4] = [
    ("Layout 1", "#2f6fb5"),
    ("Layout 2", "#e07b24"),
    ("Layout 3", "#3c9650"),
    ("Layout 4", "#963ca0"),
];

/// Pointer distance (backend pixels) within which a point is read out.
const HOVER_PX: f64 = 24.0;

/// The chart for a prediction that has curves (`None` when it has none).
pub fn latency_curve_chart(r: &PredictResult) -> Option<LatencyCurveChart> {
    let mut series = Vec::new();
    for (i, c) in r.configs.iter().enumerate() {
        let label = format!("{}: {}", i + 1, c.params.label());
        if !c.curve.is_empty() {
            series.push(CurveSeries {
                layout: i,
                label: label.clone(),
                with_cache: false,
                points: c.curve.clone(),
            });
        }
        if !c.curve_with_cache.is_empty() {
            series.push(CurveSeries {
                layout: i,
                label,
                with_cache: true,
                points: c.curve_with_cache.clone(),
            });
        }
    }
    (!series.is_empty()).then_some(LatencyCurveChart {
        series,
        chosen_qd: r.request.outstanding.max(1),
    })
}

/// Points a log axis can show.
fn drawable(p: &CurvePoint) -> bool {
    p.iops > 0.0 && p.mean_latency_nanos > 0.0 && p.iops.is_finite()
}

/// `lo..hi` widened by a quarter of a decade each side (and to a decade when flat).
fn log_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !lo.is_finite() || hi <= 0.0 {
        return (1.0, 10.0);
    }
    let (lo, hi) = if hi / lo < 10.0 {
        let mid = (lo * hi).sqrt();
        (mid / 10f64.sqrt(), mid * 10f64.sqrt())
    } else {
        (lo, hi)
    };
    (lo / 10f64.powf(0.25), hi * 10f64.powf(0.25))
}

/// Tick values 1, 2 and 5 times a power of ten within `lo..=hi` (a log axis would otherwise
/// label only whole decades, or every minor tick with overlapping labels). When the range holds
/// too many, the 2s go first, then the 5s.
fn ticks_1_2_5(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo > 0.0 && hi > lo && hi.is_finite()) {
        return Vec::new();
    }
    let in_range = |mults: &[f64]| -> Vec<f64> {
        let mut out = Vec::new();
        let mut decade = 10f64.powf(lo.log10().floor());
        while decade <= hi {
            for m in mults {
                let v = m * decade;
                if v >= lo && v <= hi {
                    out.push(v);
                }
            }
            decade *= 10.0;
        }
        out
    };
    for mults in [&[1.0, 2.0, 5.0][..], &[1.0, 5.0], &[1.0]] {
        let t = in_range(mults);
        if t.len() <= 7 {
            return t;
        }
    }
    in_range(&[1.0])
}

/// Milliseconds with three decimals (exact to the microsecond), as the table prints them.
fn ms(nanos: f64) -> String {
    format!("{:.3}", nanos / 1e6)
}

impl LatencyCurveChart {
    fn x_range(&self) -> (f64, f64) {
        log_range(self.points().map(|(_, p)| p.iops))
    }

    /// Mean latency range, nanoseconds.
    fn y_range(&self) -> (f64, f64) {
        log_range(self.points().map(|(_, p)| p.mean_latency_nanos))
    }

    fn points(&self) -> impl Iterator<Item = (&CurveSeries, &CurvePoint)> {
        self.series
            .iter()
            .flat_map(|s| s.points.iter().filter(|p| drawable(p)).map(move |p| (s, p)))
    }

    fn is_chosen(&self, p: &CurvePoint) -> bool {
        p.load == analyzer_core::array::Load::Outstanding(self.chosen_qd)
    }

    /// Where a point lands in backend pixels (log axes map logarithms linearly).
    fn pixel(&self, layout: &Layout, p: &CurvePoint) -> (f64, f64) {
        let frac = |v: f64, (lo, hi): (f64, f64)| (v.ln() - lo.ln()) / (hi.ln() - lo.ln());
        let (x0, x1) = layout.x_px;
        let (y0, y1) = layout.y_px;
        let fx = frac(p.iops, self.x_range());
        let fy = frac(p.mean_latency_nanos, self.y_range());
        (
            f64::from(x0) + fx * f64::from(x1 - x0),
            // The y axis grows upwards: its top pixel is the range's high end.
            f64::from(y0.max(y1)) - fy * f64::from((y1 - y0).abs()),
        )
    }

    fn describe(&self, s: &CurveSeries, p: &CurvePoint) -> String {
        format!(
            "Layout {} {}, {} outstanding{}: {} IOPS, mean {}, p99 {}",
            s.label,
            if s.with_cache {
                "with the SSD cache"
            } else {
                "without cache"
            },
            p.load,
            if self.is_chosen(p) { " (chosen)" } else { "" },
            count(p.iops.round() as u64),
            duration(p.mean_latency_nanos.round() as u64),
            duration(p.p99_latency_nanos)
        )
    }
}

impl Chart for LatencyCurveChart {
    fn id(&self) -> &'static str {
        "latency-curve"
    }

    fn title(&self) -> String {
        format!(
            "IOPS vs mean latency by outstanding I/Os (solid: no cache, dashed: with the SSD cache, ● {} outstanding)",
            self.chosen_qd
        )
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<Layout, String> {
        area.fill(&WHITE).map_err(draw_error)?;
        let (x_lo, x_hi) = self.x_range();
        let (y_lo, y_hi) = self.y_range();
        let mut chart = ChartBuilder::on(area)
            .margin(10)
            .x_label_area_size(34)
            .y_label_area_size(80)
            .build_cartesian_2d(
                (x_lo..x_hi)
                    .log_scale()
                    .with_key_points(ticks_1_2_5(x_lo, x_hi)),
                (y_lo..y_hi)
                    .log_scale()
                    .with_key_points(ticks_1_2_5(y_lo, y_hi)),
            )
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .x_desc("IOPS")
            .y_desc("mean latency")
            .x_label_formatter(&|x| count(x.max(0.0).round() as u64))
            .y_label_formatter(&|y| duration(y.max(0.0).round() as u64))
            .light_line_style(RGBColor(240, 240, 240))
            .label_style(AXIS_FONT)
            .draw()
            .map_err(draw_error)?;
        for s in &self.series {
            let color = PALETTE[s.layout % PALETTE.len()];
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .filter(|p| drawable(p))
                .map(|p| (p.iops, p.mean_latency_nanos))
                .collect();
            if s.with_cache {
                chart
                    .draw_series(DashedLineSeries::new(
                        pts.iter().copied(),
                        8,
                        5,
                        color.stroke_width(2),
                    ))
                    .map_err(draw_error)?;
            } else {
                chart
                    .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
                    .map_err(draw_error)?;
            }
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 2, color.filled())))
                .map_err(draw_error)?;
            chart
                .draw_series(
                    s.points
                        .iter()
                        .filter(|p| drawable(p) && self.is_chosen(p))
                        .map(|p| {
                            Circle::new((p.iops, p.mean_latency_nanos), 6, BLACK.stroke_width(2))
                        }),
                )
                .map_err(draw_error)?;
        }
        let (x, y) = chart.plotting_area().get_pixel_range();
        Ok(Layout {
            x_px: (x.start, x.end),
            y_px: (y.start, y.end),
        })
    }

    fn hover(&self, layout: &Layout, x: i32, y: i32) -> Option<String> {
        layout.x_fraction(x, y)?;
        let (px, py) = (f64::from(x), f64::from(y));
        let (dist, s, p) = self
            .points()
            .map(|(s, p)| {
                let (qx, qy) = self.pixel(layout, p);
                ((qx - px).hypot(qy - py), s, p)
            })
            .min_by(|a, b| a.0.total_cmp(&b.0))?;
        (dist <= HOVER_PX).then(|| self.describe(s, p))
    }

    fn table(&self) -> Table {
        let headers = [
            "layout",
            "cache",
            "outstanding I/Os",
            "IOPS",
            "mean latency (ms)",
            "p99 latency (ms)",
            "chosen",
        ]
        .map(str::to_owned)
        .to_vec();
        let rows = self
            .series
            .iter()
            .flat_map(|s| {
                s.points.iter().map(move |p| {
                    vec![
                        s.label.clone(),
                        if s.with_cache { "with" } else { "without" }.to_owned(),
                        format!("{}", p.load),
                        format!("{:.1}", p.iops),
                        ms(p.mean_latency_nanos),
                        ms(p.p99_latency_nanos as f64),
                        if self.is_chosen(p) { "●" } else { "" }.to_owned(),
                    ]
                })
            })
            .collect();
        Table { headers, rows }
    }

    fn legend(&self) -> Vec<(&'static str, &'static str)> {
        let mut layouts: Vec<usize> = self.series.iter().map(|s| s.layout).collect();
        layouts.dedup();
        layouts
            .into_iter()
            .map(|i| LEGEND[i % LEGEND.len()])
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn point(qd: u32, iops: f64, mean_ms: f64) -> CurvePoint {
        CurvePoint {
            load: analyzer_core::array::Load::Outstanding(qd),
            iops,
            mean_latency_nanos: mean_ms * 1e6,
            p99_latency_nanos: (mean_ms * 3e6) as u64,
        }
    }

    fn chart() -> LatencyCurveChart {
        let plain = vec![
            point(1, 100.0, 10.0),
            point(4, 350.0, 11.4),
            point(16, 900.0, 17.8),
        ];
        let cached = vec![
            point(1, 400.0, 2.5),
            point(4, 1500.0, 2.7),
            point(16, 4000.0, 4.0),
        ];
        LatencyCurveChart {
            series: vec![
                CurveSeries {
                    layout: 0,
                    label: "1: raid5".into(),
                    with_cache: false,
                    points: plain,
                },
                CurveSeries {
                    layout: 0,
                    label: "1: raid5".into(),
                    with_cache: true,
                    points: cached,
                },
                CurveSeries {
                    layout: 1,
                    label: "2: raid10".into(),
                    with_cache: false,
                    points: vec![point(1, 5000.0, 0.2), point(16, 60000.0, 0.27)],
                },
            ],
            chosen_qd: 4,
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn draws_solid_and_dashed_lines_in_layout_colours_and_marks_the_chosen_depth() {
        let c = chart();
        let (svg, layout) = crate::charts::render_svg(&c);
        // Each layout's colour is in the drawing (plotters writes `#RRGGBB` in upper case).
        assert!(svg.contains("#2F6FB5"), "layout 1 colour");
        assert!(svg.contains("#E07B24"), "layout 2 colour");
        // The dashed line is many short segments: far more lines of layout 1's colour than the
        // two polylines a solid line would need.
        let blue_lines = svg
            .split("<polyline")
            .skip(1)
            .filter(|l| l.split('>').next().is_some_and(|t| t.contains("#2F6FB5")))
            .count();
        assert!(blue_lines > 5, "dashes: {blue_lines}");
        // Two lines have a point at depth 4 (layout 2 has none): two black rings.
        let rings = svg
            .split("<circle")
            .skip(1)
            .filter(|c| c.split('>').next().is_some_and(|t| t.contains("#000000")))
            .count();
        assert_eq!(rings, 2, "chosen-depth marks");
        assert!(layout.x_px.1 > layout.x_px.0);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn hover_reads_out_the_nearest_point_and_nothing_far_from_one() {
        let c = chart();
        let (_, layout) = crate::charts::render_svg(&c);
        let target = &c.series[1].points[1];
        let (x, y) = c.pixel(&layout, target);
        let text = c
            .hover(&layout, x.round() as i32, y.round() as i32)
            .unwrap_or_default();
        assert!(text.contains("with the SSD cache"), "{text}");
        assert!(text.contains("4 outstanding (chosen)"), "{text}");
        assert!(text.contains("1,500 IOPS"), "{text}");
        assert!(text.contains("p99 8.1 ms"), "{text}");
        // The top left corner of the plot is far from every point.
        assert_eq!(c.hover(&layout, layout.x_px.0 + 1, layout.y_px.0 + 1), None);
        // Outside the plot: nothing.
        assert_eq!(c.hover(&layout, 0, 0), None);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn table_lists_every_point_and_the_chosen_rows() {
        let c = chart();
        let t = c.table();
        assert_eq!(t.rows.len(), 8);
        assert_eq!(
            t.rows[1],
            vec!["1: raid5", "without", "4", "350.0", "11.400", "34.200", "●"]
        );
        assert_eq!(t.rows.iter().filter(|r| r[6] == "●").count(), 2);
        assert_eq!(c.legend().len(), 2);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_narrow_log_range_gets_a_few_readable_labels() {
        // The default layout's curve on the sample: 142 to 2,658 IOPS, 7 to 96 ms.
        let depths = [1, 2, 4, 8, 16, 32, 64, 128, 256];
        let iops = [
            142.2, 216.1, 333.7, 511.8, 794.1, 1196.4, 1700.4, 2243.0, 2658.5,
        ];
        let mean_ms = [7.0, 9.3, 12.0, 15.6, 20.1, 26.7, 37.6, 57.0, 95.9];
        let c = LatencyCurveChart {
            series: vec![CurveSeries {
                layout: 0,
                label: "1".into(),
                with_cache: false,
                points: (0..9)
                    .map(|i| point(depths[i], iops[i], mean_ms[i]))
                    .collect(),
            }],
            chosen_qd: 16,
        };
        let (svg, _) = crate::charts::render_svg(&c);
        let labels: Vec<&str> = svg
            .split("<text")
            .skip(1)
            .filter_map(|t| t.split('>').nth(1)?.split('<').next())
            .collect();
        let labels: Vec<&str> = labels.iter().map(|l| l.trim()).collect();
        let y = labels.iter().filter(|l| l.ends_with(" ms")).count();
        assert!((3..=7).contains(&y), "{labels:?}");
        let x = labels
            .iter()
            .filter(|l| l.chars().all(|ch| ch.is_ascii_digit() || ch == ','))
            .count();
        assert!((3..=7).contains(&x), "{labels:?}");
        assert!(
            labels.contains(&"20.0 ms") && labels.contains(&"500"),
            "{labels:?}"
        );
        assert_eq!(
            ticks_1_2_5(0.5, 2e6).len(),
            7,
            "a wide range keeps decades only"
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn ranges_survive_one_point_and_zero_values() {
        let c = LatencyCurveChart {
            series: vec![CurveSeries {
                layout: 0,
                label: "1".into(),
                with_cache: false,
                points: vec![point(1, 0.0, 0.0), point(2, 10.0, 1.0)],
            }],
            chosen_qd: 1,
        };
        let (lo, hi) = c.x_range();
        assert!(lo < 10.0 && hi > 10.0 && lo > 0.0);
        let (svg, _) = crate::charts::render_svg(&c);
        assert!(svg.contains("<svg"));
    }
}
