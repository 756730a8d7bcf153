//! Charts as pure code: each chart is built from results by a pure function (its series), draws
//! itself on any plotters `DrawingBackend` (canvas in the browser, SVG strings in tests), answers
//! hover read-outs from pixel positions, and can list its data as a table.

pub mod heatmap;
pub mod hits_fills;
pub mod latency_curve;
pub mod mrc;
pub mod size_histogram;
pub mod skew;
pub mod timeline;

use plotters::coord::Shift;
use plotters::prelude::*;

/// Colours shared by every chart, so reads and writes look the same everywhere.
pub const READ_COLOR: RGBColor = RGBColor(47, 111, 181);
pub const WRITE_COLOR: RGBColor = RGBColor(224, 123, 36);
pub const OTHER_COLOR: RGBColor = RGBColor(150, 150, 150);
pub const AXIS_FONT: (&str, u32) = ("sans-serif", 13);

/// Where a drawn chart put its plotting area, in backend pixels; hover maps back through it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    pub x_px: (i32, i32),
    pub y_px: (i32, i32),
}

impl Layout {
    /// The horizontal position as a fraction of the plotting area, or `None` outside it.
    pub fn x_fraction(&self, x: i32, y: i32) -> Option<f64> {
        let (x0, x1) = self.x_px;
        let (y0, y1) = self.y_px;
        if x < x0 || x > x1 || y < y0.min(y1) || y > y0.max(y1) || x1 <= x0 {
            return None;
        }
        Some(f64::from(x - x0) / f64::from(x1 - x0))
    }
}

/// A chart's data as rows, for the "show as table" toggle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// See the module documentation.
pub trait Chart: PartialEq + Clone + 'static {
    /// Stable id, used in the URL hash and as the canvas id.
    fn id(&self) -> &'static str;
    fn title(&self) -> String;
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<Layout, String>;
    /// The read-out for the pointer at backend pixel `(x, y)`, if it is over data.
    fn hover(&self, layout: &Layout, x: i32, y: i32) -> Option<String>;
    fn table(&self) -> Table;
    /// Colour keys shown above the chart (name, CSS colour).
    fn legend(&self) -> Vec<(&'static str, &'static str)> {
        Vec::new()
    }
}

/// The read/write colour key as CSS colours.
pub const READ_WRITE_LEGEND: [(&str, &str); 2] = [("reads", "#2f6fb5"), ("writes", "#e07b24")];

/// Maps a plotters drawing error to text for the chart's error line.
pub fn draw_error<E: std::fmt::Debug>(e: E) -> String {
    format!("chart could not be drawn: {e:?}")
}

#[cfg(test)]
pub(crate) fn render_svg<C: Chart>(chart: &C) -> (String, Layout) {
    let mut svg = String::new();
    let layout = {
        let area = SVGBackend::with_string(&mut svg, (640, 300)).into_drawing_area();
        let layout = chart.draw(&area).expect("chart draws");
        area.present().expect("svg presents");
        layout
    };
    (svg, layout)
}
