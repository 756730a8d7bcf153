//! The registry of trace formats: names for `--format`, sniffing, and decoder construction.
//!
//! One list ([`TraceFormat::ALL`]) feeds the CLI's `--format` values, the web app's format
//! picker and detection, so a new format is added in one place.

use serde::{Deserialize, Serialize};

use crate::decode::merge::{Merge, Single};
use crate::decode::order::InOrder;
use crate::decode::text::{sniff_lines, sniff_lines_detail, AutoAction, SniffDetail, TextDecoder};
use crate::decode::{alibaba, arc, blkparse, disksim, fio_iolog, generic_csv, msr, spc, tencent};
use crate::decode::{blktrace, lcs, oracle_general, vscsi};
use crate::decode::{cloudphysics_csv, fiu, libcachesim_csv, systor, tracefs};
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
    /// libCacheSim's lcs binary traces: an 8 KiB header, then fixed records (versions 1 to 8).
    Lcs,
    /// SYSTOR '17 VDI traces: `Timestamp,Response,IOType,LUN,Offset,Size`.
    SystorCsv,
    /// FIU's SRCMap and I/O Deduplication traces: `ns pid process lba blocks W|R major minor md5`.
    Fiu,
    /// The ARC paper's `.lis` traces: `start_block num_blocks ignore request_id`.
    ArcLis,
    /// MQSim's ASCII traces: `time_ns device sector sectors type`.
    MqSim,
    /// DiskSim's ASCII traces: `time_ms device block blocks flags`.
    DiskSim,
    /// libCacheSim's CSV: `time,obj_id,obj_size,op` (what `export --to libcachesim` writes).
    LibCacheSimCsv,
    /// CloudPhysics traces as CSV: `version,time,op,size,lbn` (SCSI opcodes in hex).
    CloudPhysicsCsv,
    /// Any CSV with a column mapping given by the user.
    GenericCsv,
}

