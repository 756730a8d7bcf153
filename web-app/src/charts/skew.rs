//! The skew curve: the hottest x% of the data serves y% of the I/Os, for all I/Os, reads and
//! writes. A straight diagonal means no skew (a cache helps little); a curve hugging the top
//! left means a small cache catches most I/O.

use analyzer_core::analysis::hot::{HotReport, HotSet};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{draw_error, Chart, Layout, Table, AXIS_FONT, OTHER_COLOR, READ_COLOR, WRITE_COLOR};
use crate::units::bytes;

/// Skew curve points: (footprint fraction, I/O fraction, bytes of hottest data).
pub type SkewPoints = Vec<(f64, f64, u64)>;

#[derive(Clone, Debug, PartialEq)]
pub struct SkewChart {
    /// (population name, points).
    pub series: Vec<(&'static str, SkewPoints)>,
}

fn points(set: &HotSet) -> Vec<(f64, f64, u64)> {
    let mut v: Vec<(f64, f64, u64)> = set
        .skew
        .iter()
        .map(|p| (p.footprint_fraction, p.io_fraction, p.bytes))
        .collect();
    if v.first().is_none_or(|p| p.0 > 0.0) {
        v.insert(0, (0.0, 0.0, 0));
    }
    v
}

pub fn skew_chart(hot: &HotReport) -> SkewChart {
    let mut series = vec![("all I/O", points(&hot.all))];
    if hot.reads.ios > 0 {
        series.push(("reads", points(&hot.reads)));
    }
    if hot.writes.ios > 0 {
        series.push(("writes", points(&hot.writes)));
    }
    SkewChart { series }
}

fn color(name: &str) -> RGBColor {
    match name {
        "reads" => READ_COLOR,
        "writes" => WRITE_COLOR,
        _ => OTHER_COLOR,
    }
}

/// Linear interpolation of a curve at `x`.
fn at(points: &[(f64, f64, u64)], x: f64) -> Option<(f64, u64)> {
    let i = points.iter().position(|p| p.0 >= x)?;
    if i == 0 {
        return Some((points[0].1, points[0].2));
    }
    let (a, b) = (points[i - 1], points[i]);
    let t = if b.0 > a.0 {
        (x - a.0) / (b.0 - a.0)
    } else {
        1.0
    };
    Some((
        a.1 + t * (b.1 - a.1),
        (a.2 as f64 + t * (b.2 as f64 - a.2 as f64)) as u64,
    ))
}

impl Chart for SkewChart {
    fn id(&self) -> &'static str {
        "skew"
    }

    fn title(&self) -> String {
        "Skew: share of I/O served by the hottest data".into()
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<Layout, String> {
        area.fill(&WHITE).map_err(draw_error)?;
        let mut chart = ChartBuilder::on(area)
            .margin(10)
            .x_label_area_size(34)
            .y_label_area_size(50)
            .build_cartesian_2d(0f64..100f64, 0f64..100f64)
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .x_desc("hottest share of the footprint (%)")
            .y_desc("share of I/Os (%)")
            .light_line_style(RGBColor(240, 240, 240))
            .label_style(AXIS_FONT)
            .draw()
            .map_err(draw_error)?;
        chart
            .draw_series(LineSeries::new(
                [(0.0, 0.0), (100.0, 100.0)],
                RGBColor(210, 210, 210),
            ))
            .map_err(draw_error)?;
        for (name, pts) in &self.series {
            let c = color(name);
            chart
                .draw_series(LineSeries::new(
                    pts.iter().map(|p| (p.0 * 100.0, p.1 * 100.0)),
                    c.stroke_width(2),
                ))
                .map_err(draw_error)?
                .label(*name)
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], c.stroke_width(2)));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.8))
            .border_style(RGBColor(200, 200, 200))
            .label_font(AXIS_FONT)
            .draw()
            .map_err(draw_error)?;
        let (x, y) = chart.plotting_area().get_pixel_range();
        Ok(Layout {
            x_px: (x.start, x.end),
            y_px: (y.start, y.end),
        })
    }

    fn hover(&self, layout: &Layout, x: i32, y: i32) -> Option<String> {
        let f = layout.x_fraction(x, y)?;
        let parts: Vec<String> = self
            .series
            .iter()
            .filter_map(|(name, pts)| {
                let (io, b) = at(pts, f)?;
                Some(format!("{name} {:.1}%", io * 100.0)).map(|s| {
                    if *name == "all I/O" {
                        format!("{s} ({})", bytes(b))
                    } else {
                        s
                    }
                })
            })
            .collect();
        (!parts.is_empty()).then(|| {
            format!(
                "hottest {:.1}% of the data serves: {}",
                f * 100.0,
                parts.join(", ")
            )
        })
    }

    fn table(&self) -> Table {
        let mut headers = vec!["hottest data".to_owned()];
        headers.extend(self.series.iter().map(|(n, _)| format!("{n} served")));
        let rows = self.series.first().map_or(Vec::new(), |(_, pts)| {
            pts.iter()
                .skip(1)
                .map(|p| {
                    let mut row = vec![format!("{:.1}% ({})", p.0 * 100.0, bytes(p.2))];
                    for (_, other) in &self.series {
                        row.push(
                            at(other, p.0)
                                .map_or("-".into(), |(io, _)| format!("{:.1}%", io * 100.0)),
                        );
                    }
                    row
                })
                .collect()
        });
        Table { headers, rows }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn interpolates_and_reads_out() {
        let pts = vec![(0.0, 0.0, 0), (0.1, 0.8, 100), (1.0, 1.0, 1000)];
        assert_eq!(at(&pts, 0.05).map(|p| (p.0 * 100.0).round()), Some(40.0));
        let chart = SkewChart {
            series: vec![("all I/O", pts)],
        };
        let (svg, layout) = crate::charts::render_svg(&chart);
        assert!(
            svg.contains("polyline") || svg.contains("path"),
            "curve drawn"
        );
        let x = layout.x_px.0 + (layout.x_px.1 - layout.x_px.0) / 10;
        let text = chart
            .hover(&layout, x, (layout.y_px.0 + layout.y_px.1) / 2)
            .unwrap_or_default();
        assert!(
            text.contains("all I/O 7") || text.contains("all I/O 8"),
            "{text}"
        );
        assert_eq!(chart.table().rows.len(), 2);
    }
}
