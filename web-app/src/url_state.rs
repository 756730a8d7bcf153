//! Every control's state in the URL hash (`#view=overview&table=sizes`), so a copied link
//! reproduces the view. Unknown keys are kept out; values are percent-encoded.

/// The views the app has. Only views whose engine part exists are listed.
pub const VIEWS: [(&str, &str); 4] = [
    ("overview", "Overview"),
    ("hot", "Hot data"),
    ("cache", "Cache"),
    ("array", "Array"),
];

use analyzer_core::array::controller_preset::ControllerPreset;
use analyzer_core::array::md::Raid10Layout;
use analyzer_core::array::md_bitmap::MdBitmapSetting;
use analyzer_core::array::DiskPreset;
use analyzer_core::cache::{Admission, Preset};
use analyzer_core::job::predict::{CacheDevicesParams, ControllerSettings};
use analyzer_core::job::simulate::model::KernelModel;

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
    /// Cache policy and write mode (Cache view), used by the Array view's cache tier. With a
    /// product preset these hold its values unless the link overrides them.
    pub cache_policy: String,
    pub cache_mode: String,
    /// Product preset, `None` for a custom cache: a kernel model by its product name
    /// (`cpreset=dm-cache`, `bcache`: what `blocksight simulate --preset dm-cache` runs; the
    /// model names `dm-cache-smq`, `bcache-kernel` read as these) or a generic preset
    /// (`dm-cache-approx`, `opencas`, ...).
    pub cache_preset: Option<String>,
    /// A link that named a kernel model with settings only the generic approximation has
    /// (an old link: `cpreset=dm-cache&cadm=smq` from before `dm-cache` meant the kernel's
    /// model) opens the approximation; this keeps the name it gave and the settings that made
    /// it so, for the view to say what ran. Not written back to the link.
    pub cache_preset_fallback: Option<(String, Vec<&'static str>)>,
    /// Kernel models: the cache size as a percentage of the footprint (`cpct=10`) instead of
    /// the slider's bytes, as `--cache-size 10%`.
    pub cache_percent: Option<f64>,
    /// bcache: `sequential_cutoff` (`cseq=1048576`), as `--seq-cutoff`.
    pub cache_seq_cutoff_bytes: Option<u64>,
    /// bcache: the bucket size (`cbucket=65536`), as `--bucket-size`.
    pub cache_bucket_bytes: Option<u64>,
    /// dm-cache: the origin's size (`corigin=...`), as `--origin-size`; `None`: the job's
    /// default (the recorded device's size, else the highest byte touched).
    pub cache_origin_bytes: Option<u64>,
    /// Admission rule (`cadm=nhit:3`, `cadm=seqcut:4194304`); `None` keeps the preset's
    /// (without a preset: `always`).
    pub cache_admission: Option<String>,
    /// Cache line size (`cline=65536`); `None` is the preset's, else the analysis's.
    pub cache_line_bytes: Option<u64>,
    /// The Array view's layouts (`arr=raid5.6.sas-10k.65536.0,...`), 1 to 4.
    pub arrays: Vec<ArrayParams>,
    /// The Array view's outstanding I/Os.
    pub qd: u32,
    /// The Array view's IOPS-vs-latency curve (`curve=0` turns it off).
    pub curve: bool,
    /// The Array view's SSD cache tier devices (`cdev=nvme.2`: preset and count), as
    /// `--cache-disk` and `--cache-disks`; default two SATA SSDs in RAID 1.
    pub cache_devices: CacheDevicesParams,
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
            cache_preset: None,
            cache_admission: None,
            cache_line_bytes: None,
            cache_preset_fallback: None,
            cache_percent: None,
            cache_seq_cutoff_bytes: None,
            cache_bucket_bytes: None,
            cache_origin_bytes: None,
            arrays: vec![ArrayParams::default()],
            qd: 16,
            curve: true,
            cache_devices: CacheDevicesParams::default(),
        }
    }
}

