//! The few system calls `blocksight record` needs that std does not wrap: the effective uid,
//! the kernel clocks, whether a pid is alive, and signal handlers that set a flag.
//!
//! This is the only module of the workspace allowed to use `unsafe`; each call is a plain libc
//! function with no pointers kept beyond the call.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// The effective user id of this process.
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid has no arguments, cannot fail and touches no memory of ours.
    unsafe { libc::geteuid() }
}

fn clock_nanos(clock: libc::clockid_t) -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call; the clocks we
    // pass exist on every Linux kernel, so the call cannot fail.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec)
}

/// CLOCK_MONOTONIC in nanoseconds: the same clock as the tracefs `mono` trace clock.
pub fn monotonic_nanos() -> u64 {
    clock_nanos(libc::CLOCK_MONOTONIC).max(0) as u64
}

/// CLOCK_REALTIME in nanoseconds since the Unix epoch.
pub fn realtime_nanos() -> i64 {
    clock_nanos(libc::CLOCK_REALTIME)
}

/// Whether a process with this pid exists (it may belong to another user).
pub fn pid_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill with signal 0 only checks for existence and permission; it sends nothing.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Set by the handler when SIGINT, SIGTERM or SIGHUP arrives.
static STOP_REQUESTED: AtomicBool = AtomicBool::new(false);
/// The signal that set [`STOP_REQUESTED`], for the exit message.
static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_stop_signal(signal: libc::c_int) {
    // Only async-signal-safe work here: two atomic stores.
    STOP_SIGNAL.store(signal, Ordering::SeqCst);
    STOP_REQUESTED.store(true, Ordering::SeqCst);
}

/// Installs handlers so SIGINT, SIGTERM and SIGHUP ask the recording loop to stop (it checks
/// [`stop_signal`] between reads) instead of killing the process with tracing still enabled.
pub fn install_stop_handlers() -> std::io::Result<()> {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" value; we then set the
        // handler to a function that only performs atomic stores, which is async-signal-safe.
        let rc = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction =
                on_stop_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut())
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The stop signal received so far, if any (`SIGINT` → 2, `SIGTERM` → 15, `SIGHUP` → 1).
pub fn stop_signal() -> Option<i32> {
    if STOP_REQUESTED.load(Ordering::SeqCst) {
        Some(STOP_SIGNAL.load(Ordering::SeqCst))
    } else {
        None
    }
}

/// Name of a stop signal for messages.
pub fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

/// CPU time (user + system) this process has used, in nanoseconds.
pub fn process_cpu_nanos() -> u64 {
    clock_nanos(libc::CLOCK_PROCESS_CPUTIME_ID).max(0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_pid_is_alive_and_clocks_advance() {
        assert!(pid_alive(std::process::id()));
        assert!(!pid_alive(0));
        let a = monotonic_nanos();
        let b = monotonic_nanos();
        assert!(b >= a && a > 0);
        assert!(realtime_nanos() > 1_600_000_000_000_000_000);
    }
}
