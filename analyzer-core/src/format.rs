//! The registry of trace formats: names for `--format`, sniffing, and decoder construction.
//!
//! One list ([`TraceFormat::ALL`]) feeds the CLI's `--format` values, the web app's format
//! picker and detection, so a new format is added in one place.

use serde::{Deserialize, Serialize};

use crate::decode::merge::{Merge, Single};
use crate::decode::text::{sniff_lines, TextDecoder};
use crate::decode::{alibaba, blkparse, fio_iolog, generic_csv, msr, spc, tencent, tracefs};
use crate::decode::{blktrace, oracle_general, vscsi};
use crate::decode::{Action, DecodeError, DecodeOptions, Decoder, MultiDecoder};

/// Boxes a text format's line parser as a push decoder.
fn text<F: crate::decode::text::LineFormat + 'static>(format: F) -> Box<dyn Decoder> {
    Box::new(TextDecoder::new(format))
}

/// Every trace format Blocksight reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TraceFormat {
    /// Blocksight's own `.bst` file (docs/format.md).
    Native,
    /// `struct blk_io_trace` records from blktrace or the ftrace `blk` tracer, either endianness.
    BlktraceBin,
    /// blkparse's default text output.
    BlkparseText,
    /// tracefs text lines (`block_rq_issue` / `block_rq_complete`) as read from `trace_pipe`.
    TracefsText,
    /// MSR Cambridge traces as published by SNIA: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
    MsrCsv,
    /// UMass / SPC traces: `ASU,LBA,Size,Opcode,Timestamp[,...]`.
    Spc,
    /// Alibaba Cloud block traces (2020): `device_id,opcode,offset,length,timestamp`.
    AlibabaCsv,
    /// Tencent CBS traces: `Timestamp,Offset,Size,IOType,VolumeID`.
    TencentCsv,
    /// fio iolog version 2.
    FioIologV2,
    /// fio iolog version 3 (timestamps).
    FioIologV3,
    /// CloudPhysics vscsi binary traces, version 1.
    VscsiV1,
    /// CloudPhysics vscsi binary traces, version 2.
    VscsiV2,
    /// libCacheSim's `oracleGeneral` binary records.
    OracleGeneral,
    /// Any CSV with a column mapping given by the user.
    GenericCsv,
}

impl TraceFormat {
    pub const ALL: [TraceFormat; 14] = [
        TraceFormat::Native,
        TraceFormat::BlktraceBin,
        TraceFormat::BlkparseText,
        TraceFormat::TracefsText,
        TraceFormat::MsrCsv,
        TraceFormat::Spc,
        TraceFormat::AlibabaCsv,
        TraceFormat::TencentCsv,
        TraceFormat::FioIologV2,
        TraceFormat::FioIologV3,
        TraceFormat::VscsiV1,
        TraceFormat::VscsiV2,
        TraceFormat::OracleGeneral,
        TraceFormat::GenericCsv,
    ];