impl UrlState {
    /// Parses a hash (with or without the leading `#`). Unknown or malformed parts fall back to
    /// defaults rather than failing: a link from a newer version still opens.
    pub fn from_hash(hash: &str) -> UrlState {
        let mut s = UrlState::default();
        // A preset sets the policy and mode that the link does not name.
        let (mut policy_named, mut mode_named) = (false, false);
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
                "cpol" if !v.is_empty() && v.len() <= 16 => {
                    s.cache_policy = v;
                    policy_named = true;
                }
                "cmode" if matches!(v.as_str(), "ro" | "wt" | "wa" | "wb") => {
                    s.cache_mode = v;
                    mode_named = true;
                }
                "cpreset" => s.cache_preset = preset_name(&v),
                "cpct" => {
                    s.cache_percent = v
                        .parse()
                        .ok()
                        .filter(|p: &f64| p.is_finite() && *p > 0.0 && *p <= 100.0)
                }
                "cseq" => s.cache_seq_cutoff_bytes = v.parse().ok(),
                "cbucket" => {
                    s.cache_bucket_bytes = v
                        .parse()
                        .ok()
                        .filter(|&b: &u64| b.is_power_of_two() && (4096..=16 << 20).contains(&b))
                }
                "corigin" => s.cache_origin_bytes = v.parse().ok().filter(|&b: &u64| b > 0),
                "cadm" => s.cache_admission = Admission::parse(&v).ok().map(|a| a.label()),
                "cline" => {
                    s.cache_line_bytes = v
                        .parse()
                        .ok()
                        .filter(|&l: &u64| l.is_power_of_two() && (4096..=1 << 20).contains(&l))
                }
                "cdev" => {
                    if let Some(d) = parse_cache_devices(&v) {
                        s.cache_devices = d;
                    }
                }
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
        if let Some(model) = s.kernel_model() {
            // The link's settings that only the approximation has: an old link, made when
            // `dm-cache` and `bcache` meant the approximations here, opens what it ran then.
            let generic = [
                ("policy", policy_named),
                ("admission", s.cache_admission.is_some()),
                (
                    "write mode",
                    mode_named && !kernel_modes(model).contains(&s.cache_mode.as_str()),
                ),
                (
                    "line size",
                    s.cache_line_bytes.is_some_and(|l| {
                        model == KernelModel::Bcache || !dm_cache_blocks().any(|b| b == l)
                    }),
                ),
            ];
            let given: Vec<&'static str> = generic
                .iter()
                .filter(|(_, named)| *named)
                .map(|(n, _)| *n)
                .collect();
            if !given.is_empty() {
                s.cache_preset_fallback = s.cache_preset.take().map(|name| (name, given));
                s.cache_preset = Some(model.approximation().to_owned());
            } else if !mode_named {
                s.cache_mode = kernel_modes(model)[0].to_owned();
            }
        }
        if s.kernel_model().is_none() {
            s.cache_percent = None;
            s.cache_seq_cutoff_bytes = None;
            s.cache_bucket_bytes = None;
            s.cache_origin_bytes = None;
        } else if s.kernel_model() == Some(KernelModel::Bcache) {
            s.cache_origin_bytes = None;
        } else {
            s.cache_seq_cutoff_bytes = None;
            s.cache_bucket_bytes = None;
        }
        if let Some(p) = s
            .cache_preset
            .as_deref()
            .filter(|_| s.kernel_model().is_none())
            .and_then(Preset::from_name)
        {
            if !policy_named {
                s.cache_policy = p.policy.name().into();
            }
            if !mode_named {
                s.cache_mode = p.mode.name().into();
            }
        }
        s
    }

    /// The kernel model the preset names (`dm-cache`, `bcache`), if it names one.
    pub fn kernel_model(&self) -> Option<KernelModel> {
        self.cache_preset
            .as_deref()
            .and_then(KernelModel::from_preset)
    }

    /// The policy and mode a link need not name: the preset's, else the defaults.
    fn cache_baseline(&self) -> (String, String) {
        if let Some(model) = self.kernel_model() {
            return (
                UrlState::default().cache_policy,
                kernel_modes(model)[0].to_owned(),
            );
        }
        match self.cache_preset.as_deref().and_then(Preset::from_name) {
            Some(p) => (p.policy.name().into(), p.mode.name().into()),
            None => {
                let d = UrlState::default();
                (d.cache_policy, d.cache_mode)
            }
        }
    }

