//! The column mapping of the generic CSV format: which column holds what, in which unit.
//!
//! Syntax (`--csv-columns`), comma-separated `key=value` pairs:
//! - columns, 0-based: `time=N`, `op=N`, `offset=N`, `len=N` (all four required), and optional
//!   `device=N`, `latency=N`, `pid=N`;
//! - units: `time_unit=` and `latency_unit=` `ns|us|ms|s` (default `ns`; decimals such as
//!   `0.5` are read exactly), `offset_unit=` and `len_unit=` `byte|sector|kib|<bytes>` (default
//!   `byte`; `sector` is 512 bytes);
//! - `delimiter=comma|semicolon|tab|space|<one character>` (default `comma`; `space` splits on
//!   runs of spaces and tabs);
//! - `skip_header=N`: lines to skip at the start (default: the first line is skipped when its
//!   time field is not a number, so a header line is recognised);
//! - `op_read=`, `op_write=`, `op_discard=`, `op_flush=`: extra values that mean each op (for
//!   example `op_read=0,op_write=1`); `read`/`write`/`discard`/`trim`/`flush` and `R`/`W`/`D`/`F`
//!   are always understood, case-insensitively.
//!
//! Without `--csv-columns`, the first line must be a header that names the columns with the
//! names Blocksight's CSV export writes (`time_nanos,device,offset_bytes,len_bytes,op,
//! latency_nanos,pid`) or the plain keys above (`time`, `offset`, ...), with default units.

use super::text::Delimiter;
use crate::event::Op;

/// A parsed column mapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvColumns {
    pub time: usize,
    pub op: usize,
    pub offset: usize,
    pub len: usize,
    pub device: Option<usize>,
    pub latency: Option<usize>,
    pub pid: Option<usize>,
    /// The power of ten that turns a time in the unit into nanoseconds: ns 0, us 3, ms 6, s 9.
    pub time_scale_digits: u32,
    pub latency_scale_digits: u32,
    pub offset_unit_bytes: u64,
    pub len_unit_bytes: u64,
    pub(crate) delimiter: Delimiter,
    /// `None`: skip the first line when its time field is not a number.
    pub skip_header_lines: Option<u64>,
    pub op_values: Vec<(String, Op)>,
}

const KEYS: &str = "time, op, offset, len, device, latency, pid, time_unit, latency_unit, \
                    offset_unit, len_unit, delimiter, skip_header, op_read, op_write, op_discard, op_flush";

/// Why [`CsvColumns::parse`] refused a mapping: which pair is wrong and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CsvColumnsError {
    #[error("{pair:?} is not key=value")]
    NotKeyValue { pair: String },
    #[error("{key} is given twice")]
    Twice { key: String },
    #[error("{key}={value}: a column is a 0-based number, like {key}=0")]
    ColumnIndex { key: String, value: String },
    #[error("time unit {value:?} is not one of ns, us, ms, s")]
    TimeUnit { value: String },
    #[error("size unit {value:?} is not one of byte, sector, kib or a number of bytes")]
    SizeUnit { value: String },
    #[error("a size unit of 0 bytes")]
    ZeroSizeUnit,
    #[error("delimiter {value:?} is not comma, semicolon, tab, space or one character")]
    Delimiter { value: String },
    #[error("skip_header={value}: expected a number of lines")]
    SkipHeader { value: String },
    #[error("{key} needs a value")]
    NoValue { key: String },
    #[error("unknown key {key:?}; the keys are {KEYS}")]
    UnknownKey { key: String },
    #[error("no {key}=N column; time, op, offset and len are required")]
    Missing { key: &'static str },
    #[error("{first} and {second} both use column {column}")]
    SameColumn {
        first: &'static str,
        second: &'static str,
        column: usize,
    },
}

fn time_digits(value: &str) -> Result<u32, CsvColumnsError> {
    match value {
        "ns" => Ok(0),
        "us" => Ok(3),
        "ms" => Ok(6),
        "s" => Ok(9),
        _ => Err(CsvColumnsError::TimeUnit {
            value: value.to_owned(),
        }),
    }
}

fn size_unit(value: &str) -> Result<u64, CsvColumnsError> {
    let bytes = match value {
        "byte" | "bytes" | "b" => 1,
        "sector" | "sectors" => 512,
        "kib" | "KiB" => 1024,
        n => n.parse::<u64>().map_err(|_| CsvColumnsError::SizeUnit {
            value: value.to_owned(),
        })?,
    };
    if bytes == 0 {
        return Err(CsvColumnsError::ZeroSizeUnit);
    }
    Ok(bytes)
}

