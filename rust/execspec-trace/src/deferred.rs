//! The deferred mode ([`Options::deferred`](crate::Options)): fixed-size
//! binary records in per-thread buffers during the run, the JSON lines
//! written only by [`Recorder::finish`](crate::Recorder::finish).
//!
//! What a recording thread does per event: bump its own logical clock (no
//! shared counter), write one 32-byte record ([`Rec`]) into its current
//! chunk and publish the chunk's length with a release store. No lock, no
//! read-modify-write of a shared line, no formatting, no allocation (a
//! thread's first chunk holds 2,048 records, each later one 65,536 in a
//! 2 MiB huge page: see [`Chunk`]). A poll is one record (begin tick, end
//! tick, result, both times), expanded at finish into its `poll-begin`
//! and `poll-end`.
//!
//! # The clock: per-thread logical clocks, joined where the trace needs it
//!
//! Each thread has a counter L; every event's tick is `max(L, floor) + 1`
//! (and becomes L), where the floor is what the event must come after:
//!
//! | event | floor |
//! |---|---|
//! | spawn (wrapper) | — (the task's clock starts at the spawn's tick) |
//! | poll-begin (wrapper) | the task's last poll tick and its latest wake |
//! | poll-end (wrapper) | the task's latest wake |
//! | wake (wrapper) | the task's last poll tick (its begin while it runs) |
//! | any other tick ([`Recorder::record`](crate::Recorder::record), [`Op::tick`](crate::Op::tick), a thread's first) | every thread's last published tick (a barrier) |
//!
//! When the event reads a time stamp (`time` on spawns and polls) the
//! stamp joins the floor, so the ticks stay near real time across threads
//! (a hybrid logical clock: the join keeps the guarantees below, the stamp
//! only brings unrelated events of different threads close to their real
//! order). Without time the clock is purely logical.
//!
//! Each task carries two words: `last`, stored by the
//! polling thread at each poll-begin and poll-end, and `woken`, raised by
//! every wake with `fetch_max` before the executor's waker is called.
//!
//! What this guarantees (the order the trace is written in, by tick, ties
//! between threads broken by thread):
//! * each thread's events in program order (so each worker's, and
//!   `time` non-decreasing per worker);
//! * each task's events in an order that happened: a wake before the poll
//!   it causes (the executor's waker runs after the wake's `fetch_max`, and
//!   the poll loads `woken` after the executor handed it the task), a poll's
//!   end before the next poll's begin, the spawn before the first poll, a
//!   wake that found the task's poll begun after that begin;
//! * a barrier tick after every event that happened before it (every
//!   thread publishes its L with a release store after each tick; the
//!   barrier reads them all): a worker's or the executor's `stop` after
//!   everything the joins ordered before it, and for explicit calls the
//!   same guarantee as one atomic counter for ticks related by
//!   happens-before (a critical section, a CAS on a state word).
//!
//! What it does not give: an exact order between events of different
//! tasks on different threads that only the executor's internals relate
//! (with time on, near their real order, by the TSC). The checks a
//! black-box trace decides are about one task or one worker (no poll after
//! Ready, no concurrent polls of a task, one poll at a time per worker,
//! every wake followed by a poll, no spurious polls), so they are decided
//! exactly; the fairness figures counted in polls of other tasks and in
//! ticks are approximate in this mode (without time, not meaningful);
//! those in `time` are exact. Lock-free
//! recording (`order: intervals`) is not supported here: two operations
//! that overlap in real time may get disjoint intervals.
//!
//! # Time
//!
//! With the x86-64 invariant TSC (CPUID 8000_0007h EDX bit 8: constant
//! rate, running in every power state) `time` is a raw `rdtsc`, clamped to
//! be non-decreasing per thread, converted to nanoseconds at finish against
//! [`now_ns`](crate::now_ns) sampled when the first deferred recorder was
//! made and again at finish (at least 20 ms apart). Elsewhere (or with
//! `EXECSPEC_TRACE_TSC=0`) it is [`now_ns`](crate::now_ns). Only `time`
//! relies on the TSC, and only for being non-decreasing per thread (the
//! clamp ensures it) and close to real time across threads (the fairness
//! figures in `time`, and how near the order of unrelated events comes to
//! their real order); the guarantees above do not.

use crate::event::{Event, Kind, Outcome, PollResult, Queue, Source, StopReason};
use crate::packed::{field, text};
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

pub(crate) const SPAWN: u8 = 0;
pub(crate) const POLL: u8 = 1;
pub(crate) const WAKE: u8 = 2;
/// An explicit event ([`Recorder::record`](crate::Recorder::record),
/// [`Op::emit`](crate::Op::emit)) in a buffered or deferred recorder.
pub(crate) const EXPLICIT: u8 = 3;
pub(crate) const NO_WORKER: u32 = u32::MAX;

/// One wrapper event (spawn, wake) or one whole poll, unpacked (what the
/// wrapper records and finish writes; buffered as a [`Rec`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Full {
    /// The tick of the spawn or wake; of a poll, its begin.
    pub tick: u64,
    /// A poll's end tick.
    pub end: u64,
    pub task: u64,
    /// Raw stamps (see [`stamp`]); 0 = no time (a poll may have a begin
    /// time without an end time: [`Stamps::Begins`](crate::Stamps)).
    pub t0: u64,
    pub t1: u64,
    pub worker: u32,
    pub kind: u8,
    /// A poll's result: 0 pending, 1 ready, 2 panic.
    pub result: u8,
}