impl TraceFormat {
    pub const ALL: [TraceFormat; 22] = [
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
        TraceFormat::Lcs,
        TraceFormat::SystorCsv,
        TraceFormat::Fiu,
        TraceFormat::ArcLis,
        TraceFormat::MqSim,
        TraceFormat::DiskSim,
        TraceFormat::LibCacheSimCsv,
        TraceFormat::CloudPhysicsCsv,
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
            TraceFormat::Lcs => "lcs",
            TraceFormat::SystorCsv => "systor",
            TraceFormat::Fiu => "fiu",
            TraceFormat::ArcLis => "arc",
            TraceFormat::MqSim => "mqsim",
            TraceFormat::DiskSim => "disksim",
            TraceFormat::LibCacheSimCsv => "libcachesim-csv",
            TraceFormat::CloudPhysicsCsv => "cloudphysics-csv",
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
            TraceFormat::Lcs => "libCacheSim lcs binary (versions 1-8)",
            TraceFormat::SystorCsv => "SYSTOR '17 VDI trace (SNIA)",
            TraceFormat::Fiu => "FIU SRCMap / I/O Deduplication trace (SNIA)",
            TraceFormat::ArcLis => "ARC paper .lis trace (512-byte blocks, reads, no times)",
            TraceFormat::MqSim => "MQSim ASCII trace (ns, sectors, 0 write / 1 read)",
            TraceFormat::DiskSim => "DiskSim ASCII trace (ms, blocks, flags)",
            TraceFormat::LibCacheSimCsv => "libCacheSim CSV time,obj_id,obj_size,op",
            TraceFormat::CloudPhysicsCsv => "CloudPhysics CSV version,time,op,size,lbn (SCSI ops)",
            TraceFormat::GenericCsv => "generic CSV with --csv-columns mapping",
        }
    }

    /// The finest time step the format's timestamps can express, in nanoseconds; `None` when
    /// the format has no timestamps (request order only). Durations shorter than this are not
    /// measured, so no rate is computed from them, and time charts use no finer bins.
    pub fn clock_resolution_nanos(self) -> Option<u64> {
        Some(match self {
            TraceFormat::Native
            | TraceFormat::BlktraceBin
            | TraceFormat::BlkparseText
            | TraceFormat::FioIologV2
            | TraceFormat::Fiu
            | TraceFormat::GenericCsv => 1,
            // tracefs prints microseconds.
            TraceFormat::TracefsText => 1_000,
            // FILETIME ticks.
            TraceFormat::MsrCsv => 100,
            // SPC timestamps: six decimals of seconds in the UMass files.
            TraceFormat::Spc => 1_000,
            TraceFormat::AlibabaCsv => 1_000,
            TraceFormat::TencentCsv => 1_000_000_000,
            TraceFormat::FioIologV3 => 1_000_000,
            TraceFormat::VscsiV1 | TraceFormat::VscsiV2 => 1_000,
            TraceFormat::OracleGeneral | TraceFormat::Lcs => 1_000_000_000,
            TraceFormat::SystorCsv => 1_000,
            TraceFormat::ArcLis => return None,
            TraceFormat::MqSim => 1,
            TraceFormat::DiskSim => 1,
            TraceFormat::LibCacheSimCsv | TraceFormat::CloudPhysicsCsv => 1_000_000_000,
        })
    }

    /// [`TraceFormat::clock_resolution_nanos`] of the format a header names (a `.bst` file keeps
    /// the name of the format it was imported from); 1 ns when unknown.
    pub fn clock_resolution_of(source_format: &str) -> Option<u64> {
        TraceFormat::from_name(source_format).map_or(Some(1), TraceFormat::clock_resolution_nanos)
    }

    pub fn from_name(name: &str) -> Option<TraceFormat> {
        TraceFormat::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(name))
    }

    /// Builds a decoder for this format. Every decoder applies the ordering rule of
    /// `decode::order` (text decoders inside, binary ones through a wrapper).
    /// Whether the format records several events of a request, among which
    /// [`DecodeOptions::action`] chooses (blktrace, blkparse, tracefs).
    pub fn takes_action(self) -> bool {
        matches!(
            self,
            TraceFormat::BlkparseText | TraceFormat::TracefsText | TraceFormat::BlktraceBin
        )
    }

    pub fn decoder(self, options: &DecodeOptions) -> Result<Box<dyn Decoder>, DecodeError> {
        if options.action.is_some() && !self.takes_action() {
            // It would change nothing: refused, not ignored.
            return Err(DecodeError::Other {
                format: self.name().to_owned(),
                message: "--action (D or Q) chooses among blktrace's, blkparse's and tracefs' events of a request; this format has one event a request (a .bst keeps the events chosen when it was imported)".into(),
            });
        }
        match self {
            TraceFormat::Native => Ok(Box::new(InOrder::new(crate::native::NativeDecoder::new()))),
            TraceFormat::BlkparseText => Ok(match options.action {
                Some(action) => text(blkparse::Blkparse::new(action)),
                None => text(AutoAction::<blkparse::Blkparse>::new()),
            }),
            TraceFormat::TracefsText => Ok(match options.action {
                Some(action) => text(tracefs::Tracefs::new(action)),
                None => text(AutoAction::<tracefs::Tracefs>::new()),
            }),
            TraceFormat::MsrCsv => Ok(text(msr::Msr::new())),
            TraceFormat::Spc => Ok(text(spc::Spc::new())),
            TraceFormat::AlibabaCsv => Ok(text(alibaba::Alibaba::new())),
            TraceFormat::TencentCsv => Ok(text(tencent::Tencent::new())),
            TraceFormat::FioIologV2 => Ok(text(fio_iolog::FioIolog::new(2))),
            TraceFormat::FioIologV3 => Ok(text(fio_iolog::FioIolog::new(3))),
            TraceFormat::GenericCsv => Ok(text(generic_csv::GenericCsv::new(
                options.csv_columns.as_deref(),
            )?)),
            TraceFormat::SystorCsv => Ok(text(systor::Systor::new())),
            TraceFormat::Fiu => Ok(text(fiu::Fiu::new())),
            TraceFormat::ArcLis => Ok(text(arc::ArcLis::new())),
            TraceFormat::MqSim => Ok(text(disksim::DiskSimAscii::new(disksim::Flavor::MqSim))),
            TraceFormat::DiskSim => Ok(text(disksim::DiskSimAscii::new(disksim::Flavor::DiskSim))),
            TraceFormat::LibCacheSimCsv => Ok(text(libcachesim_csv::LibCacheSimCsv::new())),
            TraceFormat::CloudPhysicsCsv => Ok(text(cloudphysics_csv::CloudPhysicsCsv::new())),
            TraceFormat::BlktraceBin => Ok(Box::new(InOrder::new(blktrace::BlktraceDecoder::new(
                options,
            )))),
            TraceFormat::VscsiV1 => Ok(Box::new(InOrder::new(vscsi::VscsiDecoder::new(
                vscsi::VscsiVersion::V1,
            )))),
            TraceFormat::VscsiV2 => Ok(Box::new(InOrder::new(vscsi::VscsiDecoder::new(
                vscsi::VscsiVersion::V2,
            )))),
            TraceFormat::OracleGeneral => Ok(Box::new(InOrder::new(
                oracle_general::OracleGeneralDecoder::new(),
            ))),
            TraceFormat::Lcs => Ok(Box::new(InOrder::new(lcs::LcsDecoder::new()))),
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

/// The format that came closest to reading an input [`sniff`] could not place, and why it
/// failed (for the "cannot tell the format" error).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NearMiss {
    pub format: TraceFormat,
    /// Lines of the sniffed head the format read.
    pub lines_read: u64,
    /// Lines it could not read.
    pub lines_bad: u64,
    /// The first line it could not read and why (or the error that stopped it).
    pub why: String,
}

impl std::fmt::Display for NearMiss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "closest: {} ({}), which read {} of the first {} lines; first failure: {}",
            self.format.name(),
            self.format.description(),
            self.lines_read,
            self.lines_read + self.lines_bad,
            self.why
        )
    }
}