    /// The name used by `--format`, in JSON output and in [`crate::TraceHeader::source_format`].
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Native => "native",
            TraceFormat::BlktraceBin => "blktrace",
            TraceFormat::BlkparseText => "blkparse",
            TraceFormat::TracefsText => "tracefs",
            TraceFormat::MsrCsv => "msr",
            TraceFormat::Spc => "spc",
            TraceFormat::AlibabaCsv => "alibaba",
            TraceFormat::TencentCsv => "tencent",
            TraceFormat::FioIologV2 => "fio-v2",
            TraceFormat::FioIologV3 => "fio-v3",
            TraceFormat::VscsiV1 => "vscsi1",
            TraceFormat::VscsiV2 => "vscsi2",
            TraceFormat::OracleGeneral => "oracle-general",
            TraceFormat::GenericCsv => "csv",
        }
    }

    /// One line for `--help` and the web app.
    pub fn description(self) -> &'static str {
        match self {
            TraceFormat::Native => "Blocksight native trace (.bst)",
            TraceFormat::BlktraceBin => "blktrace binary (blk_io_trace records, per-CPU files)",
            TraceFormat::BlkparseText => "blkparse default text output",
            TraceFormat::TracefsText => "tracefs block_rq_issue/block_rq_complete text",
            TraceFormat::MsrCsv => "MSR Cambridge CSV (SNIA)",
            TraceFormat::Spc => "UMass/SPC ASU,LBA,Size,Opcode,Timestamp",
            TraceFormat::AlibabaCsv => "Alibaba Cloud block trace (2020)",
            TraceFormat::TencentCsv => "Tencent CBS block trace",
            TraceFormat::FioIologV2 => "fio iolog v2",
            TraceFormat::FioIologV3 => "fio iolog v3",
            TraceFormat::VscsiV1 => "CloudPhysics vscsi v1",
            TraceFormat::VscsiV2 => "CloudPhysics vscsi v2",
            TraceFormat::OracleGeneral => "libCacheSim oracleGeneral binary",
            TraceFormat::GenericCsv => "generic CSV with --csv-columns mapping",
        }
    }

    pub fn from_name(name: &str) -> Option<TraceFormat> {
        TraceFormat::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(name))
    }

    /// Builds a decoder for this format.
    pub fn decoder(self, options: &DecodeOptions) -> Result<Box<dyn Decoder>, DecodeError> {
        match self {
            TraceFormat::Native => Ok(Box::new(crate::native::NativeDecoder::new())),
            TraceFormat::BlkparseText => Ok(text(blkparse::Blkparse::new(options.action))),
            TraceFormat::TracefsText => Ok(text(tracefs::Tracefs::new(options.action))),
            TraceFormat::MsrCsv => Ok(text(msr::Msr::new())),
            TraceFormat::Spc => Ok(text(spc::Spc::new())),
            TraceFormat::AlibabaCsv => Ok(text(alibaba::Alibaba::new())),
            TraceFormat::TencentCsv => Ok(text(tencent::Tencent::new())),
            TraceFormat::FioIologV2 => Ok(text(fio_iolog::FioIolog::new(2))),
            TraceFormat::FioIologV3 => Ok(text(fio_iolog::FioIolog::new(3))),
            TraceFormat::GenericCsv => Ok(text(generic_csv::GenericCsv::new(
                options.csv_columns.as_deref(),
            )?)),
            TraceFormat::BlktraceBin => Ok(Box::new(blktrace::BlktraceDecoder::new(options))),
            TraceFormat::VscsiV1 => Ok(Box::new(vscsi::VscsiDecoder::new(vscsi::VscsiVersion::V1))),
            TraceFormat::VscsiV2 => Ok(Box::new(vscsi::VscsiDecoder::new(vscsi::VscsiVersion::V2))),
            TraceFormat::OracleGeneral => Ok(Box::new(oracle_general::OracleGeneralDecoder::new())),
        }
    }

    /// Builds a decoder over `inputs` files of this format, merged by time into one trace.
    pub fn multi_decoder(
        self,
        inputs: usize,
        options: &DecodeOptions,
    ) -> Result<Box<dyn MultiDecoder>, DecodeError> {
        if self == TraceFormat::BlktraceBin && inputs > 1 {
            // Completions are often on another CPU's file than their issue: merge raw records
            // first, then match (decode::blktrace).
            return Ok(Box::new(blktrace::BlktraceMulti::new(inputs, options)));
        }
        if inputs == 1 {
            return Ok(Box::new(Single::new(self.decoder(options)?)));
        }
        let decoders = (0..inputs)
            .map(|_| self.decoder(options))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Box::new(Merge::new(decoders)))
    }
}

/// How sure a format is that the first bytes of an input are its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Confidence {
    No,
    /// Plausible (a CSV whose fields have the right types).
    Maybe,
    /// Certain (a magic number, a unique header line).
    Yes,
}

/// Guesses the format of an input from its first bytes (after decompression). Formats that say
/// [`Confidence::Yes`] win over those that say [`Confidence::Maybe`]; ties go to the order of
/// [`TraceFormat::ALL`]. `head` should be at least 64 KiB when the input is that long.
pub fn sniff(head: &[u8]) -> Option<TraceFormat> {
    let mut best: Option<(Confidence, TraceFormat)> = None;
    for format in TraceFormat::ALL {
        let confidence = sniff_one(format, head);
        if confidence > Confidence::No && best.is_none_or(|(c, _)| confidence > c) {
            best = Some((confidence, format));
        }
    }
    best.map(|(_, f)| f)
}

fn sniff_one(format: TraceFormat, head: &[u8]) -> Confidence {
    match format {
        TraceFormat::Native if head.starts_with(&crate::native::MAGIC) => Confidence::Yes,
        TraceFormat::BlkparseText => sniff_lines(blkparse::Blkparse::new(Action::Issue), head),
        TraceFormat::TracefsText => sniff_lines(tracefs::Tracefs::new(Action::Issue), head),
        TraceFormat::MsrCsv => sniff_lines(msr::Msr::new(), head),
        TraceFormat::Spc => sniff_lines(spc::Spc::new(), head),
        TraceFormat::AlibabaCsv => sniff_lines(alibaba::Alibaba::new(), head),
        TraceFormat::TencentCsv => sniff_lines(tencent::Tencent::new(), head),
        TraceFormat::FioIologV2 => sniff_lines(fio_iolog::FioIolog::new(2), head),
        TraceFormat::FioIologV3 => sniff_lines(fio_iolog::FioIolog::new(3), head),
        TraceFormat::GenericCsv => match generic_csv::GenericCsv::new(None) {
            Ok(csv) => sniff_lines(csv, head),
            Err(_) => Confidence::No,
        },
        TraceFormat::BlktraceBin => blktrace::sniff(head),
        TraceFormat::VscsiV1 => vscsi::sniff(vscsi::VscsiVersion::V1, head),
        TraceFormat::VscsiV2 => vscsi::sniff(vscsi::VscsiVersion::V2, head),
        TraceFormat::OracleGeneral => oracle_general::sniff(head),
        _ => Confidence::No,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_parse_back() {
        for f in TraceFormat::ALL {
            assert_eq!(TraceFormat::from_name(f.name()), Some(f));
            assert_eq!(
                TraceFormat::ALL
                    .iter()
                    .filter(|g| g.name() == f.name())
                    .count(),
                1
            );
        }
    }
}
