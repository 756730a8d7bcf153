//! The LBA × time heat map of one device: where on the disk the requests went, over time. Cells
//! are merged down to at most [`MAX_COLS`] × [`MAX_ROWS`] for drawing; the colour scale is
//! logarithmic so a few very hot cells do not wash out the rest.

use analyzer_core::analysis::heatmap::DeviceHeatMap;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{draw_error, Chart, Layout, Table, AXIS_FONT};
use crate::units::{bytes, count, duration};

pub const MAX_COLS: usize = 128;
pub const MAX_ROWS: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeatOps {
    Reads,
    Writes,
    All,
}

impl HeatOps {
    pub fn id(self) -> &'static str {
        match self {
            HeatOps::Reads => "reads",
            HeatOps::Writes => "writes",
            HeatOps::All => "all",
        }
    }

    pub fn from_id(id: &str) -> HeatOps {
        match id {
            "reads" => HeatOps::Reads,
            "writes" => HeatOps::Writes,
            _ => HeatOps::All,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct HeatMapChart {
    pub device_name: String,
    pub ops: HeatOps,
    /// Columns are time, rows are LBA (row 0 = lowest offsets).
    pub cols: usize,
    pub rows: usize,
    pub col_nanos: u64,
    pub row_bytes: u64,
    /// `cells[c * rows + r]`.
    pub cells: Vec<u64>,
}

pub fn heat_map_chart(m: &DeviceHeatMap, ops: HeatOps) -> HeatMapChart {
    let (t, l) = (m.time_bins as usize, m.lba_bins as usize);
    let cf = t.div_ceil(MAX_COLS).max(1);
    let rf = l.div_ceil(MAX_ROWS).max(1);
    let (cols, rows) = (t.div_ceil(cf), l.div_ceil(rf));
    let mut cells = vec![0u64; cols * rows];
    for ti in 0..t {
        for li in 0..l {
            let i = ti * l + li;
            let v = match ops {
                HeatOps::Reads => m.reads.get(i).copied().unwrap_or(0),
                HeatOps::Writes => m.writes.get(i).copied().unwrap_or(0),
                HeatOps::All => {
                    m.reads.get(i).copied().unwrap_or(0) + m.writes.get(i).copied().unwrap_or(0)
                }
            };
            cells[(ti / cf) * rows + li / rf] += u64::from(v);
        }
    }
    HeatMapChart {
        device_name: m.device_name.clone(),
        ops,
        cols,
        rows,
        col_nanos: m.time_bin_nanos.saturating_mul(cf as u64),
        row_bytes: m.lba_bin_bytes.saturating_mul(rf as u64),
        cells,
    }
}

/// White → blue → dark red on a log scale.
fn heat_color(v: u64, max: u64) -> RGBColor {
    if v == 0 || max == 0 {
        return RGBColor(255, 255, 255);
    }
    let f = ((v as f64).ln_1p() / (max as f64).ln_1p()).clamp(0.0, 1.0);
    let lerp = |a: u8, b: u8, t: f64| (f64::from(a) + (f64::from(b) - f64::from(a)) * t) as u8;
    if f < 0.5 {
        let t = f * 2.0;
        RGBColor(lerp(220, 47, t), lerp(235, 111, t), lerp(250, 181, t))
    } else {
        let t = (f - 0.5) * 2.0;
        RGBColor(lerp(47, 170, t), lerp(111, 20, t), lerp(181, 40, t))
    }
}

impl Chart for HeatMapChart {
    fn id(&self) -> &'static str {
        "heatmap"
    }

    fn title(&self) -> String {
        format!(
            "Where {} went over time: {}",
            match self.ops {
                HeatOps::Reads => "reads",
                HeatOps::Writes => "writes",
                HeatOps::All => "requests",
            },
            self.device_name
        )
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<Layout, String> {
        area.fill(&WHITE).map_err(draw_error)?;
        let span_s = (self.cols as u64 * self.col_nanos) as f64 / 1e9;
        let top = (self.rows as u64 * self.row_bytes) as f64 / (1u64 << 30) as f64;
        let mut chart = ChartBuilder::on(area)
            .margin(10)
            .x_label_area_size(34)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..span_s.max(1e-9), 0f64..top.max(1e-9))
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc("seconds from the first request")
            .y_desc("offset (GiB)")
            .label_style(AXIS_FONT)
            .draw()
            .map_err(draw_error)?;
        let max = self.cells.iter().copied().max().unwrap_or(0);
        let cw = span_s / self.cols.max(1) as f64;
        let rh = top / self.rows.max(1) as f64;
        chart
            .draw_series(
                self.cells
                    .iter()
                    .enumerate()
                    .filter(|(_, &v)| v > 0)
                    .map(|(i, &v)| {
                        let (c, r) = (i / self.rows, i % self.rows);
                        let x = c as f64 * cw;
                        let y = r as f64 * rh;
                        Rectangle::new([(x, y), (x + cw, y + rh)], heat_color(v, max).filled())
                    }),
            )
            .map_err(draw_error)?;
        let (x, y) = chart.plotting_area().get_pixel_range();
        Ok(Layout {
            x_px: (x.start, x.end),
            y_px: (y.start, y.end),
        })
    }

    fn hover(&self, layout: &Layout, x: i32, y: i32) -> Option<String> {
        let fx = layout.x_fraction(x, y)?;
        let (y0, y1) = layout.y_px;
        // Pixel rows grow downwards; LBA grows upwards.
        let fy = f64::from(y1 - y) / f64::from((y1 - y0).max(1));
        let c = ((fx * self.cols as f64) as usize).min(self.cols.checked_sub(1)?);
        let r = ((fy * self.rows as f64) as usize).min(self.rows.checked_sub(1)?);
        let v = self.cells.get(c * self.rows + r)?;
        Some(format!(
            "{} requests at {}–{} from {} to {}",
            count(*v),
            bytes(r as u64 * self.row_bytes),
            bytes((r as u64 + 1) * self.row_bytes),
            duration(c as u64 * self.col_nanos),
            duration((c as u64 + 1) * self.col_nanos)
        ))
    }

    fn table(&self) -> Table {
        // Per LBA band, totals over time: the table form of "where on the disk".
        let rows = (0..self.rows)
            .rev()
            .map(|r| {
                let total: u64 = (0..self.cols).map(|c| self.cells[c * self.rows + r]).sum();
                vec![
                    format!(
                        "{}–{}",
                        bytes(r as u64 * self.row_bytes),
                        bytes((r as u64 + 1) * self.row_bytes)
                    ),
                    count(total),
                ]
            })
            .collect();
        Table {
            headers: vec!["offset range".into(), "requests".into()],
            rows,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn merges_cells_and_reads_out_the_hot_corner() {
        let (t, l) = (256u32, 256u32);
        let mut reads = vec![0u32; (t * l) as usize];
        reads[0] = 7; // first time bin, lowest LBA bin
        reads[1] = 3;
        let m = DeviceHeatMap {
            device: 0,
            device_name: "sda".into(),
            time_bins: t,
            lba_bins: l,
            time_bin_nanos: 1_000_000,
            lba_bin_bytes: 1 << 20,
            device_size_bytes: None,
            reads,
            writes: vec![0; (t * l) as usize],
        };
        let chart = heat_map_chart(&m, HeatOps::Reads);
        assert_eq!((chart.cols, chart.rows), (128, 64));
        assert_eq!(chart.cells[0], 10);
        assert_eq!(heat_map_chart(&m, HeatOps::Writes).cells[0], 0);
        let (svg, layout) = crate::charts::render_svg(&chart);
        assert!(svg.contains("<rect"));
        let text = chart
            .hover(&layout, layout.x_px.0 + 1, layout.y_px.1 - 1)
            .unwrap_or_default();
        assert!(text.starts_with("10 requests at 0 B–4.0 MiB"), "{text}");
    }
}
