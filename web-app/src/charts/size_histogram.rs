//! Request-size histogram: how many reads and writes fall in each power-of-two size bucket, from
//! `stat`'s histogram. Empty buckets at either end are trimmed.

use analyzer_core::stat::StatSummary;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{draw_error, Chart, Layout, Table, AXIS_FONT, OTHER_COLOR, READ_COLOR, WRITE_COLOR};
use crate::units::{bytes, count, pct};

#[derive(Clone, Debug, PartialEq)]
pub struct SizeHistogram {
    pub bars: Vec<SizeBar>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeBar {
    pub label: String,
    pub reads: u64,
    pub writes: u64,
    pub other: u64,
}

impl SizeBar {
    pub fn total(&self) -> u64 {
        self.reads + self.writes + self.other
    }
}

/// The series: one bar per bucket between the first and last non-empty bucket.
pub fn size_histogram(stat: &StatSummary) -> SizeHistogram {
    let busy = |b: &&analyzer_core::stat::SizeBucket| b.reads + b.writes + b.other > 0;
    let first = stat.size_histogram.iter().position(|b| busy(&b));
    let last = stat.size_histogram.iter().rposition(|b| busy(&b));
    let bars = match (first, last) {
        (Some(f), Some(l)) => stat.size_histogram[f..=l]
            .iter()
            .map(|b| SizeBar {
                label: match b.max_bytes {
                    Some(max) => format!("≤{}", bytes(max)),
                    None => format!(">{}", bytes(b.min_bytes.saturating_sub(1))),
                },
                reads: b.reads,
                writes: b.writes,
                other: b.other,
            })
            .collect(),
        _ => Vec::new(),
    };
    SizeHistogram { bars }
}

impl SizeHistogram {
    fn total(&self) -> u64 {
        self.bars.iter().map(SizeBar::total).sum()
    }
}

impl Chart for SizeHistogram {
    fn id(&self) -> &'static str {
        "sizes"
    }

    fn title(&self) -> String {
        "Request sizes".into()
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<Layout, String> {
        area.fill(&WHITE).map_err(draw_error)?;
        let n = self.bars.len().max(1) as u32;
        let max = self
            .bars
            .iter()
            .map(SizeBar::total)
            .max()
            .unwrap_or(0)
            .max(1) as f64;
        let mut chart = ChartBuilder::on(area)
            .margin(10)
            .x_label_area_size(34)
            .y_label_area_size(70)
            .build_cartesian_2d((0u32..n).into_segmented(), 0f64..max * 1.08)
            .map_err(draw_error)?;
        let labels: Vec<String> = self.bars.iter().map(|b| b.label.clone()).collect();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n as usize)
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => labels.get(*i as usize).cloned().unwrap_or_default(),
                _ => String::new(),
            })
            .y_desc("requests")
            .y_label_formatter(&|y| count(y.round() as u64))
            .light_line_style(RGBColor(240, 240, 240))
            .label_style(AXIS_FONT)
            .draw()
            .map_err(draw_error)?;
        for (i, b) in self.bars.iter().enumerate() {
            let i = i as u32;
            let mut y0 = 0f64;
            for (value, color) in [
                (b.reads, READ_COLOR),
                (b.writes, WRITE_COLOR),
                (b.other, OTHER_COLOR),
            ] {
                if value == 0 {
                    continue;
                }
                let y1 = y0 + value as f64;
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [
                            (SegmentValue::Exact(i), y0),
                            (SegmentValue::Exact(i + 1), y1),
                        ],
                        color.filled(),
                    )))
                    .map_err(draw_error)?;
                y0 = y1;
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
        let i = ((f * self.bars.len() as f64) as usize).min(self.bars.len().checked_sub(1)?);
        let b = &self.bars[i];
        Some(format!(
            "{}: {} requests ({}), {} reads, {} writes",
            b.label,
            count(b.total()),
            pct(b.total(), self.total()),
            count(b.reads),
            count(b.writes)
        ))
    }

    fn legend(&self) -> Vec<(&'static str, &'static str)> {
        super::READ_WRITE_LEGEND.to_vec()
    }

    fn table(&self) -> Table {
        let total = self.total();
        Table {
            headers: ["size", "reads", "writes", "other", "share"]
                .map(String::from)
                .to_vec(),
            rows: self
                .bars
                .iter()
                .map(|b| {
                    vec![
                        b.label.clone(),
                        count(b.reads),
                        count(b.writes),
                        count(b.other),
                        pct(b.total(), total),
                    ]
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use analyzer_core::decode::Diagnostics;
    use analyzer_core::stat::Stat;
    use analyzer_core::{IoEvent, Op, TraceHeader};
    use wasm_bindgen_test::wasm_bindgen_test;

    fn stat_of(sizes: &[(u32, Op)]) -> StatSummary {
        let mut s = Stat::new();
        for (i, &(len_bytes, op)) in sizes.iter().enumerate() {
            s.observe(&IoEvent {
                time_nanos: i as u64,
                device: 0,
                offset_bytes: (i as u64) << 20,
                len_bytes,
                op,
                latency_nanos: None,
                pid: None,
            });
        }
        s.finish(&TraceHeader::new("test"), &Diagnostics::default())
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn trims_empty_buckets_and_reads_out_the_bar_under_the_pointer() {
        let h = size_histogram(&stat_of(&[
            (4096, Op::Read),
            (4096, Op::Write),
            (16384, Op::Read),
        ]));
        // 4 KiB, 8 KiB (empty, kept between), 16 KiB.
        assert_eq!(h.bars.len(), 3);
        assert_eq!((h.bars[0].reads, h.bars[0].writes), (1, 1));
        assert_eq!(h.bars[1].total(), 0);
        assert_eq!(h.bars[2].label, "≤16.0 KiB");
        let (svg, layout) = crate::charts::render_svg(&h);
        assert!(svg.contains("<svg"), "{svg}");
        assert!(svg.contains("16.0 KiB"), "labels drawn");
        // Three non-empty stacks: read+write, read; plus the background and mesh.
        assert!(svg.matches("<rect").count() >= 4);
        let (x0, x1) = layout.x_px;
        let y = (layout.y_px.0 + layout.y_px.1) / 2;
        let first = h.hover(&layout, x0 + 2, y).unwrap_or_default();
        assert!(first.starts_with("≤4.0 KiB: 2 requests (66.7%)"), "{first}");
        let last = h.hover(&layout, x1 - 2, y).unwrap_or_default();
        assert!(last.starts_with("≤16.0 KiB: 1 requests"), "{last}");
        assert_eq!(h.hover(&layout, x1 + 50, y), None);
        assert_eq!(h.table().rows.len(), 3);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn empty_trace_draws_an_empty_chart() {
        let h = size_histogram(&stat_of(&[]));
        assert!(h.bars.is_empty());
        let (svg, layout) = crate::charts::render_svg(&h);
        assert!(svg.contains("<svg"));
        assert_eq!(h.hover(&layout, layout.x_px.0 + 1, layout.y_px.0 + 1), None);
    }
}
