//! What the benchmark examples share (included with `#[path]`).

/// The CPU time the calling thread has used (user and system, page faults
/// included), in seconds: what the loop itself cost, without the time
/// other processes of a loaded machine took its core away.
#[cfg(target_os = "linux")]
pub fn thread_cpu() -> f64 {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: ts is a valid timespec for the call to fill.
    unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.sec as f64 + ts.nsec as f64 * 1e-9
}

#[cfg(not(target_os = "linux"))]
pub fn thread_cpu() -> f64 {
    0.0
}
