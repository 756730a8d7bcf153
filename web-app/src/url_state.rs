//! Every control's state in the URL hash (`#view=overview&table=sizes`), so a copied link
//! reproduces the view. Unknown keys are kept out; values are percent-encoded.

/// The views the app has. Only views whose engine part exists are listed.
pub const VIEWS: [(&str, &str); 4] = [
    ("overview", "Overview"),
    ("hot", "Hot data"),
    ("cache", "Cache"),
    ("array", "Array"),
];

use crate::worker::predict::{ArrayParams, MAX_CONFIGS};

#[derive(Clone, Debug, PartialEq)]
pub struct UrlState {
    pub view: String,
    /// Charts shown as tables instead of drawings, by chart id.
    pub tables: Vec<String>,
    /// Heat map ops: `reads`, `writes` or `all`.
    pub heat: String,
    /// Heat map device index.
    pub device: u32,
    /// Timeline metric: `iops` or `mbps`.
    pub metric: String,
    /// Selected time window, seconds from the first request.
    pub window: Option<(f64, f64)>,
    /// Cache size on the cache view, bytes.
    pub cache_bytes: Option<u64>,
    /// Cache policy and write mode (Cache view), used by the Array view's cache tier.
    pub cache_policy: String,
    pub cache_mode: String,
    /// The Array view's layouts (`arr=raid5.6.sas-10k.65536.0,...`), 1 to 4.
    pub arrays: Vec<ArrayParams>,
    /// The Array view's outstanding I/Os.
    pub qd: u32,
    /// The Array view's IOPS-vs-latency curve (`curve=0` turns it off).
    pub curve: bool,
}

impl Default for UrlState {
    fn default() -> Self {
        UrlState {
            view: VIEWS[0].0.into(),
            tables: Vec::new(),
            heat: "all".into(),
            device: 0,
            metric: "iops".into(),
            window: None,
            cache_bytes: None,
            cache_policy: "lru".into(),
            cache_mode: "wt".into(),
            arrays: vec![ArrayParams::default()],
            qd: 16,
            curve: true,
        }
    }
}

impl UrlState {
    /// Parses a hash (with or without the leading `#`). Unknown or malformed parts fall back to
    /// defaults rather than failing: a link from a newer version still opens.
    pub fn from_hash(hash: &str) -> UrlState {
        let mut s = UrlState::default();
        for pair in hash
            .trim_start_matches('#')
            .split('&')
            .filter(|p| !p.is_empty())
        {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let v = decode(v);
            match k {
                "view" if VIEWS.iter().any(|(id, _)| *id == v) => s.view = v,
                "table" => {
                    s.tables = v
                        .split(',')
                        .filter(|t| !t.is_empty())
                        .map(str::to_owned)
                        .collect()
                }
                "heat" if matches!(v.as_str(), "reads" | "writes" | "all") => s.heat = v,
                "metric" if matches!(v.as_str(), "iops" | "mbps") => s.metric = v,
                "dev" => s.device = v.parse().unwrap_or(0),
                "win" => {
                    s.window = v.split_once('-').and_then(|(a, b)| {
                        let (a, b) = (a.parse::<f64>().ok()?, b.parse::<f64>().ok()?);
                        (a.is_finite() && b.is_finite() && a >= 0.0 && b > a).then_some((a, b))
                    })
                }
                "cache" => s.cache_bytes = v.parse().ok(),
                "cpol" if !v.is_empty() && v.len() <= 16 => s.cache_policy = v,
                "cmode" if matches!(v.as_str(), "ro" | "wt" | "wa" | "wb") => s.cache_mode = v,
                "qd" => {
                    s.qd = v
                        .parse()
                        .ok()
                        .filter(|q| (1..=256).contains(q))
                        .unwrap_or(16)
                }
                "curve" if matches!(v.as_str(), "0" | "1") => s.curve = v == "1",
                "arr" => {
                    let arrays: Vec<ArrayParams> = v
                        .split(',')
                        .filter_map(parse_array)
                        .take(MAX_CONFIGS)
                        .collect();
                    if !arrays.is_empty() {
                        s.arrays = arrays;
                    }
                }
                _ => {}
            }
        }
        s
    }