    /// Chooses a product preset (or none): its policy and mode replace the current ones, and
    /// the admission rule and line size go back to the preset's.
    pub fn with_cache_preset(&self, name: Option<&str>) -> UrlState {
        let mut s = self.clone();
        s.cache_preset = name.and_then(preset_name);
        s.cache_preset_fallback = None;
        if let Some(model) = s.kernel_model() {
            // The generic simulator's settings do not apply; the model's defaults do.
            s.cache_policy = UrlState::default().cache_policy;
            s.cache_mode = kernel_modes(model)[0].to_owned();
        } else if let Some(p) = s.cache_preset.as_deref().and_then(Preset::from_name) {
            s.cache_policy = p.policy.name().into();
            s.cache_mode = p.mode.name().into();
        }
        s.cache_admission = None;
        s.cache_line_bytes = None;
        s.cache_percent = None;
        s.cache_seq_cutoff_bytes = None;
        s.cache_bucket_bytes = None;
        s.cache_origin_bytes = None;
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
        let (policy, mode) = self.cache_baseline();
        if let Some(p) = &self.cache_preset {
            out.push_str(&format!("&cpreset={}", encode(p)));
        }
        if self.cache_policy != policy {
            out.push_str(&format!("&cpol={}", encode(&self.cache_policy)));
        }
        if self.cache_mode != mode {
            out.push_str(&format!("&cmode={}", encode(&self.cache_mode)));
        }
        if let Some(a) = &self.cache_admission {
            out.push_str(&format!("&cadm={}", encode(a)));
        }
        if let Some(l) = self.cache_line_bytes {
            out.push_str(&format!("&cline={l}"));
        }
        if let Some(p) = self.cache_percent {
            out.push_str(&format!("&cpct={p}"));
        }
        if let Some(b) = self.cache_seq_cutoff_bytes {
            out.push_str(&format!("&cseq={b}"));
        }
        if let Some(b) = self.cache_bucket_bytes {
            out.push_str(&format!("&cbucket={b}"));
        }
        if let Some(b) = self.cache_origin_bytes {
            out.push_str(&format!("&corigin={b}"));
        }
        if self.arrays != d.arrays {
            let parts: Vec<String> = self
                .arrays
                .iter()
                .map(|a| {
                    let c = &a.controller;
                    let mut t = format!(
                        "{}.{}.{}.{}.{}",
                        a.level,
                        a.disks,
                        a.disk,
                        a.chunk_bytes,
                        u8::from(a.controller_cache)
                    );
                    let extra = [
                        ("ctl", c.preset.clone()),
                        ("r10", c.md_raid10_layout.clone()),
                        ("sc", c.md_stripe_cache_size.map(|n| n.to_string())),
                        ("gt", c.md_group_thread_cnt.map(|n| n.to_string())),
                        ("bm", c.md_bitmap.clone()),
                        ("g", a.groups.map(|n| n.to_string())),
                        (
                            "f",
                            (!a.failed.is_empty()).then(|| {
                                let f: Vec<String> = a.failed.iter().map(u32::to_string).collect();
                                f.join("-")
                            }),
                        ),
                        ("rb", a.rebuilding.then(|| "1".to_owned())),
                    ];
                    for (key, value) in extra {
                        if let Some(v) = value {
                            t.push_str(&format!(".{key}:{v}"));
                        }
                    }
                    t
                })
                .collect();
            out.push_str(&format!("&arr={}", encode(&parts.join(","))));
        }
        if self.cache_devices != d.cache_devices {
            let c = &self.cache_devices;
            out.push_str(&format!(
                "&cdev={}",
                encode(&format!("{}.{}", c.disk, c.count))
            ));
        }
        if self.qd != d.qd {
            out.push_str(&format!("&qd={}", self.qd));
        }
        if self.curve != d.curve {
            out.push_str(&format!("&curve={}", u8::from(self.curve)));
        }
        out
    }