/// Among the text formats, the one that read the largest share of `head`'s first lines
/// (at least one line, or its header), when [`sniff`] finds none: "one bad line away from MSR"
/// says so instead of only "cannot tell".
pub fn closest(head: &[u8]) -> Option<NearMiss> {
    let mut best: Option<(f64, u64, NearMiss)> = None;
    for format in TraceFormat::ALL {
        let Some(d) = sniff_detail(format, head) else {
            continue;
        };
        if d.accepted == 0 && !d.saw_header {
            continue;
        }
        let share = d.accepted as f64 / (d.accepted + d.skipped).max(1) as f64;
        let better = best
            .as_ref()
            .is_none_or(|(s, a, _)| share > *s || (share == *s && d.accepted > *a));
        if better {
            let why = d
                .first_failure
                .unwrap_or_else(|| "too many of the lines are bad for a sure guess".to_string());
            best = Some((
                share,
                d.accepted,
                NearMiss {
                    format,
                    lines_read: d.accepted,
                    lines_bad: d.skipped,
                    why,
                },
            ));
        }
    }
    best.map(|(_, _, m)| m)
}

fn sniff_detail(format: TraceFormat, head: &[u8]) -> Option<SniffDetail> {
    Some(match format {
        TraceFormat::BlkparseText => {
            sniff_lines_detail(blkparse::Blkparse::new(Action::Issue), head)
        }
        TraceFormat::TracefsText => sniff_lines_detail(tracefs::Tracefs::new(Action::Issue), head),
        TraceFormat::MsrCsv => sniff_lines_detail(msr::Msr::new(), head),
        TraceFormat::Spc => sniff_lines_detail(spc::Spc::new(), head),
        TraceFormat::AlibabaCsv => sniff_lines_detail(alibaba::Alibaba::new(), head),
        TraceFormat::TencentCsv => sniff_lines_detail(tencent::Tencent::new(), head),
        TraceFormat::FioIologV2 => sniff_lines_detail(fio_iolog::FioIolog::new(2), head),
        TraceFormat::FioIologV3 => sniff_lines_detail(fio_iolog::FioIolog::new(3), head),
        TraceFormat::SystorCsv => sniff_lines_detail(systor::Systor::new(), head),
        TraceFormat::Fiu => sniff_lines_detail(fiu::Fiu::new(), head),
        TraceFormat::ArcLis => sniff_lines_detail(arc::ArcLis::new(), head),
        TraceFormat::MqSim => {
            sniff_lines_detail(disksim::DiskSimAscii::new(disksim::Flavor::MqSim), head)
        }
        TraceFormat::DiskSim => {
            sniff_lines_detail(disksim::DiskSimAscii::new(disksim::Flavor::DiskSim), head)
        }
        TraceFormat::LibCacheSimCsv => {
            sniff_lines_detail(libcachesim_csv::LibCacheSimCsv::new(), head)
        }
        TraceFormat::CloudPhysicsCsv => {
            sniff_lines_detail(cloudphysics_csv::CloudPhysicsCsv::new(), head)
        }
        _ => return None,
    })
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
        TraceFormat::Lcs => lcs::sniff(head),
        TraceFormat::SystorCsv => sniff_lines(systor::Systor::new(), head),
        TraceFormat::Fiu => sniff_lines(fiu::Fiu::new(), head),
        TraceFormat::ArcLis => sniff_lines(arc::ArcLis::new(), head),
        TraceFormat::MqSim => sniff_lines(disksim::DiskSimAscii::new(disksim::Flavor::MqSim), head),
        TraceFormat::DiskSim => {
            sniff_lines(disksim::DiskSimAscii::new(disksim::Flavor::DiskSim), head)
        }
        TraceFormat::LibCacheSimCsv => sniff_lines(libcachesim_csv::LibCacheSimCsv::new(), head),
        TraceFormat::CloudPhysicsCsv => sniff_lines(cloudphysics_csv::CloudPhysicsCsv::new(), head),
        _ => Confidence::No,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_action_is_taken_by_the_formats_that_choose_events_and_refused_by_the_others() {
        let options = DecodeOptions {
            action: Some(crate::decode::Action::Queue),
            ..DecodeOptions::default()
        };
        for format in TraceFormat::ALL {
            // Written out here as the reference for `takes_action`.
            let takes = matches!(
                format,
                TraceFormat::BlkparseText | TraceFormat::TracefsText | TraceFormat::BlktraceBin
            );
            assert_eq!(format.takes_action(), takes);
            match format.decoder(&options) {
                Ok(_) => assert!(takes, "{} took --action", format.name()),
                Err(e) => {
                    assert!(!takes, "{}: {e}", format.name());
                    assert!(e.to_string().contains("--action"), "{e}");
                }
            }
        }
    }

    #[test]
    fn an_input_one_bad_field_away_from_msr_names_msr_and_the_line() {
        // Regression (issue 13.9): the error said only "cannot tell the format".
        let mut input = String::new();
        for i in 0..10 {
            input.push_str(&format!(
                "128166372003061629,hm,0,Rd,{},4096,57936\n",
                i * 4096
            ));
        }
        input.push_str("128166372003061629,hm,0,Read,0,4096,57936\n");
        assert_eq!(sniff(input.as_bytes()), None);
        let miss = closest(input.as_bytes()).expect("a near miss");
        assert_eq!(miss.format, TraceFormat::MsrCsv);
        assert_eq!((miss.lines_read, miss.lines_bad), (1, 10));
        assert_eq!(
            miss.to_string(),
            "closest: msr (MSR Cambridge CSV (SNIA)), which read 1 of the first 11 lines; first \
             failure: line 1: Type \"Rd\" is neither Read nor Write"
        );
        assert_eq!(closest(b"\x00\x01garbage\n"), None);
    }

    #[test]
    fn real_shapes_are_sniffed_as_their_format() {
        // Constructed lines in each new format's shape (the real samples are checked in
        // tests/tests/real.rs when they are present).
        let cases: [(&str, TraceFormat); 8] = [
            (
                "Timestamp,Response,IOType,LUN,Offset,Size\n1456095145.133076000,0.000806000,R,0,899056122368,131072\n",
                TraceFormat::SystorCsv,
            ),
            ("230027 8 0 0\n1842745 64 0 1\n216082 8 0 2\n", TraceFormat::ArcLis),
            (
                "89968195792462 20782 gzip 283193184 8 R 6 0 56f11b711d91a065a2b6458eca924523\n",
                TraceFormat::Fiu,
            ),
            ("938513000 4 264719034 16 0\n938828000 3 197570570 16 0\n", TraceFormat::MqSim),
            ("0.000000 0 1024 8 1\n12.5 0 2048 16 0\n", TraceFormat::DiskSim),
            ("time,obj_id,obj_size,op\n0,12,4096,read\n", TraceFormat::LibCacheSimCsv),
            (
                "version,time,op,size,lbn\n1,5633898,2a,512,42932745\n1,5633898,28,4096,8\n",
                TraceFormat::CloudPhysicsCsv,
            ),
            // Without its header too: no other format reads a hex opcode third.
            (
                "1,5633898,2a,512,42932745\n1,5633899,28,4096,8\n",
                TraceFormat::CloudPhysicsCsv,
            ),
        ];
        for (text, format) in cases {
            assert_eq!(sniff(text.as_bytes()), Some(format), "{text}");
        }
    }

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
