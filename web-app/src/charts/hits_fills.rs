//! Hits and fills over time for the simulated cache: per time bin of the simulator's series
//! (`analyzer_core::cache::sim::TimeBin`), line hits and misses stacked, lines filled drawn as
//! a line, and the bin's hit ratio on a right-hand percentage axis, so a cold start, a warm-up
//! and a phase that defeats the cache read at a glance.

use analyzer_core::cache::sim::TimeBin;
use analyzer_core::cache::SimResult;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{draw_error, Chart, Layout, Table, AXIS_FONT};
use crate::units::{count, duration};

pub const HIT_COLOR: RGBColor = RGBColor(46, 139, 87);
pub const MISS_COLOR: RGBColor = RGBColor(200, 200, 200);
pub const FILL_COLOR: RGBColor = RGBColor(224, 123, 36);
pub const RATIO_COLOR: RGBColor = RGBColor(47, 111, 181);

#[derive(Clone, Debug, PartialEq)]
pub struct HitsFillsChart {
    /// Width of every bin.
    pub bin_nanos: u64,
    pub bins: Vec<TimeBin>,
    /// The simulated time span (the last bin may reach past it).
    pub duration_nanos: u64,
}

impl HitsFillsChart {
    pub fn from_result(r: &SimResult) -> HitsFillsChart {
        HitsFillsChart {
            bin_nanos: r.bin_nanos.max(1),
            bins: r.bins.clone(),
            duration_nanos: r.duration_nanos,
        }
    }

    /// Seconds covered by the x axis.
    pub fn span_secs(&self) -> f64 {
        let end = self
            .bins
            .last()
            .map_or(0, |b| b.start_nanos + self.bin_nanos)
            .max(self.duration_nanos);
        end as f64 / 1e9
    }

    /// Sums over every bin: (requests, line accesses, hits, fills).
    pub fn totals(&self) -> (u64, u64, u64, u64) {
        self.bins.iter().fold((0, 0, 0, 0), |t, b| {
            (
                t.0 + b.requests,
                t.1 + b.lines,
                t.2 + b.line_hits,
                t.3 + b.fills,
            )
        })
    }

    fn bin_at(&self, secs: f64) -> Option<&TimeBin> {
        let nanos = (secs * 1e9).max(0.0) as u64;
        self.bins
            .iter()
            .rev()
            .find(|b| b.start_nanos <= nanos)
            .or(self.bins.first())
    }
}

fn ratio_pct(b: &TimeBin) -> Option<f64> {
    b.hit_ratio().map(|r| r * 100.0)
}

fn pct_text(hits: u64, lines: u64) -> String {
    if lines == 0 {
        "–".into()
    } else {
        format!("{:.1}%", hits as f64 * 100.0 / lines as f64)
    }
}

