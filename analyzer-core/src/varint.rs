//! LEB128 variable-length integers and zigzag signed encoding, for the native format's columns.

/// Appends `value` as unsigned LEB128 (7 bits a byte, low bits first).
#[inline]
pub fn write_u64(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Reads an unsigned LEB128 value at `*pos`, advancing it. `None` when the input ends mid-value
/// or the value does not fit 64 bits.
#[inline]
pub fn read_u64(input: &[u8], pos: &mut usize) -> Option<u64> {
    let mut value: u64 = 0;
    let mut shift = 0u32;
    loop {
        let byte = *input.get(*pos)?;
        *pos += 1;
        if shift == 63 && byte > 1 {
            return None;
        }
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(value);
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

/// Maps signed to unsigned so that small magnitudes of either sign stay small.
#[inline]
pub fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

#[inline]
pub fn unzigzag(value: u64) -> i64 {
    ((value >> 1) as i64) ^ -((value & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trips(values in proptest::collection::vec(any::<u64>(), 0..64)) {
            let mut buf = Vec::new();
            for &v in &values { write_u64(&mut buf, v); }
            let mut pos = 0;
            for &v in &values { prop_assert_eq!(read_u64(&buf, &mut pos), Some(v)); }
            prop_assert_eq!(pos, buf.len());
        }

        #[test]
        fn zigzag_round_trips(v in any::<i64>()) {
            prop_assert_eq!(unzigzag(zigzag(v)), v);
        }
    }

    #[test]
    fn rejects_truncated_and_overlong() {
        let mut pos = 0;
        assert_eq!(read_u64(&[0x80, 0x80], &mut pos), None);
        let mut pos = 0;
        assert_eq!(read_u64(&[0xff; 11], &mut pos), None);
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
    }
}
