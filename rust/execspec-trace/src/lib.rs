//! Record execspec traces (format v1 and v1.1, JSON lines) from a Rust
//! executor, from any thread, with low overhead, and check them with
//! `verify check`.
//!
//! Three modes. **Binary, the default** ([`Options::default`]): no writer
//! thread, no lock and no formatting while the program runs; each event is
//! a 32-byte record in its thread's own stream, and [`Recorder::finish`]
//! orders and formats them all after the run. Under a header with
//! `order: intervals` the ticks come from the one shared clock (an
//! `AtomicU64`, `fetch_add`: **buffered**, [`Options::buffered`]), which
//! lock-free recording needs; under any other order from per-thread
//! logical clocks (**deferred**, [`Options::deferred`]), each joined with a
//! task's clock words at each poll and wake (the future wrapper) or with
//! every thread's last tick (an explicit call: a barrier), which orders
//! every pair of events related by happens-before (see [`deferred`]).
//! **Streaming** ([`Options::streaming()`]): the shared clock, and a writer
//! thread that merges the threads' buffers in seq order behind a
//! watermark (see [`recorder`] for why that is correct) and writes the
//! lines as the run goes, so memory stays bounded however long the run.
//! The same events, the same lines.
//!
//! What it costs on a busy loop of 16 ns polls with four explicit events
//! each (`examples/busybench.rs`), one thread, in CPU time of the loop
//! beside the same loop unrecorded (medians; a machine at load 20–30 on
//! 2 cores): deferred (the default here) adds about 10 ns per event in a
//! program's first recording and 5–9 with [`Options::reserve`]; buffered
//! 9–20; streaming several times that. The binary modes hold 32 bytes
//! per event (a wrapped poll: 32 for its begin and end) until `finish`,
//! which formats 100–600 ns per event after the run; the memory of the
//! records is touched ahead of the recording threads by a helper thread
//! (page faults off the hot path as far as it keeps up; a reserve makes
//! room before the run). Use streaming when a run is too long to hold.
//!
//! Two levels:
//!
//! * **Explicit calls, for executor authors.** [`Event`] has a constructor for
//!   every kind (spawn, take with source and victim, poll-begin, poll-end with
//!   result and future id, wake with outcome, requeue, register, park,
//!   unpark, panic, stop). Inside a critical section that orders an operation
//!   (order "seq"), [`Recorder::record`] draws the seq there. For lock-free
//!   queues (order "intervals", v1.1) [`Recorder::push`] and [`Recorder::take`]
//!   draw `call` before and `ret` after the queue operation (seq = call for a
//!   push, ret for a take), and [`Recorder::op`] opens an op in which
//!   [`Op::transition`] draws a task state's tick between its load and its
//!   CAS, redrawn when the CAS fails; [`state::StateWord`] is a task-state
//!   word made for it (the model's state and a version).
//! * **A future wrapper, for executors you cannot change** (tokio):
//!   [`Recorder::trace`] returns a [`Traced`] future that records spawn,
//!   poll-begin and poll-end on the polling worker ([`set_worker`] from the
//!   runtime's thread-start hook) and wraps the waker, recording every wake
//!   and counting every clone and drop. Its header is [`Header::black_box`]:
//!   `"unobserved":["take","queue","outcome"]`. Its second argument,
//!   [`Stamps`], says which events carry `time`: [`Stamps::Begins`] (the
//!   spawn and each poll-begin, all `verify check` measures with) reads the
//!   clock once per poll, `true` ([`Stamps::All`]) twice; each read is an
//!   `rdtsc` (20–23 ns of CPU on the Intel Xeon virtual machine of
//!   bench/results/rust.md, two locked adds' worth).
//!
//! ```
//! use execspec_trace::{Event, Header, PollResult, Queue, Recorder, Source};
//! let out = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
//! # struct W(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
//! # impl std::io::Write for W { fn write(&mut self, b: &[u8]) -> std::io::Result<usize> { self.0.lock().unwrap().extend_from_slice(b); Ok(b.len()) } fn flush(&mut self) -> std::io::Result<()> { Ok(()) } }
//! let rec = Recorder::new(Header::new("mine", 1, "fifo"), W(out.clone()));
//! rec.record(Event::spawn(1, None, Some(Queue::Global)));
//! rec.record(Event::take(1, 0, Source::Global, None));
//! rec.record(Event::poll_begin(1, Some(0)));
//! rec.record(Event::poll_end(1, Some(0), PollResult::Ready));
//! rec.finish().unwrap();
//! let text = String::from_utf8(out.lock().unwrap().clone()).unwrap();
//! assert!(text.ends_with("{\"seq\":4,\"kind\":\"poll-end\",\"task\":1,\"worker\":0,\"result\":\"ready\"}\n"));
//! ```

pub mod deferred;
mod event;
mod packed;
pub mod recorder;
pub mod state;
mod wrap;

pub use event::{json_string, Event, Header, Kind, Order, Outcome, PollResult, Queue, Source, StopReason};
pub use recorder::{current_worker, now_ns, set_worker, Op, Options, Recorder, Summary};
pub use wrap::{Stamps, Traced};

/// Creates (or truncates) the file at path for a trace, refusing to write
/// through a symbolic link: a link there is an error, its target is never
/// touched (`O_NOFOLLOW` on Linux and the BSDs; elsewhere the path is
/// checked just before it is opened).
pub fn create_file(path: impl AsRef<std::path::Path>) -> std::io::Result<std::fs::File> {
    let path = path.as_ref();
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(O_NOFOLLOW);
    }
    if O_NOFOLLOW == 0 && std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(std::io::Error::other(format!("{}: a symbolic link; a trace is not written through one", path.display())));
    }
    o.open(path).map_err(|e| {
        // ELOOP: the last component is a symbolic link.
        if e.raw_os_error() == Some(ELOOP) && O_NOFOLLOW != 0 {
            std::io::Error::other(format!("{}: a symbolic link; a trace is not written through one", path.display()))
        } else {
            std::io::Error::new(e.kind(), format!("{}: {}", path.display(), e))
        }
    })
}

#[cfg(all(target_os = "linux", any(target_arch = "x86", target_arch = "x86_64", target_arch = "aarch64", target_arch = "riscv64")))]
const O_NOFOLLOW: i32 = 0o400000;
#[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd", target_os = "netbsd", target_os = "openbsd"))]
const O_NOFOLLOW: i32 = 0x100;
#[cfg(not(any(
    all(target_os = "linux", any(target_arch = "x86", target_arch = "x86_64", target_arch = "aarch64", target_arch = "riscv64")),
    target_os = "macos",
    target_os = "ios",
    target_os = "freebsd",
    target_os = "netbsd",
    target_os = "openbsd"
)))]
const O_NOFOLLOW: i32 = 0;
#[cfg(target_os = "linux")]
const ELOOP: i32 = 40;
#[cfg(not(target_os = "linux"))]
const ELOOP: i32 = 62;

#[cfg(test)]
mod tests;
