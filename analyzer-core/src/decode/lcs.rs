//! libCacheSim's `lcs` binary traces (its own format since 2024, versions 1 to 8; what its
//! `traceConv` and `Util.convert_to_lcs` write): an 8 KiB little-endian header, then packed
//! fixed-size records.
//!
//! Header: `u64 start_magic` (`0x123456789abcdef0`), `u64 version`, 8,000 bytes of trace
//! statistics (their second field, at byte 24, is the number of requests), 168 unused bytes,
//! `u64 end_magic` (the same value) at byte 8,184. Records by version:
//!
//! | version | bytes | fields |
//! |---|---|---|
//! | 1 | 24 | `u32 clock_time, u64 obj_id, u32 obj_size, i64 next_access_vtime` (oracleGeneral's) |
//! | 2 | 28 | as 1 with `u32 op:8, tenant:24` before `next_access_vtime` |
//! | 3 | 36 | `u32 clock_time, u64 obj_id, i64 obj_size, u32 op:8, tenant:24, u32 ttl, i64 next_access_vtime` |
//! | 4–8 | 40, 44, 52, 68, 100 | version 3 followed by 1, 2, 4, 8 or 16 `u32` features |
//!
//! A record is a block request exactly as an oracleGeneral record is (`decode::oracle_general`
//! says why): `obj_size` bytes at `obj_id × 512` bytes, at `clock_time` seconds. The operation
//! (versions 2 on) is libCacheSim's: `read`, `get`, `gets` and `nop` (what version 1 records
//! carry) are reads, `write`, `set`, `add`, `cas`, `replace`, `append`, `prepend`, `incr`,
//! `decr` and `update` writes, `delete` a discard. The tenant (versions 2 on) is the device,
//! named `tenantN`; version 1 has one device, `lcs`. TTLs, features and `next_access_vtime`
//! (future knowledge) are not part of the trace model and are dropped.
//!
//! The start magic makes detection certain. A header that is not an lcs header, or names a
//! version beyond 8, is an error naming its byte; a record that cannot be a request (an
//! unknown operation, a negative or oversized v3 size) is skipped and named by its byte offset;
//! a file that ends before the number of requests its header gives counts the missing ones as
//! skipped, with one reason.

use std::collections::HashMap;

use crate::decode::push_buffer::PushBuffer;
use crate::decode::{DecodeError, Decoder, Diagnostics};
use crate::event::{IoEvent, Op, TraceHeader};
use crate::format::Confidence;

const FORMAT: &str = "lcs";
/// `start_magic` and `end_magic`.
pub const MAGIC: u64 = 0x1234_5678_9abc_def0;
/// The header's size.
pub const HEADER_BYTES: usize = 8192;
/// Where the header's request count (`stat.n_req`) and `end_magic` are.
const N_REQ_AT: usize = 24;
const END_MAGIC_AT: usize = HEADER_BYTES - 8;
const SECTOR_BYTES: u64 = 512;

/// A record's size for each version (index = version).
const RECORD_BYTES: [usize; 9] = [0, 24, 28, 36, 40, 44, 52, 68, 100];
const MAX_RECORD_BYTES: usize = 100;

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

/// libCacheSim's operation codes (`req_op_e`) as block operations.
fn op_of(code: u8) -> Option<Op> {
    match code {
        0 | 1 | 2 | 12 => Some(Op::Read),
        3..=8 | 10 | 11 | 13 | 14 => Some(Op::Write),
        9 => Some(Op::Discard),
        _ => None,
    }
}

/// Certain when the input starts with the start magic.
pub fn sniff(head: &[u8]) -> Confidence {
    if head.len() >= 8 && u64_at(head, 0) == MAGIC {
        Confidence::Yes
    } else {
        Confidence::No
    }
}

/// Push decoder for lcs traces.
pub struct LcsDecoder {
    input: PushBuffer,
    header: TraceHeader,
    diagnostics: Diagnostics,
    finished: bool,
    failed: bool,
    /// Set once the header is read.
    version: Option<u64>,
    /// The header's request count (`None` when it gives none).
    n_req: Option<u64>,
    records: u64,
    /// Tenant -> device index.
    tenants: HashMap<u32, u32>,
    /// The tenant looked up last and its device: records mostly repeat it.
    last_tenant: Option<(u32, u32)>,
    /// The short-file reason was given.
    counted_missing: bool,
}

impl LcsDecoder {
    pub fn new() -> LcsDecoder {
        LcsDecoder {
            input: PushBuffer::default(),
            header: TraceHeader::new(FORMAT),
            diagnostics: Diagnostics::default(),
            finished: false,
            failed: false,
            version: None,
            n_req: None,
            records: 0,
            tenants: HashMap::new(),
            last_tenant: None,
            counted_missing: false,
        }
    }

    fn fail(&mut self, at: u64, why: String) -> DecodeError {
        self.failed = true;
        self.input.discard();
        DecodeError::at_byte(FORMAT, at, why)
    }

