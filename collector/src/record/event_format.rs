//! Parses a tracefs event `format` file (`events/block/block_rq_issue/format`) into the event id
//! and the byte layout of the fields `blocksight record` reads, so the binary ring-buffer reader
//! follows whatever layout the running kernel uses instead of a compiled-in struct.

use std::collections::HashMap;

/// One field of an event record: where it is and how wide it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub offset: usize,
    pub size: usize,
    pub signed: bool,
}

impl Field {
    /// Reads the field as an unsigned little-endian integer of its size (1, 2, 4 or 8 bytes);
    /// `None` when the record is too short or the size is not an integer size.
    pub fn read_u64(&self, record: &[u8]) -> Option<u64> {
        let bytes = record.get(self.offset..self.offset + self.size)?;
        Some(match self.size {
            1 => u64::from(bytes[0]),
            2 => u64::from(u16::from_le_bytes(bytes.try_into().ok()?)),
            4 => u64::from(u32::from_le_bytes(bytes.try_into().ok()?)),
            8 => u64::from_le_bytes(bytes.try_into().ok()?),
            _ => return None,
        })
    }

    /// The field's bytes (for `char rwbs[10]`).
    pub fn bytes<'a>(&self, record: &'a [u8]) -> Option<&'a [u8]> {
        record.get(self.offset..self.offset + self.size)
    }
}

/// An event's id (the `common_type` value its records carry) and its fields by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventFormat {
    pub name: String,
    pub id: u16,
    pub fields: HashMap<String, Field>,
}

impl EventFormat {
    /// Parses the text of a `format` file.
    pub fn parse(text: &str) -> Result<EventFormat, String> {
        let mut name = None;
        let mut id = None;
        let mut fields = HashMap::new();
        for line in text.lines() {
            let line = line.trim();
            if let Some(rest) = line.strip_prefix("name:") {
                name = Some(rest.trim().to_string());
            } else if let Some(rest) = line.strip_prefix("ID:") {
                id = Some(
                    rest.trim()
                        .parse::<u16>()
                        .map_err(|e| format!("bad ID line {line:?}: {e}"))?,
                );
            } else if let Some(rest) = line.strip_prefix("field:") {
                // `field:unsigned int nr_sector;	offset:24;	size:4;	signed:0;`
                let mut parts = rest.split(';').map(str::trim);
                let decl = parts.next().unwrap_or_default();
                let mut offset = None;
                let mut size = None;
                let mut signed = false;
                for part in parts {
                    if let Some(v) = part.strip_prefix("offset:") {
                        offset = v.parse::<usize>().ok();
                    } else if let Some(v) = part.strip_prefix("size:") {
                        size = v.parse::<usize>().ok();
                    } else if let Some(v) = part.strip_prefix("signed:") {
                        signed = v == "1";
                    }
                }
                let (Some(offset), Some(size)) = (offset, size) else {
                    return Err(format!("field line without offset/size: {line:?}"));
                };
                // The name is the last identifier of the declaration, before any `[N]`.
                let ident = decl.split_whitespace().last().unwrap_or_default();
                let ident = ident.split('[').next().unwrap_or_default();
                if !ident.is_empty() {
                    fields.insert(
                        ident.to_string(),
                        Field {
                            offset,
                            size,
                            signed,
                        },
                    );
                }
            }
        }
        Ok(EventFormat {
            name: name.ok_or("no `name:` line")?,
            id: id.ok_or("no `ID:` line")?,
            fields,
        })
    }

    /// The named field, or an error naming the event and the field.
    pub fn field(&self, field: &str) -> Result<Field, String> {
        self.fields
            .get(field)
            .copied()
            .ok_or_else(|| format!("event {} has no field {field:?} in this kernel", self.name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ISSUE: &str = "name: block_rq_issue
ID: 2104
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;
\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;
\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;
\tfield:unsigned int bytes;\toffset:28;\tsize:4;\tsigned:0;
\tfield:unsigned short ioprio;\toffset:32;\tsize:2;\tsigned:0;
\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;
\tfield:char comm[16];\toffset:44;\tsize:16;\tsigned:0;
\tfield:__data_loc char[] cmd;\toffset:60;\tsize:4;\tsigned:0;

print fmt: \"%d,%d %s\", REC->dev
";

    #[test]
    fn parses_the_kernels_block_rq_issue_format() {
        let f = EventFormat::parse(ISSUE).expect("parses");
        assert_eq!(f.name, "block_rq_issue");
        assert_eq!(f.id, 2104);
        assert_eq!(
            f.field("sector").expect("sector"),
            Field {
                offset: 16,
                size: 8,
                signed: false
            }
        );
        assert_eq!(f.field("rwbs").expect("rwbs").size, 10);
        assert_eq!(
            f.field("common_pid").expect("pid"),
            Field {
                offset: 4,
                size: 4,
                signed: true
            }
        );
        assert!(f.field("cmd").is_ok());
        assert!(f.field("nope").is_err());
    }

    #[test]
    fn reads_fields_from_a_record() {
        let f = EventFormat::parse(ISSUE).expect("parses");
        let mut rec = vec![0u8; 64];
        rec[8..12].copy_from_slice(&((7u32 << 20) | 3).to_le_bytes());
        rec[16..24].copy_from_slice(&123_456u64.to_le_bytes());
        rec[34..36].copy_from_slice(b"WS");
        assert_eq!(
            f.field("dev").expect("dev").read_u64(&rec),
            Some((7 << 20) | 3)
        );
        assert_eq!(
            f.field("sector").expect("sector").read_u64(&rec),
            Some(123_456)
        );
        assert_eq!(
            &f.field("rwbs")
                .expect("rwbs")
                .bytes(&rec)
                .expect("in range")[..3],
            b"WS\0"
        );
        assert_eq!(
            f.field("sector").expect("sector").read_u64(&rec[..20]),
            None
        );
    }

    #[test]
    fn rejects_a_file_without_an_id() {
        assert!(EventFormat::parse("name: x\n").is_err());
    }
}
