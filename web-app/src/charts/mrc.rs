//! Hit-ratio curves: the share of cache-line accesses a cache of each size would serve, one
//! line per policy, with the chosen size marked. Sizes between computed points are linearly
//! interpolated (what the size slider reads instantly).

use analyzer_core::mrc::MrcReport;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{draw_error, Chart, Layout, Table, AXIS_FONT, OTHER_COLOR, READ_COLOR, WRITE_COLOR};
use crate::units::bytes;

#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    pub policy: String,
    /// `(size_bytes, hit_ratio)`, ascending by size, starting at (0, 0).
    pub points: Vec<(u64, f64)>,
}

impl Curve {
    pub fn from_report(r: &MrcReport) -> Curve {
        let mut points = vec![(0u64, 0.0f64)];
        points.extend(
            r.points
                .iter()
                .filter(|p| p.size_bytes > 0)
                .map(|p| (p.size_bytes, p.hit_ratio)),
        );
        Curve {
            policy: r.policy.clone(),
            points,
        }
    }

    /// The hit ratio at `size_bytes`, interpolated; the last point's beyond the curve.
    pub fn hit_ratio_at(&self, size_bytes: u64) -> f64 {
        let i = self.points.partition_point(|&(s, _)| s <= size_bytes);
        let (s0, h0) = if i == 0 { (0, 0.0) } else { self.points[i - 1] };
        match self.points.get(i) {
            Some(&(s1, h1)) if s1 > s0 => {
                h0 + (h1 - h0) * (size_bytes - s0) as f64 / (s1 - s0) as f64
            }
            _ => h0,
        }
    }

    pub fn max_size(&self) -> u64 {
        self.points.last().map_or(0, |p| p.0)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct MrcChart {
    pub curves: Vec<Curve>,
    pub marker_bytes: Option<u64>,
}

const PALETTE: [RGBColor; 5] = [
    READ_COLOR,
    WRITE_COLOR,
    RGBColor(60, 150, 80),
    RGBColor(150, 60, 160),
    OTHER_COLOR,
];

impl MrcChart {
    fn max_size(&self) -> u64 {
        self.curves
            .iter()
            .map(Curve::max_size)
            .max()
            .unwrap_or(0)
            .max(1)
    }
}

impl Chart for MrcChart {
    fn id(&self) -> &'static str {
        "mrc"
    }

    fn title(&self) -> String {
        "Hit ratio by cache size".into()
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<Layout, String> {
        area.fill(&WHITE).map_err(draw_error)?;
        let max = self.max_size() as f64;
        let mut chart = ChartBuilder::on(area)
            .margin(10)
            .x_label_area_size(34)
            .y_label_area_size(50)
            .build_cartesian_2d(0f64..max, 0f64..100f64)
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .x_desc("cache size")
            .y_desc("hit ratio (%)")
            .x_label_formatter(&|x| bytes(x.max(0.0) as u64))
            .light_line_style(RGBColor(240, 240, 240))
            .label_style(AXIS_FONT)
            .draw()
            .map_err(draw_error)?;
        for (i, c) in self.curves.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            chart
                .draw_series(LineSeries::new(
                    c.points.iter().map(|&(s, h)| (s as f64, h * 100.0)),
                    color.stroke_width(2),
                ))
                .map_err(draw_error)?
                .label(c.policy.clone())
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 16, y)], color.stroke_width(2))
                });
        }
        if let Some(m) = self.marker_bytes {
            let m = (m as f64).min(max);
            chart
                .draw_series(LineSeries::new(
                    [(m, 0.0), (m, 100.0)],
                    BLACK.mix(0.5).stroke_width(1),
                ))
                .map_err(draw_error)?;
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
        let size = (f * self.max_size() as f64) as u64;
        let parts: Vec<String> = self
            .curves
            .iter()
            .map(|c| format!("{} {:.1}%", c.policy, c.hit_ratio_at(size) * 100.0))
            .collect();
        Some(format!("{} cache: {}", bytes(size), parts.join(", ")))
    }

    fn table(&self) -> Table {
        let mut headers = vec!["cache size".to_owned()];
        headers.extend(
            self.curves
                .iter()
                .map(|c| format!("{} hit ratio", c.policy)),
        );
        let sizes: Vec<u64> = self.curves.first().map_or(Vec::new(), |c| {
            c.points.iter().skip(1).map(|p| p.0).collect()
        });
        let rows = sizes
            .into_iter()
            .map(|s| {
                let mut row = vec![bytes(s)];
                row.extend(
                    self.curves
                        .iter()
                        .map(|c| format!("{:.1}%", c.hit_ratio_at(s) * 100.0)),
                );
                row
            })
            .collect();
        Table { headers, rows }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn interpolates_between_points_and_marks_the_size() {
        let c = Curve {
            policy: "lru".into(),
            points: vec![(0, 0.0), (100, 0.5), (200, 0.6)],
        };
        assert!((c.hit_ratio_at(50) - 0.25).abs() < 1e-12);
        assert!((c.hit_ratio_at(150) - 0.55).abs() < 1e-12);
        assert_eq!(c.hit_ratio_at(10_000), 0.6);
        let chart = MrcChart {
            curves: vec![c],
            marker_bytes: Some(150),
        };
        let (svg, layout) = crate::charts::render_svg(&chart);
        assert!(svg.contains("lru"), "legend");
        let mid = (layout.x_px.0 + layout.x_px.1) / 2;
        let text = chart
            .hover(&layout, mid, (layout.y_px.0 + layout.y_px.1) / 2)
            .unwrap_or_default();
        assert!(text.contains("lru 5"), "{text}");
        assert_eq!(chart.table().rows.len(), 2);
    }
}