pub(crate) fn result_code(r: PollResult) -> u8 {
    match r {
        PollResult::Pending => 0,
        PollResult::Ready => 1,
        _ => 2,
    }
}

fn result_of(code: u8) -> PollResult {
    match code {
        0 => PollResult::Pending,
        1 => PollResult::Ready,
        _ => PollResult::Panic,
    }
}

#[cfg(test)]
fn worker_of(w: u32) -> Option<u32> {
    if w == NO_WORKER {
        None
    } else {
        Some(w)
    }
}

/// A buffered record: 32 bytes (a yield is a poll and a wake, so what
/// a thread writes per yield is 64 bytes, which is most of the memory a
/// recording takes). The task's id, worker, kind and result share one word
/// and a poll's end and end time are kept as differences; a record whose
/// values do not fit (a task id of 2^40 or more, a worker of 65,534 or
/// more, a poll longer than 2^32 ticks or stamp units) is followed, in the
/// same chunk, by an extension slot holding them whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rec {
    tick: u64,
    t0: u64,
    /// task (bits 0–39), worker + 1 (40–55, 0 = none), kind (56–57),
    /// result (58–59), WIDE (60), NO_T1 (61: a begin time and no end
    /// time). In an extension slot: the task.
    meta: u64,
    /// A poll's end − tick (bits 0–31) and t1 − t0 (32–63). In an
    /// extension slot: the worker.
    deltas: u64,
}

const TASK_BITS: u32 = 40;
const WORKER_SHIFT: u32 = 40;
const KIND_SHIFT: u32 = 56;
const RESULT_SHIFT: u32 = 58;
const WIDE: u64 = 1 << 60;
const NO_T1: u64 = 1 << 61;

impl Rec {
    /// The slot for f, and its extension when f's values do not fit.
    #[inline(always)]
    pub(crate) fn pack(f: &Full) -> (Rec, Option<Rec>) {
        let d_end = f.end.wrapping_sub(f.tick);
        let no_t1 = f.t1 == 0 && f.t0 != 0;
        let d_t = if no_t1 { 0 } else { f.t1.wrapping_sub(f.t0) };
        let w = if f.worker == NO_WORKER { 0 } else { u64::from(f.worker) + 1 };
        let fits = f.task < 1 << TASK_BITS && w < 0xffff && (d_end | d_t) >> 32 == 0;
        let bits = (u64::from(f.kind) << KIND_SHIFT) | (u64::from(f.result) << RESULT_SHIFT) | if no_t1 { NO_T1 } else { 0 };
        if fits {
            let meta = f.task | (w << WORKER_SHIFT) | bits;
            (Rec { tick: f.tick, t0: f.t0, meta, deltas: d_end | (d_t << 32) }, None)
        } else {
            let main = Rec { tick: f.tick, t0: f.t0, meta: bits | WIDE, deltas: 0 };
            (main, Some(Rec { tick: f.end, t0: f.t1, meta: f.task, deltas: u64::from(f.worker) }))
        }
    }

    /// Whether the slot holds an explicit event.
    #[inline]
    pub(crate) fn is_explicit(&self) -> bool {
        (self.meta >> KIND_SHIFT) as u8 & 3 == EXPLICIT
    }

    /// Whether an extension slot follows this one.
    #[inline]
    pub(crate) fn wide(&self) -> bool {
        self.meta & WIDE != 0
    }

    /// The record, with next its extension slot when it is wide.
    pub(crate) fn unpack(&self, next: Option<&Rec>) -> Full {
        let kind = (self.meta >> KIND_SHIFT) as u8 & 3;
        let result = (self.meta >> RESULT_SHIFT) as u8 & 3;
        match (self.wide(), next) {
            (true, Some(x)) => Full { tick: self.tick, end: x.tick, task: x.meta, t0: self.t0, t1: x.t0, worker: x.deltas as u32, kind, result },
            _ => {
                let w = (self.meta >> WORKER_SHIFT) & 0xffff;
                Full {
                    tick: self.tick,
                    end: self.tick.wrapping_add(self.deltas & 0xffff_ffff),
                    task: self.meta & ((1 << TASK_BITS) - 1),
                    t0: self.t0,
                    t1: if self.meta & NO_T1 != 0 { 0 } else { self.t0.wrapping_add(self.deltas >> 32) },
                    worker: if w == 0 { NO_WORKER } else { w as u32 - 1 },
                    kind,
                    result,
                }
            }
        }
    }
}

// An explicit event's slot: tick = seq, t0 = call (0: none), meta as a
// wrapper record's (task, worker + 1, kind EXPLICIT, WIDE), deltas = ret −
// call (bits 0–31) and the codes below. Its extension, when the values do
// not fit: tick = ret, t0 = task, meta = worker | victim << 32 (u32::MAX:
// none), deltas = the queue's code.
const X_KIND: u32 = 32; // 4 bits: the event's Kind
const X_SOURCE: u32 = 36; // 3 bits: 0 none, 1 + Source
const X_RESULT: u32 = 39; // 3 bits: 0 none, 1 + PollResult
const X_OUTCOME: u32 = 42; // 3 bits: 0 none, 1 + Outcome
const X_REASON: u32 = 45; // 2 bits: 0 none, 1 + StopReason
const X_HAS_RET: u64 = 1 << 47;
const X_VICTIM: u32 = 48; // 8 bits: 0 none, 1 + victim (< 255)
const X_QUEUE: u32 = 56; // 8 bits: 0 none, 1 global, 2 + n local n (< 254)