impl Chart for HitsFillsChart {
    fn id(&self) -> &'static str {
        "hits-fills"
    }

    fn title(&self) -> String {
        "Hits and fills over time (line accesses per time bin; hit ratio on the right axis)".into()
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<Layout, String> {
        area.fill(&WHITE).map_err(draw_error)?;
        let span = self.span_secs().max(1e-9);
        let max = self
            .bins
            .iter()
            .map(|b| b.lines.max(b.fills))
            .max()
            .unwrap_or(0)
            .max(1) as f64;
        let mut chart = ChartBuilder::on(area)
            .margin(10)
            .x_label_area_size(34)
            .y_label_area_size(70)
            .right_y_label_area_size(60)
            .build_cartesian_2d(0f64..span, 0f64..max * 1.08)
            .map_err(draw_error)?
            .set_secondary_coord(0f64..span, 0f64..100.0);
        chart
            .configure_mesh()
            .x_desc("seconds from the first simulated request")
            .y_desc("line accesses per bin")
            .y_label_formatter(&|v| count(v.round() as u64))
            .light_line_style(RGBColor(240, 240, 240))
            .label_style(AXIS_FONT)
            .draw()
            .map_err(draw_error)?;
        chart
            .configure_secondary_axes()
            .y_desc("hit ratio %")
            .y_label_formatter(&|v| format!("{v:.0}"))
            .label_style(AXIS_FONT)
            .draw()
            .map_err(draw_error)?;
        let w = self.bin_nanos as f64 / 1e9;
        for b in &self.bins {
            let t = b.start_nanos as f64 / 1e9;
            let hits = b.line_hits as f64;
            let misses = b.lines.saturating_sub(b.line_hits) as f64;
            if hits > 0.0 {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(t, 0.0), (t + w, hits)],
                        HIT_COLOR.filled(),
                    )))
                    .map_err(draw_error)?;
            }
            if misses > 0.0 {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(t, hits), (t + w, hits + misses)],
                        MISS_COLOR.filled(),
                    )))
                    .map_err(draw_error)?;
            }
        }
        let mid = |b: &TimeBin| b.start_nanos as f64 / 1e9 + w / 2.0;
        chart
            .draw_series(LineSeries::new(
                self.bins.iter().map(|b| (mid(b), b.fills as f64)),
                FILL_COLOR.stroke_width(2),
            ))
            .map_err(draw_error)?;
        chart
            .draw_secondary_series(LineSeries::new(
                self.bins
                    .iter()
                    .filter_map(|b| ratio_pct(b).map(|r| (mid(b), r))),
                RATIO_COLOR.stroke_width(2),
            ))
            .map_err(draw_error)?;
        let (x, y) = chart.plotting_area().get_pixel_range();
        Ok(Layout {
            x_px: (x.start, x.end),
            y_px: (y.start, y.end),
        })
    }

    fn hover(&self, layout: &Layout, x: i32, y: i32) -> Option<String> {
        let f = layout.x_fraction(x, y)?;
        let b = self.bin_at(f * self.span_secs())?;
        Some(format!(
            "from {} for {}: {} line accesses, {} hits ({}), {} misses, {} lines filled, {} lines cached",
            duration(b.start_nanos),
            duration(self.bin_nanos),
            count(b.lines),
            count(b.line_hits),
            pct_text(b.line_hits, b.lines),
            count(b.lines.saturating_sub(b.line_hits)),
            count(b.fills),
            count(b.occupancy_lines)
        ))
    }

    fn legend(&self) -> Vec<(&'static str, &'static str)> {
        vec![
            ("hits", "#2e8b57"),
            ("misses", "#c8c8c8"),
            ("fills", "#e07b24"),
            ("hit ratio", "#2f6fb5"),
        ]
    }

    fn table(&self) -> Table {
        let row = |from: String, requests, lines: u64, hits: u64, fills, cached: String| {
            vec![
                from,
                count(requests),
                count(lines),
                count(hits),
                count(lines.saturating_sub(hits)),
                count(fills),
                pct_text(hits, lines),
                cached,
            ]
        };
        let mut rows: Vec<Vec<String>> = self
            .bins
            .iter()
            .map(|b| {
                row(
                    format!("{:.3}", b.start_nanos as f64 / 1e9),
                    b.requests,
                    b.lines,
                    b.line_hits,
                    b.fills,
                    count(b.occupancy_lines),
                )
            })
            .collect();
        let (requests, lines, hits, fills) = self.totals();
        rows.push(row(
            "total".into(),
            requests,
            lines,
            hits,
            fills,
            String::new(),
        ));
        Table {
            headers: [
                "from (s)",
                "requests",
                "line accesses",
                "hits",
                "misses",
                "lines filled",
                "hit ratio",
                "lines cached at end",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn bin(start_s: u64, lines: u64, line_hits: u64, fills: u64) -> TimeBin {
        TimeBin {
            start_nanos: start_s * 1_000_000_000,
            requests: lines / 2,
            lines,
            line_hits,
            fills,
            occupancy_lines: 100 * (start_s + 1),
        }
    }

    fn chart() -> HitsFillsChart {
        HitsFillsChart {
            bin_nanos: 1_000_000_000,
            bins: vec![bin(0, 100, 0, 100), bin(1, 200, 150, 50), bin(2, 40, 38, 2)],
            duration_nanos: 2_500_000_000,
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn draws_hits_misses_fills_and_the_ratio() {
        let c = chart();
        assert_eq!(c.span_secs(), 3.0);
        let (svg, layout) = crate::charts::render_svg(&c);
        // Hits and misses are bars in their colours, fills and the ratio are lines.
        assert!(svg.contains("fill=\"#2E8B57\""), "hit bars");
        assert!(svg.contains("fill=\"#C8C8C8\""), "miss bars");
        assert!(svg.contains("stroke=\"#E07B24\""), "fills line");
        assert!(svg.contains("stroke=\"#2F6FB5\""), "hit-ratio line");
        assert!(svg.contains("hit ratio %"));
        // The first bin has no hits: two hit bars (bins 2 and 3), three miss bars.
        assert_eq!(svg.matches("fill=\"#2E8B57\"").count(), 2);
        let y = (layout.y_px.0 + layout.y_px.1) / 2;
        let mid = (layout.x_px.0 + layout.x_px.1) / 2;
        let text = c.hover(&layout, mid, y).unwrap_or_default();
        assert!(text.contains("200 line accesses"), "{text}");
        assert!(text.contains("150 hits (75.0%)"), "{text}");
        assert!(text.contains("50 misses"), "{text}");
        assert_eq!(c.hover(&layout, layout.x_px.0 - 5, y), None);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn the_table_lists_every_bin_and_the_totals() {
        let t = chart().table();
        assert_eq!(t.rows.len(), 4);
        assert_eq!(t.rows[1][3], "150");
        assert_eq!(t.rows[1][6], "75.0%");
        let total = &t.rows[3];
        assert_eq!(total[0], "total");
        assert_eq!((total[2].as_str(), total[3].as_str()), ("340", "188"));
        assert_eq!((total[4].as_str(), total[5].as_str()), ("152", "152"));
        let empty = HitsFillsChart {
            bin_nanos: 1,
            bins: Vec::new(),
            duration_nanos: 0,
        };
        assert_eq!(empty.table().rows.len(), 1);
        let _ = crate::charts::render_svg(&empty);
    }
}