    /// The selected time window in nanoseconds after the first request, as the worker cuts it
    /// (the load of the window and the Cache view's simulation use this one conversion).
    pub fn window_nanos(&self) -> Option<(u64, u64)> {
        self.window
            .map(|(a, b)| ((a * 1e9) as u64, (b * 1e9) as u64))
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

/// A preset name as a link or the picker gives it, canonical: a kernel model by its product
/// name (`dm-cache-smq` reads as `dm-cache`), else a generic preset's name; `None` if unknown.
fn preset_name(name: &str) -> Option<String> {
    match KernelModel::from_preset(name) {
        Some(model) => Some(model.product_name().to_owned()),
        None => Preset::from_name(name).map(|p| p.name.to_owned()),
    }
}

/// A kernel model's write modes as the Cache view offers them, its default first (dm-cache
/// writeback, bcache writethrough; the names `blocksight simulate --mode` takes).
pub fn kernel_modes(model: KernelModel) -> &'static [&'static str] {
    match model {
        KernelModel::DmCacheSmq => &["wb", "wt"],
        KernelModel::Bcache => &["wt", "wb", "wa"],
    }
}

/// dm-cache block sizes the Cache view offers (`cline`): the multiples of 32 KiB among the
/// line sizes, 32 KiB to 1 MiB, as `--line-size` for `--preset dm-cache`.
pub fn dm_cache_blocks() -> impl Iterator<Item = u64> {
    crate::units::powers_of_two(32 << 10, 1 << 20)
}

/// `raid5.6.sas-10k.65536.0`: level, disks, disk preset, chunk bytes, controller cache; then
/// optional `key:value` fields: `ctl:` a controller preset, and Linux md's settings, `r10:` the
/// RAID 10 layout, `sc:` stripe_cache_size, `gt:` group_thread_cnt, `bm:` the bitmap; `g:` the
/// groups of RAID 50/60 (or a controller's RAID 10), `f:` failed disks (`f:0-6`), `rb:1` md
/// rebuilding them beside the load. A field whose
/// value is not one the Array view offers is left out (the layout keeps its default), and groups
/// or failed disks the layout cannot take are pruned as the editor does.
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
    let mut controller = ControllerSettings::default();
    let (mut groups, mut failed, mut rebuilding) = (None, Vec::new(), false);
    for field in it {
        let Some((key, v)) = field.split_once(':') else {
            continue;
        };
        match key {
            "ctl" => controller.preset = ControllerPreset::by_name(v).map(|p| p.name.to_owned()),
            "r10" => controller.md_raid10_layout = Raid10Layout::from_name(v).map(|l| l.name()),
            "sc" => {
                controller.md_stripe_cache_size =
                    v.parse().ok().filter(|n| (17..=32_768).contains(n))
            }
            "gt" => controller.md_group_thread_cnt = v.parse().ok().filter(|&n: &u32| n <= 64),
            "bm" => {
                controller.md_bitmap =
                    (v.len() <= 24 && MdBitmapSetting::parse(v).is_ok()).then(|| v.to_owned())
            }
            "g" => groups = v.parse().ok().filter(|n| (1..=64).contains(n)),
            "f" => {
                failed = v
                    .split('-')
                    .map(|d| d.parse().ok().filter(|&d: &u32| d < disks))
                    .collect::<Option<Vec<u32>>>()
                    .filter(|f| f.len() <= 64)
                    .unwrap_or_default()
            }
            "rb" => rebuilding = v == "1",
            _ => {}
        }
    }
    let mut params = ArrayParams {
        level,
        disks,
        disk,
        chunk_bytes,
        controller_cache,
        controller,
        groups,
        failed,
        rebuilding,
        ..ArrayParams::default()
    };
    // md's settings mean nothing behind a hardware controller, nor on levels without them;
    // groups and failed disks only where the layout takes them.
    params.prune_settings();
    (params.level.len() <= 16 && params.disk.len() <= 16).then_some(params)
}

/// The Array view's cache devices: the flash presets, 1 to 4 of them (RAID 1 when two, RAID 0
/// otherwise, as the job builds them).
pub const CACHE_DEVICE_COUNTS: [u32; 4] = [1, 2, 3, 4];

/// The disk presets the Array view offers for its cache tier: the flash ones.
pub fn cache_device_presets() -> impl Iterator<Item = DiskPreset> {
    DiskPreset::ALL
        .into_iter()
        .filter(|p| matches!(p.model(), analyzer_core::array::DeviceModel::Ssd(_)))
}