// In declaration order: a variant's code is its index + 1.
const KINDS: [Kind; 11] = [
    Kind::Spawn,
    Kind::Take,
    Kind::PollBegin,
    Kind::PollEnd,
    Kind::Wake,
    Kind::Requeue,
    Kind::Park,
    Kind::Unpark,
    Kind::Panic,
    Kind::Register,
    Kind::Stop,
];
const SOURCES: [Source; 4] = [Source::Local, Source::Global, Source::Steal, Source::Lifo];
const RESULTS: [PollResult; 4] = [PollResult::Pending, PollResult::Ready, PollResult::Panic, PollResult::Error];
const OUTCOMES: [Outcome; 5] = [Outcome::Scheduled, Outcome::Notified, Outcome::Coalesced, Outcome::Late, Outcome::Dropped];
const REASONS: [StopReason; 3] = [StopReason::Shutdown, StopReason::Panic, StopReason::Unwound];

fn decode<T: Copy>(all: &[T], c: u64) -> Option<T> {
    (c as usize).checked_sub(1).and_then(|i| all.get(i).copied())
}

impl Rec {
    /// An explicit event as a slot, and an extension when its values do
    /// not fit; None for an event with a field only the general path
    /// writes (time, future, priority, detail).
    #[inline(always)]
    pub(crate) fn explicit(e: &Event) -> Option<(Rec, Option<Rec>)> {
        if e.time.is_some() || e.future != 0 || e.priority.is_some() || e.detail.is_some() {
            return None;
        }
        let call = e.call.unwrap_or(0);
        let (has_ret, ret) = match e.ret {
            Some(r) => (X_HAS_RET, r),
            None => (0, call),
        };
        let d_ret = ret.wrapping_sub(call);
        let w = e.worker.map_or(0, |w| u64::from(w) + 1);
        let v = e.victim.map_or(0, |v| u64::from(v) + 1);
        let q = match e.queue {
            None => 0,
            Some(Queue::Global) => 1,
            Some(Queue::Local(n)) => u64::from(n) + 2,
        };
        // Each code is the variant's index (the arrays above list them in
        // declaration order) + 1, 0 for none.
        let codes = ((e.kind as u64) << X_KIND)
            | (e.source.map_or(0, |x| x as u64 + 1) << X_SOURCE)
            | (e.result.map_or(0, |x| x as u64 + 1) << X_RESULT)
            | (e.outcome.map_or(0, |x| x as u64 + 1) << X_OUTCOME)
            | (e.reason.map_or(0, |x| x as u64 + 1) << X_REASON)
            | has_ret;
        let kind = u64::from(EXPLICIT) << KIND_SHIFT;
        let fits = e.task < 1 << TASK_BITS && w < 0xffff && v < 0xff && q < 0xff && d_ret >> 32 == 0 && (call != 0 || has_ret == 0);
        if fits {
            let meta = e.task | (w << WORKER_SHIFT) | kind;
            Some((Rec { tick: e.seq, t0: call, meta, deltas: d_ret | codes | (v << X_VICTIM) | (q << X_QUEUE) }, None))
        } else {
            let main = Rec { tick: e.seq, t0: call, meta: kind | WIDE, deltas: codes };
            let wv = u64::from(e.worker.unwrap_or(u32::MAX)) | (u64::from(e.victim.unwrap_or(u32::MAX)) << 32);
            Some((main, Some(Rec { tick: ret, t0: e.task, meta: wv, deltas: q })))
        }
    }

    /// The explicit event of this slot (with next its extension when it
    /// is wide).
    pub(crate) fn explicit_event(&self, next: Option<&Rec>) -> Event {
        let d = self.deltas;
        let (task, worker, victim, queue, ret) = match (self.wide(), next) {
            (true, Some(x)) => {
                let opt = |v: u32| (v != u32::MAX).then_some(v);
                (x.t0, opt(x.meta as u32), opt((x.meta >> 32) as u32), x.deltas, x.tick)
            }
            _ => {
                let w = (self.meta >> WORKER_SHIFT) & 0xffff;
                let v = (d >> X_VICTIM) & 0xff;
                (self.meta & ((1 << TASK_BITS) - 1), (w != 0).then(|| w as u32 - 1), (v != 0).then(|| v as u32 - 1), d >> X_QUEUE, self.t0.wrapping_add(d & 0xffff_ffff))
            }
        };
        let mut e = Event::new(KINDS[((d >> X_KIND) & 0xf) as usize % KINDS.len()]);
        e.seq = self.tick;
        e.task = task;
        e.worker = worker;
        e.victim = victim;
        e.queue = match queue {
            0 => None,
            1 => Some(Queue::Global),
            n => Some(Queue::Local((n - 2) as u32)),
        };
        e.source = decode(&SOURCES, (d >> X_SOURCE) & 7);
        e.result = decode(&RESULTS, (d >> X_RESULT) & 7);
        e.outcome = decode(&OUTCOMES, (d >> X_OUTCOME) & 7);
        e.reason = decode(&REASONS, (d >> X_REASON) & 3);
        e.call = (self.t0 != 0).then_some(self.t0);
        e.ret = (d & X_HAS_RET != 0).then_some(ret);
        e
    }
}