    /// Reads the header from the input (which holds all of it).
    fn read_header(&mut self) -> Result<(), DecodeError> {
        let h = &self.input.unread()[..HEADER_BYTES];
        let start = u64_at(h, 0);
        if start != MAGIC {
            return Err(self.fail(
                0,
                format!("expected the lcs start magic 0x{MAGIC:x}, found 0x{start:x}"),
            ));
        }
        let version = u64_at(h, 8);
        let end = u64_at(h, END_MAGIC_AT);
        let n_req = u64_at(h, N_REQ_AT) as i64;
        if !(1..=8).contains(&version) {
            return Err(self.fail(
                8,
                format!("lcs version {version}: only versions 1 to 8 are defined"),
            ));
        }
        if end != MAGIC {
            return Err(self.fail(
                END_MAGIC_AT as u64,
                format!("expected the lcs end magic 0x{MAGIC:x}, found 0x{end:x}"),
            ));
        }
        self.version = Some(version);
        self.n_req = u64::try_from(n_req).ok().filter(|&n| n > 0);
        if version == 1 {
            self.header.device_index("lcs");
        }
        self.input.consume(HEADER_BYTES);
        Ok(())
    }

    /// The event of the record `r` (of `version`), or why it cannot be one.
    fn event_of(&mut self, version: u64, r: &[u8]) -> Result<IoEvent, String> {
        let clock_time = u32_at(r, 0);
        let obj_id = u64_at(r, 4);
        let (len, op_word) = if version <= 2 {
            (
                u64::from(u32_at(r, 12)),
                (version == 2).then(|| u32_at(r, 16)),
            )
        } else {
            (u64_at(r, 12), Some(u32_at(r, 20)))
        };
        let len_bytes = u32::try_from(len as i64)
            .map_err(|_| format!("object size {} is not a request length", len as i64))?;
        let (op, device) = match op_word {
            None => (Op::Read, 0),
            Some(word) => {
                let code = (word & 0xff) as u8;
                let op = op_of(code)
                    .ok_or_else(|| format!("operation {code} is not one of libCacheSim's"))?;
                (op, self.tenant_device(word >> 8)?)
            }
        };
        Ok(IoEvent {
            time_nanos: u64::from(clock_time) * 1_000_000_000,
            device,
            offset_bytes: obj_id.wrapping_mul(SECTOR_BYTES),
            len_bytes,
            op,
            latency_nanos: None,
            pid: None,
        })
    }

    fn tenant_device(&mut self, tenant: u32) -> Result<u32, String> {
        match self.last_tenant {
            Some((t, i)) if t == tenant => return Ok(i),
            _ => {}
        }
        let i = match self.tenants.get(&tenant) {
            Some(&i) => i,
            None => self.new_tenant(tenant)?,
        };
        self.last_tenant = Some((tenant, i));
        Ok(i)
    }

    fn new_tenant(&mut self, tenant: u32) -> Result<u32, String> {
        if self.header.devices.len() >= crate::native::MAX_DEVICES {
            return Err(format!(
                "tenant {tenant} is past the {} devices a trace may have",
                crate::native::MAX_DEVICES
            ));
        }
        let i = self.header.device_index(&format!("tenant{tenant}"));
        self.tenants.insert(tenant, i);
        Ok(i)
    }
}

impl Default for LcsDecoder {
    fn default() -> Self {
        LcsDecoder::new()
    }
}

impl Decoder for LcsDecoder {
    fn push(&mut self, bytes: &[u8]) {
        if !self.failed {
            self.input.push(bytes);
        }
    }

    fn next_event(&mut self) -> Result<Option<IoEvent>, DecodeError> {
        if self.failed {
            return Ok(None);
        }
        let version = match self.version {
            Some(v) => v,
            None => {
                let have = self.input.unread().len();
                if have < HEADER_BYTES {
                    if self.finished && have > 0 {
                        // Too short for its header: not this format, or cut within it.
                        if u64_at_or_zero(self.input.unread()) != MAGIC {
                            return Err(self.fail(0, "expected the lcs start magic".into()));
                        }
                        return Err(self.fail(
                            have as u64,
                            format!("the input ends within the {HEADER_BYTES}-byte lcs header"),
                        ));
                    }
                    return Ok(None);
                }
                self.read_header()?;
                self.version.unwrap_or(1)
            }
        };
        let size = RECORD_BYTES[version as usize];
        loop {
            if self.input.unread().len() < size {
                if self.finished {
                    self.diagnostics.truncated_tail_bytes += self.input.discard() as u64;
                    self.count_missing();
                }
                return Ok(None);
            }
            let at = self.input.offset();
            let mut record = [0u8; MAX_RECORD_BYTES];
            record[..size].copy_from_slice(&self.input.unread()[..size]);
            self.input.consume(size);
            self.records += 1;
            match self.event_of(version, &record) {
                Ok(e) => return Ok(Some(e)),
                Err(why) => self
                    .diagnostics
                    .skip(|| format!("{FORMAT}: record at byte {at}: {why}")),
            }
        }
    }

    fn finish(&mut self) {
        self.finished = true;
    }

    fn header(&self) -> &TraceHeader {
        &self.header
    }

