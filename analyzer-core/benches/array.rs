//! Array-model throughput: simulated back-end (member-disk) requests per second of host CPU for a
//! RAID 5 of 8 hard disks in closed loop. The target is at least 5 million back-end requests/s.
//!
//! Run: `cargo bench -p analyzer-core --bench array`.

use analyzer_core::array::device::DiskPreset;
use analyzer_core::array::{
    run_synthetic, ArrayConfig, ControllerModel, ProfileKind, StandardLevel, Synthetic,
};
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};

const REQUESTS: u64 = 200_000;

fn bench(c: &mut Criterion) {
    let cfg = ArrayConfig::standard(
        StandardLevel::Raid5,
        8,
        DiskPreset::Sata7k2.model(),
        65536,
        ControllerModel::software(),
    )
    .expect("valid config");
    let mut group = c.benchmark_group("array_raid5x8_hdd_closed_loop");
    group.sample_size(10);
    for (name, profile, qd) in [
        ("4k_random_read_qd8", ProfileKind::RandRead4k, 8),
        ("4k_random_read_qd32", ProfileKind::RandRead4k, 32),
        ("oltp_8k_qd32", ProfileKind::Oltp8k, 32),
        ("64k_seq_read_qd4", ProfileKind::SeqRead64k, 4),
    ] {
        let w = Synthetic {
            spec: profile.spec(),
            span_bytes: 1 << 40,
            outstanding: qd,
            requests: REQUESTS,
            seed: 1,
            cache_warmup_requests: 0,
        };
        // Back-end requests per run, measured once (the run is deterministic).
        let backend = {
            let mut e = cfg.engine();
            let _ = &mut e;
            let r = run_synthetic(
                &cfg,
                &Synthetic {
                    requests: REQUESTS,
                    ..w
                },
                None,
            );
            // The measured window excludes the warm-up tenth; scale to the whole run.
            (r.backend_requests as f64 * REQUESTS as f64 / r.requests.max(1) as f64) as u64
        };
        group.throughput(Throughput::Elements(backend));
        group.bench_function(name, |b| {
            b.iter(|| black_box(run_synthetic(&cfg, &w, None)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
