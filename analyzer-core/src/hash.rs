//! Fast, deterministic hashing for block addresses: the mixer behind spatial sampling (SHARDS)
//! and a `BuildHasher` for hash maps keyed by block numbers.
//!
//! Deterministic on every platform (no random seed), so results are reproducible and the native
//! CLI and the browser agree to the last digit.

pub mod table;

use std::hash::{BuildHasherDefault, Hasher};

pub use self::table::BlockTable;

/// splitmix64's finaliser: a bijection on u64 with good avalanche, so `mix64(x) % m` is uniform
/// even for sequential block numbers.
#[inline]
pub fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Combines a device index and a block number into one key: the device in the top 24 bits, the
/// block in the low 40. Distinct for up to 16 Mi devices of up to 2^40 blocks each (4 PiB at 4 KiB
/// blocks); beyond that keys may collide, which only merges two blocks' statistics.
#[inline]
pub fn block_key(device: u32, block: u64) -> u64 {
    block ^ (u64::from(device) << BLOCK_KEY_DEVICE_SHIFT)
}

/// Where [`block_key`] puts the device index.
pub const BLOCK_KEY_DEVICE_SHIFT: u32 = 40;

/// The device index and block number of a [`block_key`] (exact for blocks below 2^40).
#[inline]
pub fn split_block_key(key: u64) -> (u32, u64) {
    (
        (key >> BLOCK_KEY_DEVICE_SHIFT) as u32,
        key & ((1 << BLOCK_KEY_DEVICE_SHIFT) - 1),
    )
}

/// A `Hasher` for integer keys: one multiply-mix per key, far cheaper than SipHash. Not
/// DoS-resistant, which does not matter for keys taken from a trace the user analyses locally.
#[derive(Default, Clone, Copy)]
pub struct IntHasher(u64);

impl Hasher for IntHasher {
    #[inline]
    fn finish(&self) -> u64 {
        mix64(self.0)
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8)) ^ u64::from(b);
        }
    }
    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }
    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.0 ^= u64::from(n);
    }
    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.0 ^= n as u64;
    }
}

pub type BuildIntHasher = BuildHasherDefault<IntHasher>;
pub type IntMap<K, V> = std::collections::HashMap<K, V, BuildIntHasher>;
pub type IntSet<K> = std::collections::HashSet<K, BuildIntHasher>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_keys_split_back() {
        for (device, block) in [(0, 0), (1, 5), (4095, (1 << 40) - 1), (65_535, 123_456_789)] {
            assert_eq!(split_block_key(block_key(device, block)), (device, block));
        }
    }

    #[test]
    fn mix64_spreads_sequential_keys() {
        let below = (0..100_000u64).filter(|&b| mix64(b) % 1000 < 10).count();
        // 1% expected: 1000 ± a few standard deviations (about 31).
        assert!((850..1150).contains(&below), "{below}");
    }
}