impl Full {
    /// Whether the event (half 1: a poll's end) uses a v1.1 field.
    pub(crate) fn is_v1_1(&self) -> bool {
        self.kind == POLL || (self.kind == SPAWN && self.t0 != 0)
    }

    /// Appends the JSON line of the record's event half (1: a poll's end)
    /// with seq, as [`Packed::write_json`] writes the same event.
    pub(crate) fn write_json(&self, half: u32, seq: u64, time: impl Fn(u64) -> u64, out: &mut Vec<u8>) {
        let (kind, raw) = match (self.kind, half) {
            (SPAWN, _) => ("spawn", self.t0),
            (WAKE, _) => ("wake", 0),
            (_, 0) => ("poll-begin", self.t0),
            _ => ("poll-end", self.t1),
        };
        field(out, b"{\"seq\":", seq);
        text(out, b",\"kind\":\"", kind);
        field(out, b",\"task\":", self.task);
        if self.worker != NO_WORKER {
            field(out, b",\"worker\":", u64::from(self.worker));
        }
        if self.kind == POLL && half == 1 {
            text(out, b",\"result\":\"", result_of(self.result).name());
        }
        if self.kind == POLL {
            out.extend_from_slice(b",\"future\":1");
        }
        if raw != 0 {
            field(out, b",\"time\":", time(raw));
        }
        out.extend_from_slice(b"}\n");
    }

    /// The events the record stands for, as [`Event`]s (for tests).
    #[cfg(test)]
    pub(crate) fn to_events(&self, time: impl Fn(u64) -> u64) -> Vec<Event> {
        let w = worker_of(self.worker);
        let with_time = |mut e: Event, raw: u64| {
            if raw != 0 {
                e.time = Some(time(raw));
            }
            e
        };
        match self.kind {
            SPAWN => vec![with_time(Event::spawn(self.task, w, None), self.t0)],
            WAKE => vec![Event::wake(self.task, w, None)],
            _ => vec![
                with_time(Event::poll_begin(self.task, w).with_future(1), self.t0),
                with_time(Event::poll_end(self.task, w, result_of(self.result)).with_future(1), self.t1),
            ],
        }
    }
}

/// A task's two clock words (see the module doc).
#[derive(Default)]
pub(crate) struct TaskClock {
    pub last: AtomicU64,
    pub woken: AtomicU64,
}

/// Slots in a thread's first chunk (64 KiB), and in each later one
/// (2 MiB, huge pages where the system gives them on request). At most
/// 2^16: finish addresses a record by chunk and 16 bits of offset.
pub(crate) const SMALL: usize = 2048;
pub(crate) const BIG: usize = HUGE_PAGE / std::mem::size_of::<Rec>();
const _: () = assert!(BIG <= 1 << 16 && SMALL < BIG && std::mem::size_of::<Rec>() == 32);
const HUGE_PAGE: usize = 2 << 20;
/// Chunks kept for reuse after finish, of each size (at most 30 MiB): a
/// chunk touched before costs no page faults, which is most of what a
/// fresh one costs.
const POOL_SMALL: usize = 64;
const POOL_BIG: usize = 12;

/// A block of records: written by one thread (its first `len` are
/// published), then read at finish.
///
/// Why 2 MiB blocks: a record stream is written once, front to back, into
/// memory the process never touched, so each 4 KiB page costs a page
/// fault, about 0.3 µs on bare metal and 14 µs in the virtual machines
/// these figures come from (there, 9.6 MB of records cost the run 33 ms
/// of faults against its own 11 ms). A big chunk is 2 MiB-aligned and
/// asks for a transparent huge page (Linux `madvise`), one fault instead
/// of 512; a thread that records little never gets past its small one.
pub(crate) struct Chunk {
    ptr: std::ptr::NonNull<Rec>,
    cap: usize,
    len: usize,
}

// SAFETY: a Chunk owns its records (plain data) like a Vec.
unsafe impl Send for Chunk {}

impl Chunk {
    fn layout(cap: usize) -> std::alloc::Layout {
        let align = if cap == BIG { HUGE_PAGE } else { std::mem::align_of::<Rec>() };
        std::alloc::Layout::from_size_align(cap.max(1) * std::mem::size_of::<Rec>(), align).expect("a chunk layout")
    }

    /// An empty chunk of cap records.
    fn new(cap: usize) -> Chunk {
        Chunk::try_new(cap).unwrap_or_else(|| std::alloc::handle_alloc_error(Chunk::layout(cap)))
    }

    /// An empty chunk of cap records, or None if the allocator has no room.
    fn try_new(cap: usize) -> Option<Chunk> {
        let layout = Chunk::layout(cap);
        // SAFETY: the layout's size is not zero.
        let p = unsafe { std::alloc::alloc(layout) } as *mut Rec;
        let ptr = std::ptr::NonNull::new(p)?;
        if cap == BIG {
            advise_huge(p as *mut u8, layout.size());
        }
        Some(Chunk { ptr, cap, len: 0 })
    }

    /// Writes one byte in each 4 KiB page, so that the pages exist before
    /// the records are written.
    fn touch(&mut self) {
        let bytes = self.cap * std::mem::size_of::<Rec>();
        let p = self.ptr.as_ptr() as *mut u8;
        for off in (0..bytes).step_by(4096) {
            // SAFETY: inside the allocation; the slots are not records yet
            // (len 0), so any bytes may be written.
            unsafe { std::ptr::write_volatile(p.add(off), 0) };
        }
    }