    fn diagnostics(&self) -> &Diagnostics {
        &self.diagnostics
    }
}

impl LcsDecoder {
    /// At the end: the requests the header counts that the file does not hold.
    fn count_missing(&mut self) {
        if std::mem::replace(&mut self.counted_missing, true) {
            return;
        }
        if let Some(n) = self.n_req.filter(|&n| n > self.records) {
            let (records, missing) = (self.records, n - self.records);
            self.diagnostics.skipped_records += missing - 1;
            self.diagnostics.skip(|| {
                format!(
                    "{FORMAT}: the header counts {n} requests but the file ends after {records}: \
                     {missing} missing (the file was cut short?)"
                )
            });
        }
    }
}

/// The first 8 bytes as a little-endian u64, 0 when there are fewer.
fn u64_at_or_zero(b: &[u8]) -> u64 {
    if b.len() >= 8 {
        u64_at(b, 0)
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode_chunked;

    /// An lcs header of `version` counting `n_req` requests.
    fn header(version: u64, n_req: i64) -> Vec<u8> {
        let mut h = vec![0u8; HEADER_BYTES];
        h[0..8].copy_from_slice(&MAGIC.to_le_bytes());
        h[8..16].copy_from_slice(&version.to_le_bytes());
        h[16..24].copy_from_slice(&1i64.to_le_bytes());
        h[N_REQ_AT..N_REQ_AT + 8].copy_from_slice(&n_req.to_le_bytes());
        h[END_MAGIC_AT..].copy_from_slice(&MAGIC.to_le_bytes());
        h
    }

    fn v2(t: u32, id: u64, size: u32, op: u8, tenant: u32) -> Vec<u8> {
        [
            &t.to_le_bytes()[..],
            &id.to_le_bytes(),
            &size.to_le_bytes(),
            &(u32::from(op) | tenant << 8).to_le_bytes(),
            &(-1i64).to_le_bytes(),
        ]
        .concat()
    }

    #[test]
    fn version_2_records_carry_operations_and_tenants() {
        let input = [
            header(2, 4),
            v2(10, 1000, 4096, 12, 0),
            v2(10, 1008, 8192, 13, 0),
            v2(11, 1000, 4096, 3, 7),
            v2(12, 2048, 512, 9, 0),
        ]
        .concat();
        let one = decode_chunked(LcsDecoder::new(), &input, usize::MAX).expect("decodes");
        for chunk in [1, 7, 1000] {
            assert_eq!(
                decode_chunked(LcsDecoder::new(), &input, chunk).expect("decodes"),
                one,
                "chunks of {chunk}"
            );
        }
        assert_eq!(
            one.rows(),
            vec![
                (10_000_000_000, "tenant0", 512_000, 4096, Op::Read),
                (10_000_000_000, "tenant0", 516_096, 8192, Op::Write),
                (11_000_000_000, "tenant7", 512_000, 4096, Op::Write),
                (12_000_000_000, "tenant0", 1_048_576, 512, Op::Discard),
            ]
        );
        assert_eq!(one.diagnostics.skipped_records, 0);
        assert_eq!(sniff(&input), Confidence::Yes);
    }

    #[test]
    fn bad_records_and_a_short_file_are_counted_and_named() {
        let input = [
            header(2, 5),
            v2(1, 8, 4096, 12, 0),
            v2(1, 16, 4096, 200, 0),
            v2(2, 24, 4096, 13, 0),
            vec![1, 2, 3],
        ]
        .concat();
        let d = decode_chunked(LcsDecoder::new(), &input, 5).expect("decodes");
        assert_eq!(d.events.len(), 2);
        assert_eq!(d.diagnostics.truncated_tail_bytes, 3);
        // One bad operation, and two of the five requests missing.
        assert_eq!(d.diagnostics.skipped_records, 3);
        let reasons = d.diagnostics.reasons.join("\n");
        assert!(
            reasons.contains("record at byte 8220: operation 200 is not one of libCacheSim's"),
            "{reasons}"
        );
        assert!(
            reasons.contains("counts 5 requests but the file ends after 3: 2 missing"),
            "{reasons}"
        );
    }

    #[test]
    fn a_header_that_is_not_lcs_is_an_error_naming_its_byte() {
        let mut bad_version = header(9, 0);
        bad_version.extend(v2(1, 8, 4096, 12, 0));
        let e = decode_chunked(LcsDecoder::new(), &bad_version, 64).unwrap_err();
        assert!(e.to_string().contains("byte 8"), "{e}");
        assert!(e.to_string().contains("version 9"), "{e}");
        let mut bad_end = header(1, 0);
        bad_end[END_MAGIC_AT] ^= 1;
        let e = decode_chunked(LcsDecoder::new(), &bad_end, 64).unwrap_err();
        assert!(e.to_string().contains("byte 8184"), "{e}");
        let e = decode_chunked(LcsDecoder::new(), &header(1, 0)[..100], 64).unwrap_err();
        assert!(
            e.to_string().contains("within the 8192-byte lcs header"),
            "{e}"
        );
        assert_eq!(sniff(b"time,obj_id\n"), Confidence::No);
    }
}
