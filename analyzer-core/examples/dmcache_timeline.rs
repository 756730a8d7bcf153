//! The dm-cache model's course through a trace, for comparing it with a lab run's kernel
//! (docs/validation.md): every `STEP` seconds after the first bio, the model's promotions,
//! resident blocks and read/write hits and misses so far.
//!
//! ```text
//! cargo run --release -p analyzer-core --example dmcache_timeline -- IN.bst BLOCK_BYTES CACHE_BYTES ORIGIN_BYTES wt|wb CREATED_BEFORE_S [STEP_S]
//! ```
//!
//! With `PROMOTIONS=1` in the environment it also prints every promotion as `P SECONDS OBLOCK`
//! (when the model's copy ended, seconds after the first bio; the origin block), to set beside a
//! `MIGTRACE=1` lab run's whole-block cache writes.

mod common;

use analyzer_core::cache::dmcache::{Device, DmCacheConfig, DmCacheMode, DmCacheModel};
use analyzer_core::event::Op;
use common::{cpu_secs, read_bst};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 7 {
        eprintln!(
            "usage: dmcache_timeline IN.bst BLOCK_BYTES CACHE_BYTES ORIGIN_BYTES wt|wb CREATED_BEFORE_S [STEP_S]"
        );
        std::process::exit(2);
    }
    let num = |i: usize| args[i].parse::<u64>().expect("a number");
    let (events, _) = read_bst(&args[1]).expect("readable .bst");
    let mut config = DmCacheConfig::new(num(2), num(3), num(4));
    config.mode = DmCacheMode::from_name(&args[5]).expect("wt or wb");
    let secs = |s: &str| (s.parse::<f64>().expect("seconds") * 1e9) as u64;
    config.created_before_nanos = secs(&args[6]);
    let step = args.get(7).map_or(1_000_000_000, |s| secs(s));
    let mut model = DmCacheModel::new(&config).expect("valid configuration");
    let start = events.first().map_or(0, |e| e.time_nanos);
    let mut next = start + step;
    let promotions = std::env::var_os("PROMOTIONS").is_some();
    if promotions {
        model.log_device_ops();
    }
    let mut ops = Vec::new();
    println!("t_s promotions resident read_hits read_misses write_hits write_misses");
    let row = |t: u64, m: &DmCacheModel| {
        let s = m.status();
        println!(
            "{:.2} {} {} {} {} {} {}",
            (t - start) as f64 / 1e9,
            s.promotions,
            m.resident_blocks(),
            s.read_hits,
            s.read_misses,
            s.write_hits,
            s.write_misses
        );
    };
    for e in &events {
        while e.time_nanos >= next {
            row(next, &model);
            next += step;
        }
        model.observe(e);
        if promotions {
            model.take_device_ops(&mut ops);
            for op in ops.drain(..) {
                // A whole-block write of the cache device is a promotion's copy (bio pieces
                // are at most a block and write-back whole-block writes are promotions too).
                if op.device == Device::Cache && op.op == Op::Write && op.len_bytes == num(2) {
                    let t = (e.time_nanos - start) as f64 / 1e9;
                    println!("P {t:.4} {}", op.offset_bytes / num(2));
                }
            }
        }
    }
    row(next, &model);
    eprintln!("model CPU {:.2} s", cpu_secs());
}