    /// A chunk holding a copy of recs.
    fn copy_of(recs: &[Rec]) -> Chunk {
        let mut c = Chunk::new(recs.len());
        // SAFETY: c has room for recs.len() records; Rec is Copy.
        unsafe { std::ptr::copy_nonoverlapping(recs.as_ptr(), c.ptr.as_ptr(), recs.len()) };
        c.len = recs.len();
        c
    }
}

impl Chunk {
    /// The records, unpacked, with their offsets (extension slots skipped).
    pub(crate) fn records(&self) -> impl Iterator<Item = (usize, Full)> + '_ {
        let slots: &[Rec] = self;
        let mut off = 0;
        std::iter::from_fn(move || {
            let r = slots.get(off)?;
            let at = off;
            off += 1 + usize::from(r.wide());
            Some((at, r.unpack(slots.get(at + 1))))
        })
    }

    /// The record at off (not an extension slot), unpacked.
    pub(crate) fn full(&self, off: usize) -> Full {
        self[off].unpack(self.get(off + 1))
    }
}

impl std::ops::Deref for Chunk {
    type Target = [Rec];
    fn deref(&self) -> &[Rec] {
        // SAFETY: the first len records are written.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        // SAFETY: allocated in Chunk::new with this layout; Rec needs no drop.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr() as *mut u8, Chunk::layout(self.cap)) }
    }
}

/// Asks for transparent huge pages on [p, p + len) (p 2 MiB-aligned). A
/// refusal (huge pages off, or not Linux) leaves ordinary pages.
#[cfg(target_os = "linux")]
fn advise_huge(p: *mut u8, len: usize) {
    extern "C" {
        fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: std::ffi::c_int) -> std::ffi::c_int;
    }
    const MADV_HUGEPAGE: std::ffi::c_int = 14;
    // SAFETY: the range is one live allocation of ours; the advice changes
    // no contents.
    unsafe { madvise(p as *mut std::ffi::c_void, len, MADV_HUGEPAGE) };
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_: *mut u8, _: usize) {}

static POOL: Mutex<Vec<Chunk>> = Mutex::new(Vec::new());

fn fresh_chunk(cap: usize) -> Chunk {
    let mut pool = POOL.lock().unwrap();
    let c = match pool.iter().rposition(|c| c.cap == cap) {
        Some(i) => pool.swap_remove(i),
        None => {
            drop(pool);
            Chunk::new(cap)
        }
    };
    if cap == BIG {
        ahead();
    }
    c
}

/// Big chunks kept touched in the pool ahead of the recording threads
/// (see [`ahead`]): 4 MiB.
const AHEAD: usize = 2;

/// Asks the toucher thread to bring the pool back to AHEAD touched big
/// chunks: a thread that fills its chunk takes a touched one, and the
/// page faults of the next are paid by the toucher, not on the hot path
/// (a chunk's 2 MiB are one fault with a transparent huge page, 512
/// without, each 0.3–14 µs). Without a toucher (a thread cannot be
/// started) the recording thread touches its chunks itself as it writes.
pub(crate) fn ahead() {
    struct Toucher {
        want: Mutex<bool>,
        cv: std::sync::Condvar,
    }
    static T: OnceLock<Option<&'static Toucher>> = OnceLock::new();
    let t = T.get_or_init(|| {
        let t: &'static Toucher = Box::leak(Box::new(Toucher { want: Mutex::new(true), cv: std::sync::Condvar::new() }));
        let started = std::thread::Builder::new().name("execspec-trace-toucher".into()).spawn(move || loop {
            let mut want = t.want.lock().unwrap();
            while !*want {
                want = t.cv.wait(want).unwrap();
            }
            *want = false;
            drop(want);
            while POOL.lock().unwrap().iter().filter(|c| c.cap == BIG).count() < AHEAD {
                match Chunk::try_new(BIG) {
                    Some(mut c) => {
                        c.touch();
                        POOL.lock().unwrap().push(c);
                    }
                    None => break,
                }
            }
        });
        started.ok().map(|_| t)
    });
    if let Some(t) = t {
        *t.want.lock().unwrap() = true;
        t.cv.notify_one();
    }
}

/// Makes room for about `events` events ([`Options::reserve`](crate::Options)):
/// chunks allocated and touched (one write per 4 KiB page), put in the pool
/// where the recording threads take theirs, and a small chunk for each of
/// up to 16 threads.
///
/// At most what finish can address (2^14 big chunks, 32 GiB) and half the
/// memory the system says is available (Linux); an allocation refused ends
/// the reserve early. A reserve is an optimisation: it never fails.
pub(crate) fn prefill(events: usize) {
    ahead();
    if events > 0 {
        prefill_within(events, available_bytes().map_or(usize::MAX, |b| b / 2));
    }
}