    pub fn to_hash(&self) -> String {
        let mut out = format!("#view={}", encode(&self.view));
        if !self.tables.is_empty() {
            out.push_str("&table=");
            out.push_str(&encode(&self.tables.join(",")));
        }
        let d = UrlState::default();
        if self.heat != d.heat {
            out.push_str(&format!("&heat={}", encode(&self.heat)));
        }
        if self.device != 0 {
            out.push_str(&format!("&dev={}", self.device));
        }
        if self.metric != d.metric {
            out.push_str(&format!("&metric={}", encode(&self.metric)));
        }
        if let Some((a, b)) = self.window {
            out.push_str(&format!("&win={a:.3}-{b:.3}"));
        }
        if let Some(c) = self.cache_bytes {
            out.push_str(&format!("&cache={c}"));
        }
        if self.cache_policy != d.cache_policy {
            out.push_str(&format!("&cpol={}", encode(&self.cache_policy)));
        }
        if self.cache_mode != d.cache_mode {
            out.push_str(&format!("&cmode={}", encode(&self.cache_mode)));
        }
        if self.arrays != d.arrays {
            let parts: Vec<String> = self
                .arrays
                .iter()
                .map(|a| {
                    format!(
                        "{}.{}.{}.{}.{}",
                        a.level,
                        a.disks,
                        a.disk,
                        a.chunk_bytes,
                        u8::from(a.controller_cache)
                    )
                })
                .collect();
            out.push_str(&format!("&arr={}", encode(&parts.join(","))));
        }
        if self.qd != d.qd {
            out.push_str(&format!("&qd={}", self.qd));
        }
        if self.curve != d.curve {
            out.push_str(&format!("&curve={}", u8::from(self.curve)));
        }
        out
    }

    pub fn shows_table(&self, chart: &str) -> bool {
        self.tables.iter().any(|t| t == chart)
    }

    pub fn toggle_table(&self, chart: &str) -> UrlState {
        let mut s = self.clone();
        if s.shows_table(chart) {
            s.tables.retain(|t| t != chart);
        } else {
            s.tables.push(chart.to_owned());
        }
        s
    }

    pub fn with_view(&self, view: &str) -> UrlState {
        UrlState {
            view: view.to_owned(),
            ..self.clone()
        }
    }
}

/// `raid5.6.sas-10k.65536.0`: level, disks, disk preset, chunk bytes, controller cache.
fn parse_array(s: &str) -> Option<ArrayParams> {
    let mut it = s.split('.');
    let level = it.next()?.to_owned();
    let disks = it.next()?.parse().ok().filter(|&n| (1..=64).contains(&n))?;
    let disk = it.next()?.to_owned();
    let chunk_bytes = it
        .next()?
        .parse()
        .ok()
        .filter(|&c: &u64| (4096..=(16 << 20)).contains(&c))?;
    let controller_cache = it.next()? == "1";
    (level.len() <= 16 && disk.len() <= 16).then_some(ArrayParams {
        level,
        disks,
        disk,
        chunk_bytes,
        controller_cache,
    })
}

fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b',') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn hash_round_trips_and_ignores_junk() {
        let mut s = UrlState::default()
            .toggle_table("sizes")
            .toggle_table("x y");
        s.heat = "writes".into();
        s.metric = "mbps".into();
        s.window = Some((1.5, 3.25));
        s.cache_bytes = Some(1 << 30);
        s.device = 2;
        s.cache_policy = "arc".into();
        s.cache_mode = "wb".into();
        s.qd = 4;
        s.curve = false;
        s.arrays = vec![
            ArrayParams::default(),
            ArrayParams {
                level: "raid10".into(),
                disks: 8,
                disk: "nvme".into(),
                chunk_bytes: 128 << 10,
                controller_cache: true,
            },
        ];
        let back = UrlState::from_hash(&s.to_hash());
        assert_eq!(back, s);
        assert_eq!(UrlState::from_hash("#win=5-1").window, None);
        assert_eq!(
            UrlState::from_hash("#view=nonsense&zzz=1&%"),
            UrlState::default()
        );
        assert!(!s.toggle_table("sizes").shows_table("sizes"));
        assert_eq!(decode("a%2Cb%"), "a,b%");
        // A malformed layout is dropped; a link with none keeps the default.
        assert_eq!(
            UrlState::from_hash("#arr=raid5.0.nvme.65536.0").arrays,
            UrlState::default().arrays
        );
        // Old links (no `curve`) get the curve; `curve=0` turns it off.
        assert!(UrlState::from_hash("#view=array&qd=4").curve);
        assert!(s.to_hash().contains("&curve=0"));
        assert!(!UrlState::default().to_hash().contains("curve"));
    }
}
