//! The load over time: IOPS or MB/s per time bin, reads and writes stacked. The selected time
//! window (the brush) is shaded.

use analyzer_core::analysis::timeline::TimelineReport;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{draw_error, Chart, Layout, Table, AXIS_FONT, READ_COLOR, WRITE_COLOR};
use crate::units::{count, duration};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    Iops,
    MegabytesPerSec,
}

impl Metric {
    pub fn id(self) -> &'static str {
        match self {
            Metric::Iops => "iops",
            Metric::MegabytesPerSec => "mbps",
        }
    }

    pub fn from_id(id: &str) -> Metric {
        if id == "mbps" {
            Metric::MegabytesPerSec
        } else {
            Metric::Iops
        }
    }

    fn unit(self) -> &'static str {
        match self {
            Metric::Iops => "IOPS",
            Metric::MegabytesPerSec => "MiB/s",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct TimelineChart {
    pub metric: Metric,
    pub bin_nanos: u64,
    /// (bin start seconds, read value, write value).
    pub bins: Vec<(f64, f64, f64)>,
    /// The selected window in seconds from the start, if any.
    pub selection: Option<(f64, f64)>,
    /// Drawn while the trace is still being read (no brush; the title says so).
    pub live: bool,
}

pub fn timeline_chart(
    t: &TimelineReport,
    metric: Metric,
    selection: Option<(f64, f64)>,
) -> TimelineChart {
    let secs = t.bin_nanos.max(1) as f64 / 1e9;
    let bins = t
        .bins
        .iter()
        .map(|b| {
            let start = b.start_nanos as f64 / 1e9;
            match metric {
                Metric::Iops => (start, b.reads as f64 / secs, b.writes as f64 / secs),
                Metric::MegabytesPerSec => (start, b.read_mib_per_sec, b.write_mib_per_sec),
            }
        })
        .collect();
    TimelineChart {
        metric,
        bin_nanos: t.bin_nanos,
        bins,
        selection,
        live: false,
    }
}

impl TimelineChart {
    /// Seconds covered by the chart's x axis.
    pub fn span_secs(&self) -> f64 {
        self.bins.last().map_or(0.0, |b| b.0) + self.bin_nanos as f64 / 1e9
    }
}

impl Chart for TimelineChart {
    fn id(&self) -> &'static str {
        "timeline"
    }

    fn title(&self) -> String {
        if self.live {
            format!(
                "{} over time, read so far (the full analysis follows)",
                self.metric.unit()
            )
        } else {
            format!(
                "{} over time (drag to select a time window)",
                self.metric.unit()
            )
        }
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<Layout, String> {
        area.fill(&WHITE).map_err(draw_error)?;
        let span = self.span_secs().max(1e-9);
        let max = self
            .bins
            .iter()
            .map(|b| b.1 + b.2)
            .fold(0.0, f64::max)
            .max(1e-9);
        let mut chart = ChartBuilder::on(area)
            .margin(10)
            .x_label_area_size(34)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..span, 0f64..max * 1.08)
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .x_desc("seconds from the first request")
            .y_desc(self.metric.unit())
            .y_label_formatter(&|y| {
                if max >= 100.0 {
                    count(y.round().max(0.0) as u64)
                } else if max >= 1.0 {
                    format!("{y:.1}")
                } else {
                    format!("{y:.3}")
                }
            })
            .light_line_style(RGBColor(240, 240, 240))
            .label_style(AXIS_FONT)
            .draw()
            .map_err(draw_error)?;
        if let Some((a, b)) = self.selection {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(a, 0.0), (b, max * 1.08)],
                    RGBColor(47, 111, 181).mix(0.12).filled(),
                )))
                .map_err(draw_error)?;
        }
        let w = self.bin_nanos as f64 / 1e9;
        for &(t, r, wr) in &self.bins {
            if r > 0.0 {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(t, 0.0), (t + w, r)],
                        READ_COLOR.filled(),
                    )))
                    .map_err(draw_error)?;
            }
            if wr > 0.0 {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(t, r), (t + w, r + wr)],
                        WRITE_COLOR.filled(),
                    )))
                    .map_err(draw_error)?;
            }
        }
        let (x, y) = chart.plotting_area().get_pixel_range();
        Ok(Layout {
            x_px: (x.start, x.end),
            y_px: (y.start, y.end),
        })
    }

    fn hover(&self, layout: &Layout, x: i32, y: i32) -> Option<String> {
        let f = layout.x_fraction(x, y)?;
        let t = f * self.span_secs();
        let i = ((t * 1e9) / self.bin_nanos.max(1) as f64) as usize;
        let b = self.bins.get(i.min(self.bins.len().checked_sub(1)?))?;
        let fmt = |v: f64| match self.metric {
            Metric::Iops => count(v.round() as u64),
            Metric::MegabytesPerSec => format!("{v:.1}"),
        };
        Some(format!(
            "at {}: read {} {u}, write {} {u}",
            duration((b.0 * 1e9) as u64),
            fmt(b.1),
            fmt(b.2),
            u = self.metric.unit()
        ))
    }

    fn legend(&self) -> Vec<(&'static str, &'static str)> {
        super::READ_WRITE_LEGEND.to_vec()
    }

    fn table(&self) -> Table {
        Table {
            headers: vec![
                "from (s)".into(),
                format!("read {}", self.metric.unit()),
                format!("write {}", self.metric.unit()),
            ],
            rows: self
                .bins
                .iter()
                .map(|b| {
                    vec![
                        format!("{:.3}", b.0),
                        format!("{:.1}", b.1),
                        format!("{:.1}", b.2),
                    ]
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn reads_out_the_bin_under_the_pointer() {
        let chart = TimelineChart {
            metric: Metric::Iops,
            bin_nanos: 1_000_000_000,
            bins: vec![(0.0, 10.0, 5.0), (1.0, 20.0, 0.0)],
            selection: Some((0.5, 1.5)),
            live: false,
        };
        assert_eq!(chart.span_secs(), 2.0);
        let (svg, layout) = crate::charts::render_svg(&chart);
        assert!(svg.contains("<rect"));
        let y = (layout.y_px.0 + layout.y_px.1) / 2;
        let text = chart
            .hover(&layout, layout.x_px.1 - 3, y)
            .unwrap_or_default();
        assert!(text.contains("read 20 IOPS"), "{text}");
        assert_eq!(chart.table().rows.len(), 2);
    }
}