/// [`prefill`] with at most `limit` bytes of big chunks; how many chunks
/// it made.
fn prefill_within(events: usize, limit: usize) -> usize {
    // A poll is one record for two events, a wake or spawn one for one:
    // records ≤ events, and a thread's small chunk holds its first ones.
    let big = events.div_ceil(BIG).min(MAX_CHUNKS).min(limit / HUGE_PAGE);
    let mut made = Vec::new();
    for cap in std::iter::repeat_n(BIG, big).chain(std::iter::repeat_n(SMALL, 16)) {
        match Chunk::try_new(cap) {
            Some(mut c) => {
                c.touch();
                made.push(c);
            }
            None => break,
        }
    }
    let n = made.len();
    POOL.lock().unwrap().extend(made);
    n
}

/// The chunks finish can address (recorder.rs: 14 bits of chunk).
pub(crate) const MAX_CHUNKS: usize = 1 << 14;

/// MemAvailable of /proc/meminfo, in bytes (Linux; None elsewhere or if
/// unreadable).
fn available_bytes() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Drops pooled chunks beyond what the pool keeps (those a reserve made and
/// the run did not use).
pub(crate) fn trim_pool() {
    trim(&mut POOL.lock().unwrap());
}

fn trim(p: &mut Vec<Chunk>) {
    let mut kept = [0, 0];
    p.retain(|c| {
        let (k, max) = if c.cap == BIG { (0, POOL_BIG) } else { (1, POOL_SMALL) };
        kept[k] += 1;
        kept[k] <= max
    });
}

/// Gives chunks back to the pool.
pub(crate) fn recycle_all(chunks: Vec<Chunk>) {
    for c in chunks {
        recycle(c);
    }
}

fn recycle(mut c: Chunk) {
    let max = match c.cap {
        SMALL => POOL_SMALL,
        BIG => POOL_BIG,
        _ => return,
    };
    c.len = 0;
    let mut p = POOL.lock().unwrap();
    if p.iter().filter(|k| k.cap == c.cap).count() < max {
        p.push(c);
    }
}

/// One thread's records. The owner thread writes slot `len` of the current
/// chunk and then publishes `len + 1` (release); a reader, holding `full`,
/// copies slots below `len` (acquire). The owner replaces the current
/// chunk only while holding `full`, so a reader sees a chunk and its own
/// length. The slots a reader copies are never written again.
pub(crate) struct Stream {
    cur: AtomicPtr<Rec>,
    /// The current chunk's capacity (written by the owner holding `full`).
    cap: AtomicUsize,
    len: AtomicUsize,
    full: Mutex<Vec<Chunk>>,
}

impl Stream {
    pub(crate) fn new() -> Stream {
        // No chunk until the first record: len = cap makes push rotate.
        Stream { cur: AtomicPtr::new(std::ptr::null_mut()), cap: AtomicUsize::new(0), len: AtomicUsize::new(0), full: Mutex::new(Vec::new()) }
    }

    /// Appends f. Owner thread only.
    // Always: called out of line, the Full passed on the stack was read
    // back with loads wider than its stores (a store-forwarding stall,
    // 8 % of a worker's time on the spawn/yield benchmark).
    #[inline(always)]
    pub(crate) fn push(&self, f: Full) {
        let (r, ext) = Rec::pack(&f);
        self.push_slots(r, ext);
    }

    /// Appends a slot and its extension. Owner thread only.
    #[inline(always)]
    pub(crate) fn push_slots(&self, r: Rec, ext: Option<Rec>) {
        let need = 1 + usize::from(ext.is_some());
        let mut n = self.len.load(Ordering::Relaxed);
        if n + need > self.cap.load(Ordering::Relaxed) {
            self.rotate(n);
            n = 0;
        }
        // SAFETY: cur points to a chunk of cap records that only this
        // (owner) thread writes, and slots n and n + 1 < cap are not yet
        // published.
        unsafe {
            let p = self.cur.load(Ordering::Relaxed).add(n);
            p.write(r);
            if let Some(x) = ext {
                p.add(1).write(x);
            }
        }
        self.len.store(n + need, Ordering::Release);
    }

    /// Replaces the current chunk, of which n slots are written.
    #[cold]
    fn rotate(&self, n: usize) {
        let old_cap = self.cap.load(Ordering::Relaxed);
        let fresh = std::mem::ManuallyDrop::new(fresh_chunk(if old_cap == 0 { SMALL } else { BIG }));
        let mut full = self.full.lock().unwrap();
        let old = self.cur.swap(fresh.ptr.as_ptr(), Ordering::Relaxed);
        if let Some(ptr) = std::ptr::NonNull::new(old) {
            full.push(Chunk { ptr, cap: old_cap, len: n });
        }
        self.cap.store(fresh.cap, Ordering::Relaxed);
        self.len.store(0, Ordering::Release);
    }

    /// Moves every published record to out: the full chunks themselves
    /// (no copy; give them back with [`recycle_all`]) and a copy of the
    /// current one's (which stays with its owner). Any thread; meant to run
    /// once, at finish.
    pub(crate) fn take(&self, out: &mut Vec<Chunk>) {
        let mut full = self.full.lock().unwrap();
        out.append(&mut full);
        let p = self.cur.load(Ordering::Relaxed);
        let n = self.len.load(Ordering::Acquire);
        if !p.is_null() && n > 0 {
            // SAFETY: slots below the published len are written and stay
            // unchanged; cur does not change while full is held.
            out.push(Chunk::copy_of(unsafe { std::slice::from_raw_parts(p, n) }));
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if let Some(ptr) = std::ptr::NonNull::new(*self.cur.get_mut()) {
            recycle(Chunk { ptr, cap: *self.cap.get_mut(), len: 0 });
        }
    }
}

/// Whether `time` is read from the TSC (see the module doc).
#[inline]
pub(crate) fn use_tsc() -> bool {
    static USE: AtomicU8 = AtomicU8::new(0);
    match USE.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            let ok = invariant_tsc() && std::env::var("EXECSPEC_TRACE_TSC").map_or(true, |v| v != "0");
            USE.store(if ok { 1 } else { 2 }, Ordering::Relaxed);
            ok
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unused_unsafe)] // __cpuid is safe from Rust 1.87 on
fn invariant_tsc() -> bool {
    use std::arch::x86_64::__cpuid;
    // SAFETY: cpuid exists on every x86-64 processor.
    unsafe { __cpuid(0x8000_0000).eax >= 0x8000_0007 && __cpuid(0x8000_0007).edx & (1 << 8) != 0 }
}

#[cfg(not(target_arch = "x86_64"))]
fn invariant_tsc() -> bool {
    false
}

/// A raw time stamp: TSC ticks or nanoseconds (never 0).
#[inline(always)]
pub(crate) fn stamp() -> u64 {
    #[cfg(target_arch = "x86_64")]
    if use_tsc() {
        // SAFETY: rdtsc exists on every x86-64 processor.
        return unsafe { std::arch::x86_64::_rdtsc() } | 1;
    }
    crate::recorder::now_ns() + 1
}

/// The first calibration point: (now_ns, stamp) when the first deferred
/// recorder was made.
pub(crate) fn calibration_origin() -> (u64, u64) {
    static ORIGIN: OnceLock<(u64, u64)> = OnceLock::new();
    *ORIGIN.get_or_init(|| (crate::recorder::now_ns(), stamp()))
}

/// The conversion of raw stamps to nanoseconds, fixed at finish: a 32.32
/// fixed-point factor (an error below 1 ns per 4 s from the origin), no
/// division per event.
pub(crate) struct TimeScale {
    ns0: u64,
    raw0: u64,
    mult: u128,
}

impl TimeScale {
    pub(crate) fn now() -> TimeScale {
        let (ns0, raw0) = calibration_origin();
        if !use_tsc() {
            return TimeScale { ns0, raw0: ns0 + 1, mult: 1 << 32 };
        }
        // At least 20 ms between the two points (a sleep, no CPU).
        let since = crate::recorder::now_ns().saturating_sub(ns0);
        if since < 20_000_000 {
            std::thread::sleep(Duration::from_nanos(20_000_000 - since));
        }
        let (ns1, raw1) = (crate::recorder::now_ns(), stamp());
        let mult = (u128::from(ns1 - ns0) << 32) / u128::from(raw1.saturating_sub(raw0).max(1));
        TimeScale { ns0, raw0, mult }
    }

    /// Nanoseconds for a raw stamp, at least 1.
    pub(crate) fn ns(&self, raw: u64) -> u64 {
        let d = if raw >= self.raw0 {
            self.ns0 as i128 + ((u128::from(raw - self.raw0) * self.mult) >> 32) as i128
        } else {
            self.ns0 as i128 - ((u128::from(self.raw0 - raw) * self.mult) >> 32) as i128
        };
        d.clamp(1, i128::from(u64::MAX)) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packed::Packed;

    /// The direct formatter writes what Packed writes for the same event.
    #[test]
    fn rec_json_equals_packed_json() {
        let time = |raw: u64| raw * 3;
        for kind in [SPAWN, WAKE, POLL] {
            for (worker, t0, t1) in [(NO_WORKER, 0, 0), (0, 5, 9), (17, 0, 0), (3, 12345678901, 12345678999), (2, 5, 0)] {
                for result in 0..3 {
                    let r = Full { tick: 7, end: 8, task: 42, t0, t1, worker, kind, result };
                    for (half, e) in r.to_events(time).into_iter().enumerate() {
                        let mut want = Vec::new();
                        Packed::from(Event { seq: 99, ..e.clone() }).write_json(&mut want);
                        let mut got = Vec::new();
                        r.write_json(half as u32, 99, time, &mut got);
                        assert_eq!(String::from_utf8(got).unwrap(), String::from_utf8(want).unwrap());
                        assert_eq!(r.is_v1_1(), kind == POLL || e.is_v1_1(), "{:?}", e);
                    }
                }
            }
        }
    }

    /// Every record comes back from its slot (and extension) unchanged,
    /// at the edges of what fits in one slot and past them.
    #[test]
    fn pack_unpack_round_trip() {
        let mut wide = 0;
        for task in [1, (1 << 40) - 1, 1 << 40, u64::MAX] {
            for worker in [NO_WORKER, 0, 0xfffd, 0xfffe, u32::MAX - 1] {
                for (d_end, d_t) in [(0, 0), (1, 5), (u32::MAX as u64, u32::MAX as u64), (1 << 32, 0), (0, 1 << 32)] {
                    for kind in [SPAWN, POLL, WAKE] {
                        let (tick, t0) = (u64::MAX - (1 << 33), 12_345);
                        // A begin time without an end time, too.
                        for t1 in [t0 + d_t, 0] {
                            let f = Full { tick, end: tick + d_end, task, t0, t1, worker, kind, result: 2 };
                            let (r, ext) = Rec::pack(&f);
                            assert_eq!(r.wide(), ext.is_some());
                            wide += usize::from(r.wide());
                            assert_eq!(r.unpack(ext.as_ref()), f);
                        }
                    }
                }
            }
        }
        assert!(wide > 0);
    }

    /// Every explicit event comes back from its slot (and extension)
    /// unchanged, at the edges of what fits in one slot and past them;
    /// events with a field of the general path are refused.
    #[test]
    fn explicit_round_trip() {
        let mut wide = 0;
        let kinds = [Kind::Spawn, Kind::Take, Kind::PollBegin, Kind::PollEnd, Kind::Wake, Kind::Requeue, Kind::Park, Kind::Unpark, Kind::Register, Kind::Stop];
        for kind in kinds {
            for task in [0, 1, (1 << 40) - 1, 1 << 40] {
                for worker in [None, Some(0), Some(0xfffd), Some(0xfffe), Some(u32::MAX - 1)] {
                    for (victim, queue) in [(None, None), (Some(0), Some(Queue::Global)), (Some(253), Some(Queue::Local(252))), (Some(254), Some(Queue::Local(253))), (Some(u32::MAX - 1), Some(Queue::Local(u32::MAX - 2)))] {
                        for (call, ret) in [(None, None), (Some(5), Some(9)), (Some(1), Some(1 + u64::from(u32::MAX))), (Some(7), None), (None, Some(3))] {
                            let mut e = Event::new(kind);
                            e.seq = 42;
                            e.task = task;
                            e.worker = worker;
                            e.victim = victim;
                            e.queue = queue;
                            e.call = call;
                            e.ret = ret;
                            e.source = Some(Source::Steal);
                            e.result = Some(PollResult::Error);
                            e.outcome = Some(Outcome::Dropped);
                            e.reason = Some(StopReason::Unwound);
                            let (r, x) = Rec::explicit(&e).expect("an explicit event");
                            assert!(r.is_explicit() && r.wide() == x.is_some());
                            wide += usize::from(r.wide());
                            assert_eq!(r.explicit_event(x.as_ref()), e);
                            e.source = None;
                            e.result = None;
                            e.outcome = None;
                            e.reason = None;
                            let (r, x) = Rec::explicit(&e).unwrap();
                            assert_eq!(r.explicit_event(x.as_ref()), e);
                        }
                    }
                }
            }
        }
        assert!(wide > 0);
        assert!(Rec::explicit(&Event::poll_begin(1, 0).with_time(5)).is_none());
        assert!(Rec::explicit(&Event::poll_begin(1, 0).with_future(1)).is_none());
        assert!(Rec::explicit(&Event::spawn(1, None, None).with_priority(-1)).is_none());
        assert!(Rec::explicit(&Event::panic(1, 0, "boom")).is_none());
    }

    /// A stream's records across chunks, wide ones at a chunk's last slot
    /// among them: take gives every one back, in order, a record and its
    /// extension never split.
    #[test]
    fn stream_keeps_wide_records_whole() {
        let s = Stream::new();
        let mut want = Vec::new();
        for i in 0..(SMALL + BIG + 10) as u64 {
            // Wide (task past 40 bits) near the end of the first chunk.
            let task = if i as usize >= SMALL - 3 && (i as usize) < SMALL + 2 { 1 << 41 } else { i + 1 };
            let f = Full { tick: 10 + 2 * i, end: 11 + 2 * i, task, t0: 0, t1: 0, worker: 3, kind: POLL, result: 0 };
            s.push(f);
            want.push(f);
        }
        let mut chunks = Vec::new();
        s.take(&mut chunks);
        let got: Vec<Full> = chunks.iter().flat_map(|c| c.records().map(|(_, f)| f)).collect();
        assert_eq!(got.len(), want.len());
        assert!(got == want);
        assert!(chunks[0].len() < SMALL, "the first chunk's last slot is left empty: {}", chunks[0].len());
        for c in &chunks {
            for (off, f) in c.records() {
                assert_eq!(c.full(off), f);
            }
        }
        recycle_all(chunks);
    }

    /// The helper thread brings the pool to AHEAD touched big chunks when
    /// asked (the pool is shared with the tests running beside this one,
    /// which may take some: it is enough that it gets there once).
    #[test]
    fn ahead_fills_the_pool() {
        let big = || POOL.lock().unwrap().iter().filter(|c| c.cap == BIG).count();
        let start = std::time::Instant::now();
        ahead();
        while big() < AHEAD {
            assert!(start.elapsed() < Duration::from_secs(30), "the pool holds {} big chunks after 30 s", big());
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// A reserve's chunks wait in the pool; what the pool does not keep is
    /// dropped at finish. A reserve beyond any memory is bounded.
    #[test]
    fn prefill_then_trim() {
        assert_eq!(prefill_within(20 * BIG, usize::MAX), 20 + 16);
        assert_eq!(prefill_within(usize::MAX, 4 * HUGE_PAGE), 4 + 16);
        #[cfg(target_os = "linux")]
        assert!(available_bytes().is_some_and(|b| b > 0));
        // (The pool is shared with the tests running beside this one.)
        let mut p: Vec<Chunk> = (0..30).map(|_| Chunk::new(BIG)).chain((0..100).map(|_| Chunk::new(SMALL))).collect();
        trim(&mut p);
        let big = p.iter().filter(|c| c.cap == BIG).count();
        assert_eq!((big, p.len() - big), (POOL_BIG, POOL_SMALL));
    }
}