impl CsvColumns {
    /// Parses `--csv-columns`. Errors say which pair is wrong and what was expected.
    pub fn parse(spec: &str) -> Result<CsvColumns, CsvColumnsError> {
        let mut time = None;
        let mut op = None;
        let mut offset = None;
        let mut len = None;
        let mut columns = CsvColumns {
            time: 0,
            op: 0,
            offset: 0,
            len: 0,
            device: None,
            latency: None,
            pid: None,
            time_scale_digits: 0,
            latency_scale_digits: 0,
            offset_unit_bytes: 1,
            len_unit_bytes: 1,
            delimiter: Delimiter::Char(','),
            skip_header_lines: None,
            op_values: Vec::new(),
        };
        let mut seen: Vec<&str> = Vec::new();
        for pair in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = pair
                .split_once('=')
                .map(|(k, v)| (k.trim(), v.trim()))
                .ok_or_else(|| CsvColumnsError::NotKeyValue {
                    pair: pair.to_owned(),
                })?;
            if seen.contains(&key) {
                return Err(CsvColumnsError::Twice {
                    key: key.to_owned(),
                });
            }
            seen.push(key);
            let index = || {
                value
                    .parse::<usize>()
                    .map_err(|_| CsvColumnsError::ColumnIndex {
                        key: key.to_owned(),
                        value: value.to_owned(),
                    })
            };
            match key {
                "time" => time = Some(index()?),
                "op" => op = Some(index()?),
                "offset" => offset = Some(index()?),
                "len" => len = Some(index()?),
                "device" => columns.device = Some(index()?),
                "latency" => columns.latency = Some(index()?),
                "pid" => columns.pid = Some(index()?),
                "time_unit" => columns.time_scale_digits = time_digits(value)?,
                "latency_unit" => columns.latency_scale_digits = time_digits(value)?,
                "offset_unit" => columns.offset_unit_bytes = size_unit(value)?,
                "len_unit" => columns.len_unit_bytes = size_unit(value)?,
                "delimiter" => {
                    columns.delimiter = match value {
                        "comma" => Delimiter::Char(','),
                        "semicolon" | ";" => Delimiter::Char(';'),
                        "tab" => Delimiter::Char('\t'),
                        "space" | "whitespace" => Delimiter::Whitespace,
                        v if v.chars().count() == 1 => {
                            Delimiter::Char(v.chars().next().unwrap_or(','))
                        }
                        v => {
                            return Err(CsvColumnsError::Delimiter {
                                value: v.to_owned(),
                            })
                        }
                    }
                }
                "skip_header" => {
                    columns.skip_header_lines =
                        Some(
                            value
                                .parse::<u64>()
                                .map_err(|_| CsvColumnsError::SkipHeader {
                                    value: value.to_owned(),
                                })?,
                        )
                }
                "op_read" | "op_write" | "op_discard" | "op_flush" => {
                    let op = match key {
                        "op_read" => Op::Read,
                        "op_write" => Op::Write,
                        "op_discard" => Op::Discard,
                        _ => Op::Flush,
                    };
                    if value.is_empty() {
                        return Err(CsvColumnsError::NoValue {
                            key: key.to_owned(),
                        });
                    }
                    columns.op_values.push((value.to_owned(), op));
                }
                _ => {
                    return Err(CsvColumnsError::UnknownKey {
                        key: key.to_owned(),
                    })
                }
            }
        }
        let need = |v: Option<usize>, key: &'static str| v.ok_or(CsvColumnsError::Missing { key });
        columns.time = need(time, "time")?;
        columns.op = need(op, "op")?;
        columns.offset = need(offset, "offset")?;
        columns.len = need(len, "len")?;
        let mut used: Vec<(usize, &'static str)> = vec![
            (columns.time, "time"),
            (columns.op, "op"),
            (columns.offset, "offset"),
            (columns.len, "len"),
        ];
        used.extend(columns.device.map(|c| (c, "device")));
        used.extend(columns.latency.map(|c| (c, "latency")));
        used.extend(columns.pid.map(|c| (c, "pid")));
        for (i, &(c, name)) in used.iter().enumerate() {
            if let Some(&(_, other)) = used[..i].iter().find(|(d, _)| *d == c) {
                return Err(CsvColumnsError::SameColumn {
                    first: other,
                    second: name,
                    column: c,
                });
            }
        }
        Ok(columns)
    }

    /// Builds a mapping from a header line naming the columns (see the module docs), or `None`
    /// when the line does not name at least time, op, offset and len.
    pub fn from_header(line: &str) -> Option<CsvColumns> {
        let delimiter = if line.contains(',') {
            Delimiter::Char(',')
        } else if line.contains(';') {
            Delimiter::Char(';')
        } else if line.contains('\t') {
            Delimiter::Char('\t')
        } else {
            return None;
        };
        let Delimiter::Char(sep) = delimiter else {
            return None;
        };
        let mut spec = String::new();
        for (i, name) in line
            .split(sep)
            .map(|f| f.trim().trim_matches('"'))
            .enumerate()
        {
            let key = match name.to_ascii_lowercase().as_str() {
                "time_nanos" | "time" => "time",
                "op" => "op",
                "offset_bytes" | "offset" => "offset",
                "len_bytes" | "len" | "length" => "len",
                "device" => "device",
                "latency_nanos" | "latency" => "latency",
                "pid" => "pid",
                _ => continue,
            };
            if spec
                .split(',')
                .any(|p| p.split_once('=').is_some_and(|(k, _)| k == key))
            {
                return None;
            }
            spec.push_str(&format!("{key}={i},"));
        }
        spec.push_str("skip_header=1");
        let mut columns = CsvColumns::parse(&spec).ok()?;
        columns.delimiter = delimiter;
        Some(columns)
    }

    /// The op a field means, if any.
    pub fn op(&self, field: &str) -> Option<Op> {
        if let Some((_, op)) = self.op_values.iter().find(|(v, _)| v == field) {
            return Some(*op);
        }
        Op::from_name(field)
    }

    /// The highest column index used, so a line with fewer fields is reported as such.
    pub fn max_column(&self) -> usize {
        [
            Some(self.time),
            Some(self.op),
            Some(self.offset),
            Some(self.len),
            self.device,
            self.latency,
            self.pid,
        ]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_mapping_parses() {
        let c = CsvColumns::parse(
            "time=0,op=1,offset=2,len=3,device=4,latency=5,time_unit=us,offset_unit=sector,\
             len_unit=4096,skip_header=1,delimiter=;,op_read=0,op_write=1",
        )
        .expect("valid mapping");
        assert_eq!(
            (c.time, c.op, c.offset, c.len, c.device, c.latency, c.pid),
            (0, 1, 2, 3, Some(4), Some(5), None)
        );
        assert_eq!(c.time_scale_digits, 3);
        assert_eq!(c.offset_unit_bytes, 512);
        assert_eq!(c.len_unit_bytes, 4096);
        assert_eq!(c.delimiter, Delimiter::Char(';'));
        assert_eq!(c.skip_header_lines, Some(1));
        assert_eq!(c.op("0"), Some(Op::Read));
        assert_eq!(c.op("1"), Some(Op::Write));
        assert_eq!(c.op("W"), Some(Op::Write));
        assert_eq!(c.op("x"), None);
    }

    #[test]
    fn bad_mappings_are_rejected_with_the_reason() {
        use CsvColumnsError as E;
        let err = |s: &str| CsvColumns::parse(s).expect_err(s);
        assert_eq!(err("time=0,op=1,offset=2"), E::Missing { key: "len" });
        assert!(matches!(
            err("time=0,op=1,offset=2,len=x"),
            E::ColumnIndex { key, value } if key == "len" && value == "x"
        ));
        assert!(matches!(
            err("time=0,op=1,offset=2,len=3,tim=4"),
            E::UnknownKey { key } if key == "tim"
        ));
        assert_eq!(
            err("time=0,op=1,offset=2,len=2"),
            E::SameColumn {
                first: "offset",
                second: "len",
                column: 2
            }
        );
        assert!(matches!(
            err("time=0,op=1,offset=2,len=3,time_unit=h"),
            E::TimeUnit { value } if value == "h"
        ));
        assert_eq!(
            err("time=0,op=1,offset=2,len=3,offset_unit=0"),
            E::ZeroSizeUnit
        );
        assert!(matches!(
            err("time=0,op=1,offset=2,len=3,len_unit=page"),
            E::SizeUnit { .. }
        ));
        assert!(matches!(
            err("time=0,op=1,offset=2,len=3,time=4"),
            E::Twice { key } if key == "time"
        ));
        assert!(matches!(err("time0"), E::NotKeyValue { .. }));
        assert!(matches!(
            err("time=0,op=1,offset=2,len=3,delimiter=ab"),
            E::Delimiter { .. }
        ));
        assert!(matches!(
            err("time=0,op=1,offset=2,len=3,skip_header=-1"),
            E::SkipHeader { .. }
        ));
        assert!(matches!(
            err("time=0,op=1,offset=2,len=3,op_read="),
            E::NoValue { key } if key == "op_read"
        ));
        // The messages users read name the pair and what was expected.
        assert_eq!(
            err("time=0,op=1,offset=2").to_string(),
            "no len=N column; time, op, offset and len are required"
        );
        assert_eq!(
            err("time=0,op=1,offset=2,len=2").to_string(),
            "offset and len both use column 2"
        );
        assert!(err("time=0,op=1,offset=2,len=3,tim=4")
            .to_string()
            .starts_with("unknown key \"tim\"; the keys are time, op,"));
    }

    #[test]
    fn header_names_map_columns() {
        let c = CsvColumns::from_header(
            "time_nanos,device,offset_bytes,len_bytes,op,latency_nanos,pid",
        )
        .expect("export header");
        assert_eq!(
            (c.time, c.device, c.offset, c.len, c.op, c.latency, c.pid),
            (0, Some(1), 2, 3, 4, Some(5), Some(6))
        );
        assert_eq!(c.skip_header_lines, Some(1));
        assert!(CsvColumns::from_header("a,b,c").is_none());
        assert!(CsvColumns::from_header("time,offset,len").is_none());
    }
}
