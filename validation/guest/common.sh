# Shared helpers of the validation guest scripts (sourced; POSIX sh under busybox).
# Every workload writes one block of lines to /tmp/out.txt:
#   # WORKLOAD <name> <key=value>...     what was run (the host script copies these into params)
#   # DEV <major,minor> <name> [dm name] the devices, so a reader knows which is which
#   <tracefs lines>                      block_bio_queue of the traced devices only
#   # COUNTER <key>=<value>...           the kernel's own counters after the run
#   # END <name>
T=/sys/kernel/tracing
up() { cut -d' ' -f1 /proc/uptime; }
# fiorun NAME DEVICE SECONDS fio-args...: one short, direct, libaio fio job. With NIOS set, the
# job issues exactly NIOS I/Os instead of running for SECONDS (at most 120 s): the seed is fixed,
# so two runs with the same NIOS issue identical bios and differ only in the kernel's timing.
# A job that replays an iolog (`--read_iolog=...` among the args) sends it to DEVICE as fast as
# it goes, whole (no time limit).
fiorun() {
  n=$1 dev=$2 rt=$3; shift 3
  if [ -n "$NIOS" ]; then len="--number_ios=$NIOS --runtime=120"; else len="--runtime=$rt --time_based"; fi
  target="--filename=$dev"
  case " $* " in *" --read_iolog="*) len=""; target="--replay_redirect=$dev --replay_no_stall=1";; esac
  echo "### fio $n on $dev: $len (uptime $(up))"
  fio --name="$n" $target $len --direct=1 \
    --ioengine=libaio --group_reporting --randrepeat=1 --randseed=42 "$@" > /tmp/fio.$n.txt 2>&1
  grep -qE 'IOPS' /tmp/fio.$n.txt || { echo "### FIO FAILED $n"; cat /tmp/fio.$n.txt; }
  grep -E 'IOPS|err=' /tmp/fio.$n.txt
}
# devt MAJ MIN: the kernel's dev_t encoding used by tracepoint filters.
devt() { echo $(( ($1 << 20) | $2 )); }
# trace_on FILTER [keep]: the block events in $EVENTS (default block_bio_queue), filtered to
# some devices ("dev == X || dev == Y"); with "keep", the buffer is not cleared first (so a
# trace_marker written earlier stays).
trace_on() {
  echo 0 > $T/tracing_on
  [ "$2" = keep ] || { echo > $T/trace; echo 65536 > $T/buffer_size_kb; }
  for ev in ${EVENTS:-block_bio_queue}; do
    echo "$1" > $T/events/block/$ev/filter
    echo 1 > $T/events/block/$ev/enable
  done
  echo 1 > $T/tracing_on
}
# mark TEXT: a trace_marker line in the trace's own clock (the buffer is cleared first).
mark() {
  echo 0 > $T/tracing_on; echo > $T/trace; echo 65536 > $T/buffer_size_kb; echo 1 > $T/tracing_on
  echo "$1" > $T/trace_marker
}
# trace_off NAME: appends the workload's trace to /tmp/out.txt.
trace_off() {
  echo 0 > $T/tracing_on
  ov=$(cat $T/per_cpu/cpu*/stats | grep -E '^overrun' | awk '{s+=$2} END {print s+0}')
  echo "### overruns $1: $ov"
  { for b in /sys/block/*; do echo "# DEV $(cat $b/dev | tr : ,) $(basename $b) $(cat $b/dm/name 2>/dev/null)"; done
    echo "# OVERRUNS $ov"
    grep -v '^#' $T/trace; } >> /tmp/out.txt
  for ev in ${EVENTS:-block_bio_queue}; do
    echo 0 > $T/events/block/$ev/enable; echo 0 > $T/events/block/$ev/filter
  done
}
begin() { echo "### begin $1 (uptime $(up))"; echo "# WORKLOAD $*" >> /tmp/out.txt; }
counter() { echo "### COUNTER $*"; echo "# COUNTER $*" >> /tmp/out.txt; }
end() { echo "# END $1" >> /tmp/out.txt; }
majmin() { cat /sys/block/$1/dev | tr : ' '; }
# The replay log that validation/run.sh's REPLAY= appended to this script, if any.
if grep -q '^__PAYLOAD__$' /guest.sh 2>/dev/null; then
  sed '1,/^__PAYLOAD__$/d' /guest.sh | base64 -d | gunzip > /tmp/replay.log
  echo "### replay log: $(wc -l < /tmp/replay.log) lines"
fi
