//! Miss-ratio-curve throughput: the exact LRU curve (stack distances over a Fenwick tree), SHARDS
//! fixed-rate and fixed-size, and MiniSim for one policy, on the deterministic synthetic workload
//! (`mrc::synth`: Zipf hot set, scans, drift) of 2M requests, one thread.
//!
//! The 100M-request exact and 1B-request SHARDS runs are too long for criterion:
//! `scripts/bench-mrc.sh` runs them (`examples/mrc_scale.rs`) with peak RSS.

use analyzer_core::cache::PolicyKind;
use analyzer_core::mrc::minisim::{MiniSim, MiniSimConfig};
use analyzer_core::mrc::shards::ShardsMode;
use analyzer_core::mrc::synth::{Synthetic, SyntheticConfig};
use analyzer_core::mrc::{linear_sizes, LruMrc, SizeSpec};
use analyzer_core::{IoEvent, TraceHeader};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const REQUESTS: u64 = 2_000_000;

fn events() -> Vec<IoEvent> {
    Synthetic::new(SyntheticConfig {
        seed: 7,
        requests: REQUESTS,
        with_latency: false,
        ..SyntheticConfig::default()
    })
    .collect()
}

fn lru(c: &mut Criterion) {
    let events = events();
    let mut g = c.benchmark_group("mrc");
    g.sample_size(10);
    g.throughput(Throughput::Elements(REQUESTS));
    type Make = fn() -> LruMrc;
    let cases: [(&str, Make); 4] = [
        ("exact", || LruMrc::exact(4096)),
        ("shards_rate_0.001", || {
            LruMrc::shards(4096, ShardsMode::FixedRate { rate: 0.001 })
        }),
        ("shards_rate_0.01", || {
            LruMrc::shards(4096, ShardsMode::FixedRate { rate: 0.01 })
        }),
        ("shards_size_64k", || {
            LruMrc::shards(4096, ShardsMode::FixedSize { max_lines: 65536 })
        }),
    ];
    for (name, make) in cases {
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut m = make();
                events.iter().for_each(|e| m.observe(e));
                m.finish(&SizeSpec::Count(100), &TraceHeader::default())
                    .points
                    .len()
            })
        });
    }
    let mut probe = LruMrc::exact(4096);
    events.iter().for_each(|e| probe.observe(e));
    let sizes = linear_sizes(probe.footprint_lines(), 50);
    for policy in [PolicyKind::Lru, PolicyKind::S3Fifo] {
        g.bench_function(format!("minisim_{}_50_sizes", policy.name()), |b| {
            b.iter(|| {
                let mut m =
                    MiniSim::new(MiniSimConfig::new(policy, 4096, sizes.clone())).expect("config");
                events.iter().for_each(|e| m.observe(e));
                m.finish(&TraceHeader::default()).points.len()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, lru);
criterion_main!(benches);