/// `nvme.2`: a flash preset and a count the view offers.
fn parse_cache_devices(s: &str) -> Option<CacheDevicesParams> {
    let (disk, count) = s.split_once('.')?;
    let disk = cache_device_presets().find(|p| p.name() == disk)?;
    let count = count
        .parse()
        .ok()
        .filter(|n| CACHE_DEVICE_COUNTS.contains(n))?;
    Some(CacheDevicesParams {
        disk: disk.name().to_owned(),
        count,
    })
}

fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b',' | b':') {
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
    fn array_controllers_and_md_settings_round_trip() {
        let arrays = vec![
            ArrayParams {
                level: "raid6".into(),
                disks: 8,
                disk: "nvme".into(),
                controller: ControllerSettings {
                    md_stripe_cache_size: Some(4096),
                    md_group_thread_cnt: Some(2),
                    md_bitmap: Some("none".into()),
                    ..ControllerSettings::default()
                },
                ..ArrayParams::default()
            },
            ArrayParams {
                level: "raid10".into(),
                disks: 5,
                controller: ControllerSettings {
                    preset: Some("intel-vroc".into()),
                    md_raid10_layout: Some("f2".into()),
                    ..ControllerSettings::default()
                },
                ..ArrayParams::default()
            },
            ArrayParams {
                controller_cache: true,
                controller: ControllerSettings {
                    preset: Some("perc-h730".into()),
                    ..ControllerSettings::default()
                },
                ..ArrayParams::default()
            },
        ];
        let s = UrlState {
            arrays,
            ..UrlState::default()
        };
        let hash = s.to_hash();
        assert!(
            hash.contains("raid6.8.nvme.65536.0.sc:4096.gt:2.bm:none,")
                && hash.contains("raid10.5.sas-10k.65536.0.ctl:intel-vroc.r10:f2,")
                && hash.contains("raid5.6.sas-10k.65536.1.ctl:perc-h730"),
            "{hash}"
        );
        assert_eq!(UrlState::from_hash(&hash), s);
        // A link with values the view does not offer keeps md's defaults for them; md's
        // settings behind a hardware controller are dropped, its preset kept.
        let junk = UrlState::from_hash(
            "#arr=raid5.6.nvme.65536.0.ctl:nope.sc:3.gt:x.bm:7.r10:z9.zz:1,raid5.6.nvme.65536.1.ctl:hpe-p421.sc:512,raid1.2.nvme.65536.0.bm:internal:128MiB.sc:4096",
        );
        // A bitmap chunk mdadm takes, as the CLI's --md-bitmap takes it; a stripe cache on
        // RAID 1, which has none, dropped.
        let chunked = &junk.arrays[2];
        assert_eq!(chunked.controller.md_stripe_cache_size, None);
        assert_eq!(
            chunked.controller.md_bitmap.as_deref(),
            Some("internal:128MiB")
        );
        assert!(chunked.config().is_ok());
        assert_eq!(junk.arrays[0].controller, ControllerSettings::default());
        assert_eq!(
            junk.arrays[1].controller,
            ControllerSettings {
                preset: Some("hpe-p421".into()),
                ..ControllerSettings::default()
            }
        );
        // Links from before these fields open as they did.
        let old = &UrlState::from_hash("#arr=raid5.6.nvme.65536.1").arrays[0];
        assert!(old.controller_cache);
        assert_eq!(old.controller, ControllerSettings::default());
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn array_links_carry_the_cache_devices() {
        let s = UrlState {
            cache_devices: CacheDevicesParams {
                disk: "nvme".into(),
                count: 4,
            },
            ..UrlState::default()
        };
        let hash = s.to_hash();
        assert!(hash.contains("cdev=nvme.4"), "{hash}");
        assert_eq!(UrlState::from_hash(&hash), s);
        assert!(!UrlState::default().to_hash().contains("cdev"));
        // Presets that are not flash, counts the view does not offer, junk: the default.
        for junk in [
            "cdev=sas-15k.2",
            "cdev=nvme.9",
            "cdev=nvme",
            "cdev=.2",
            "cdev=nvme.x",
        ] {
            assert_eq!(
                UrlState::from_hash(junk).cache_devices,
                CacheDevicesParams::default(),
                "{junk}"
            );
        }
        let presets: Vec<_> = cache_device_presets().map(|p| p.name()).collect();
        assert_eq!(presets, ["sata-ssd", "nvme"]);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn array_links_carry_groups_and_failed_disks() {
        let s = UrlState {
            arrays: vec![
                ArrayParams {
                    level: "raid60".into(),
                    disks: 12,
                    groups: Some(3),
                    failed: vec![0, 1, 8],
                    ..ArrayParams::default()
                },
                ArrayParams {
                    level: "raid10".into(),
                    disks: 8,
                    failed: vec![2],
                    rebuilding: true,
                    ..ArrayParams::default()
                },
            ],
            ..UrlState::default()
        };
        let hash = s.to_hash();
        assert!(
            hash.contains(
                "raid60.12.sas-10k.65536.0.g:3.f:0-1-8,raid10.8.sas-10k.65536.0.f:2.rb:1"
            ),
            "{hash}"
        );
        assert_eq!(UrlState::from_hash(&hash), s);
        // Groups a level does not take, disks out of range and failures the layout does not
        // survive are pruned as the editor prunes them.
        let junk = UrlState::from_hash(
            "#arr=raid5.6.nvme.65536.0.g:2.f:0-1.rb:1,raid5.6.nvme.65536.0.f:9.rb:1,raid50.12.nvme.65536.0.g:5.f:x,raid0.4.nvme.65536.0.f:1",
        );
        let got: Vec<_> = junk
            .arrays
            .iter()
            .map(|a| (a.groups, a.failed.clone(), a.rebuilding))
            .collect();
        assert_eq!(
            got,
            vec![
                (None, vec![0], true),
                (None, vec![], false),
                (None, vec![], false),
                (None, vec![], false)
            ]
        );
        assert!(junk.arrays.iter().all(|a| a.config().is_ok()));
    }

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
                ..ArrayParams::default()
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
        // Presets: their policy and mode unless the link names others. An old link that
        // named `dm-cache` or `bcache` with settings only the approximation has (from before
        // these names meant the kernels' models) opens the approximation, and says so.
        let p = UrlState::from_hash("#view=cache&cpreset=dm-cache&cadm=seqcut:4194304");
        assert_eq!(p.cache_preset.as_deref(), Some("dm-cache-approx"));
        assert_eq!(
            p.cache_preset_fallback,
            Some(("dm-cache".to_owned(), vec!["admission"]))
        );
        assert_eq!(p.kernel_model(), None);
        assert_eq!(
            (p.cache_policy.as_str(), p.cache_mode.as_str()),
            ("slru", "wb")
        );
        assert_eq!(p.cache_admission.as_deref(), Some("seqcut:4194304"));
        assert_eq!(
            p.to_hash(),
            "#view=cache&cpreset=dm-cache-approx&cadm=seqcut:4194304"
        );
        let written = UrlState::from_hash(&p.to_hash());
        assert_eq!(written.cache_preset_fallback, None);
        assert_eq!(
            UrlState {
                cache_preset_fallback: None,
                ..p
            },
            written
        );
        let o = UrlState::from_hash("#cmode=wt&cpreset=bcache&cpol=arc&cline=65536&cadm=nhit:2");
        assert_eq!(o.cache_preset.as_deref(), Some("bcache-approx"));
        assert_eq!(
            o.cache_preset_fallback,
            Some((
                "bcache".to_owned(),
                vec!["policy", "admission", "line size"]
            ))
        );
        assert_eq!(
            (o.cache_policy.as_str(), o.cache_mode.as_str()),
            ("arc", "wt")
        );
        assert_eq!(o.cache_line_bytes, Some(65536));
        assert_eq!(
            UrlState::from_hash(&o.to_hash()),
            UrlState {
                cache_preset_fallback: None,
                ..o
            }
        );
        let old = UrlState::from_hash("#view=cache&cpol=arc&cmode=wb");
        assert_eq!(old.cache_preset, None);
        assert_eq!(old.cache_admission, None);
        assert_eq!(
            (old.cache_policy.as_str(), old.cache_mode.as_str()),
            ("arc", "wb")
        );
        let junk = UrlState::from_hash("#cpreset=nope&cadm=nhit:0&cline=3000");
        assert_eq!(junk, UrlState::default());
        let chosen = old.with_cache_preset(Some("cachecade1"));
        assert_eq!(
            (chosen.cache_policy.as_str(), chosen.cache_mode.as_str()),
            ("lru", "ro")
        );
        assert_eq!(chosen.with_cache_preset(None).cache_preset, None);
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

    /// Issue 10: a link's `cpreset=dm-cache` (or `bcache`) means what `blocksight simulate
    /// --preset dm-cache` means, the kernel's model, with the model's own settings in the
    /// link; the model names read as the product names; the approximations keep their names.
    #[wasm_bindgen_test(unsupported = test)]
    fn issue_10_product_names_in_links_are_the_kernel_models() {
        let d = UrlState::from_hash("#view=cache&cpreset=dm-cache&cache=67108864");
        assert_eq!(d.kernel_model(), Some(KernelModel::DmCacheSmq));
        assert_eq!(d.cache_preset.as_deref(), Some("dm-cache"));
        assert_eq!(d.cache_preset_fallback, None);
        assert_eq!(d.cache_mode, "wb", "dm-cache's default mode");
        assert_eq!(d.to_hash(), "#view=cache&cache=67108864&cpreset=dm-cache");
        let smq = UrlState::from_hash(
            "#cpreset=dm-cache-smq&cmode=wt&cline=131072&corigin=1073741824&cpct=12.5",
        );
        assert_eq!(smq.cache_preset.as_deref(), Some("dm-cache"));
        assert_eq!(
            (
                smq.cache_mode.as_str(),
                smq.cache_line_bytes,
                smq.cache_origin_bytes,
                smq.cache_percent
            ),
            ("wt", Some(131_072), Some(1 << 30), Some(12.5))
        );
        assert_eq!(UrlState::from_hash(&smq.to_hash()), smq);
        let b = UrlState::from_hash("#cpreset=bcache-kernel&cmode=wa&cseq=1048576&cbucket=16384");
        assert_eq!(b.kernel_model(), Some(KernelModel::Bcache));
        assert_eq!(
            (
                b.cache_mode.as_str(),
                b.cache_seq_cutoff_bytes,
                b.cache_bucket_bytes
            ),
            ("wa", Some(1 << 20), Some(16_384))
        );
        assert_eq!(
            b.to_hash(),
            "#view=overview&cpreset=bcache&cmode=wa&cseq=1048576&cbucket=16384"
        );
        assert_eq!(UrlState::from_hash(&b.to_hash()), b);
        // dm-cache has no read-only mode and no 4 KiB blocks: the approximation's settings.
        let ro = UrlState::from_hash("#cpreset=dm-cache&cmode=ro");
        assert_eq!(ro.cache_preset.as_deref(), Some("dm-cache-approx"));
        assert_eq!(ro.cache_mode, "ro");
        assert_eq!(
            dm_cache_blocks().collect::<Vec<_>>(),
            [32 << 10, 64 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20]
        );
        let small = UrlState::from_hash("#cpreset=dm-cache&cline=4096");
        assert_eq!(
            small.cache_preset_fallback,
            Some(("dm-cache".to_owned(), vec!["line size"]))
        );
        // The approximations by their own names, and the models' settings only with a model.
        let a = UrlState::from_hash("#cpreset=bcache-approx&cseq=1048576&cpct=5");
        assert_eq!(a.cache_preset.as_deref(), Some("bcache-approx"));
        assert_eq!((a.cache_seq_cutoff_bytes, a.cache_percent), (None, None));
        // Choosing a model takes its defaults and drops the generic settings.
        let chosen = a
            .with_cache_preset(Some("bcache-approx"))
            .with_cache_preset(Some("dm-cache"));
        assert_eq!(
            (chosen.cache_policy.as_str(), chosen.cache_mode.as_str()),
            ("lru", "wb")
        );
        assert_eq!(chosen.to_hash(), "#view=overview&cpreset=dm-cache");
    }
}
