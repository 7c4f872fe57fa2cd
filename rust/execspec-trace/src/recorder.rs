//! The recorder: per-thread buffers, ordered and formatted by `finish`
//! (the binary modes, the default: see [`Options`]) or, streaming, one
//! logical clock and a writer that merges them in seq order as the run
//! goes (what the rest of this page is about).
//!
//! Why a watermark is correct. Every tick of the clock is drawn by a thread
//! while it holds the lock of its own buffer, and the event that uses the
//! tick is pushed into that buffer before the lock is released (an [`Op`]
//! is that lock). The writer reads the clock, C, and then takes each
//! buffer's events under that buffer's lock. A tick below C was handed out
//! before the writer read C, so its thread held its buffer's lock then; the
//! writer's later acquisition of that lock therefore sees the event (or the
//! thread is still inside its op and the writer waits for it). So after one
//! round every event with seq < C is in the writer's hands, and writing
//! exactly those, sorted, never writes an event before one with a smaller
//! seq. Events with seq ≥ C wait for a later round.
//!
//! The buffer lock is contended only by the writer, a few hundred times a
//! second: recording an event costs a thread-local lookup, one uncontended
//! compare-and-swap, one fetch_add on the clock and a push onto a Vec.

use crate::deferred::{self, Stream, TimeScale};
use crate::event::{Event, Header, Kind, Order, Source, StopReason};
use crate::packed::Packed;
use std::cell::{Cell, RefCell, UnsafeCell};
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// Events per chunk of a thread's buffer. A buffer is a list of chunks of
/// fixed capacity, recycled by the writer: a Vec grown by doubling would
/// copy itself and touch fresh pages all the time, and first touches of
/// memory (page faults) are what recording costs most.
const CHUNK: usize = 256;

/// A per-thread buffer. `locked` is the lock the owner holds while it draws
/// ticks and pushes their events, and the writer holds while it takes the
/// events out. `depth`, `clock` and `last_stamp` are touched by the owner
/// thread only; `published`, `recs` and `counters` are written by the owner
/// and read by others (see [`crate::deferred`]). Aligned so that no other
/// thread's buffer or data shares its lines.
#[repr(align(128))]
pub(crate) struct Buf {
    locked: AtomicBool,
    depth: UnsafeCell<u32>,
    chunks: UnsafeCell<Chunks>,
    /// The thread's number in the recorder (registration order), which
    /// breaks ties between equal ticks of the deferred clock.
    idx: u32,
    /// Deferred mode: the thread's logical clock, and its value as of the
    /// last tick, published for barrier ticks.
    clock: UnsafeCell<u64>,
    published: AtomicU64,
    last_stamp: UnsafeCell<u64>,
    pub(crate) recs: Stream,
    /// Wakers made, waker clones, waker drops, wakes: counted per thread
    /// (a shared counter would be a contended line on every wake).
    counters: [AtomicU64; 4],
}

pub(crate) const WAKERS_MADE: usize = 0;
pub(crate) const WAKER_CLONES: usize = 1;
pub(crate) const WAKER_DROPS: usize = 2;
pub(crate) const WAKES: usize = 3;

struct Chunks {
    cur: Vec<Packed>,
    full: Vec<Vec<Packed>>,
    free: Vec<Vec<Packed>>,
}

impl Chunks {
    #[inline]
    fn push(&mut self, e: Event) {
        if self.cur.len() == self.cur.capacity() {
            let fresh = self.free.pop().unwrap_or_else(|| Vec::with_capacity(CHUNK));
            let full = std::mem::replace(&mut self.cur, fresh);
            if full.capacity() > 0 {
                self.full.push(full);
            }
        }
        self.cur.push(Packed::from(e));
    }
}

// SAFETY: `events` is accessed only with `locked` held; `depth` only by the
// owner thread (the buffer is created by and registered for one thread).
unsafe impl Sync for Buf {}
unsafe impl Send for Buf {}

impl Buf {
    fn new(idx: u32, clock: u64) -> Buf {
        Buf {
            locked: AtomicBool::new(false),
            depth: UnsafeCell::new(0),
            chunks: UnsafeCell::new(Chunks { cur: Vec::new(), full: Vec::new(), free: Vec::new() }),
            idx,
            clock: UnsafeCell::new(clock),
            published: AtomicU64::new(clock),
            last_stamp: UnsafeCell::new(0),
            recs: Stream::new(),
            counters: Default::default(),
        }
    }

    /// Deferred clock: the next tick, above floor and above every tick of
    /// this thread so far; published. Owner thread only.
    #[inline]
    pub(crate) fn advance(&self, floor: u64) -> u64 {
        // SAFETY: clock is owner-only (the buffer belongs to this thread).
        unsafe {
            let c = &mut *self.clock.get();
            *c = (*c).max(floor) + 1;
            self.published.store(*c, Ordering::Release);
            *c
        }
    }

    /// A raw time stamp, never below this thread's last. Owner thread only.
    #[inline(always)]
    pub(crate) fn stamp(&self) -> u64 {
        // SAFETY: last_stamp is owner-only.
        unsafe {
            let l = &mut *self.last_stamp.get();
            *l = (*l).max(deferred::stamp());
            *l
        }
    }

    /// Counts one of WAKERS_MADE, …, WAKES. Owner thread only (a load and a
    /// store, no read-modify-write).
    #[inline]
    pub(crate) fn count(&self, i: usize) {
        let c = &self.counters[i];
        c.store(c.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    fn acquire(&self) {
        let mut spins = 0u32;
        while self.locked.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                thread::yield_now();
            }
        }
    }
    fn release(&self) {
        self.locked.store(false, Ordering::Release);
    }
}

static NEXT_RECORDER: AtomicU64 = AtomicU64::new(1);

thread_local! {
    // This thread's buffer for each recorder it has recorded into.
    static BUFS: RefCell<Vec<(u64, Arc<Buf>)>> = const { RefCell::new(Vec::new()) };
    static WORKER: Cell<Option<u32>> = const { Cell::new(None) };
    // The recorder id and buffer this thread used last: the lookup of every
    // event but the first. No destructor, so usable while thread-locals
    // are destroyed (a waker dropped then).
    static LAST: Cell<(u64, *const Buf)> = const { Cell::new((0, std::ptr::null())) };
}

/// Declares which worker the current thread is (None: not a worker). Call it
/// from the executor's thread start, e.g. tokio's `on_thread_start`.
pub fn set_worker(worker: Option<u32>) {
    WORKER.with(|w| w.set(worker));
}

/// The worker the current thread declared with [`set_worker`].
#[inline]
pub fn current_worker() -> Option<u32> {
    WORKER.with(|w| w.get())
}

/// Monotonic nanoseconds since the first call in this process, plus one
/// (the `time` field of v1.1, where 0 means "not recorded": the first
/// call returns 1 or more, never 0).
pub fn now_ns() -> u64 {
    static ORIGIN: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    ns_since(*ORIGIN.get_or_init(Instant::now))
}

/// Nanoseconds from origin to now, plus one: never 0.
fn ns_since(origin: Instant) -> u64 {
    (origin.elapsed().as_nanos() as u64).saturating_add(1)
}

#[cfg(test)]
pub(crate) fn ns_since_for_test(origin: Instant) -> u64 {
    ns_since(origin)
}

/// Every snapshot of the buffer list made so far (see `Shared::snap`).
/// Each is boxed so that its address (which `snap` holds) stays put when
/// the list grows.
#[allow(clippy::vec_box)] // the boxes are what keeps each address put
struct Snapshots(Vec<Box<Snapshot>>);

/// The buffers registered when it was made.
struct Snapshot(Vec<*const Buf>);

// SAFETY: the pointers are to buffers that `Shared::bufs` keeps alive; the
// list is only read and appended to under its mutex.
unsafe impl Send for Snapshots {}

/// What the writer thread shares with the recording threads.
struct Shared {
    clock: AtomicU64,
    bufs: Mutex<Vec<Arc<Buf>>>,
    /// The buffers as of the last registration, read without a lock by
    /// [`Shared::max_published`] (a barrier tick of the deferred clock):
    /// a buffer registered before an event that happened before the
    /// barrier is in the snapshot the barrier loads (the store is Release,
    /// the load Acquire). Points into `snaps`.
    snap: std::sync::atomic::AtomicPtr<Snapshot>,
    snaps: Mutex<Snapshots>,
    header: Header,
    stop: Mutex<bool>,
    stop_cv: Condvar,
}

/// A value alone on its cache lines (two: adjacent lines are fetched in pairs).
#[repr(align(128))]
struct Padded<T>(T);

pub(crate) struct Inner {
    id: u64,
    s: Arc<Shared>,
    /// On a line of its own: every spawn writes it, every event reads the
    /// fields around it.
    next_task: Padded<AtomicU64>,
    writer: Mutex<Option<JoinHandle<io::Result<WriterState>>>>,
    /// Deferred mode: the writer state, used by finish only.
    later: Mutex<Option<WriterState>>,
    pub(crate) deferred: bool,
    /// Deferred or buffered: explicit events are binary records in the
    /// threads' streams, formatted by finish; ops take no lock.
    pub(crate) binary: bool,
    next_idx: AtomicU32,
    finished: AtomicBool,
    /// The header declares v1.0: events are checked for v1.1 fields as
    /// they are recorded, and counted in `undeclared`.
    pub(crate) v1_0: bool,
    pub(crate) undeclared: AtomicU64,
}

struct WriterState {
    out: Box<dyn Write + Send>,
    pending: Vec<Packed>,
    taken: Vec<Vec<Packed>>,
    pool: Vec<Vec<Packed>>,
    line: Vec<u8>,
    last: Option<u64>,
    written: u64,
    max_pending: usize,
    v1_1_in_v1_0: u64,
    minor: u32,
    error: Option<String>,
}

/// What [`Recorder::finish`] reports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Events written after the header.
    pub events: u64,
    /// Events recorded with a tick drawn after finish read the clock (lost).
    /// Always 0 in deferred mode, where events recorded after finish took
    /// the buffers are neither written nor counted.
    pub late: u64,
    /// The most events the writer held back at once (the merge window; in
    /// deferred mode, all of them).
    pub max_pending: usize,
    /// Wakers made by the future wrapper, and clones and drops of them.
    pub wakers_made: u64,
    pub waker_clones: u64,
    pub waker_drops: u64,
    /// wake and wake_by_ref calls through wrapped wakers.
    pub wakes: u64,
}

/// A trace recorder. Cheap to clone (one Arc); record from any thread.
///
/// ```
/// use execspec_trace::{Recorder, Header, Event, Queue, Source, PollResult};
/// let rec = Recorder::new(Header::new("doc", 1, "fifo"), Vec::<u8>::new());
/// rec.record(Event::spawn(1, None, Some(Queue::Global)));
/// rec.record(Event::take(1, 0, Source::Global, None));
/// rec.record(Event::poll_begin(1, Some(0)));
/// rec.record(Event::poll_end(1, Some(0), PollResult::Ready));
/// let summary = rec.finish().unwrap();
/// assert_eq!(summary.events, 4);
/// ```
#[derive(Clone)]
pub struct Recorder {
    pub(crate) inner: Arc<Inner>,
}

/// Options of a recorder. The default records binary: no writer thread,
/// no lock and no formatting while the program runs; [`Recorder::finish`]
/// orders and formats everything. Which binary mode depends on the
/// header's order: `order: intervals` needs the one shared clock
/// (buffered), any other the per-thread clocks (deferred). Set `deferred`
/// or `buffered` to choose, or `streaming` ([`Options::streaming()`]) for a
/// trace written as the run goes in bounded memory.
///
/// The binary modes start one helper thread per process (with the first
/// such recorder; it sleeps when not needed): it keeps two 2 MiB chunks
/// of record memory allocated and touched ahead of the recording threads,
/// so that the page faults of fresh memory are paid off the hot path as
/// far as it keeps up; [`Options::reserve`] makes room before the run.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Streaming mode: how often the writer merges the buffers (default,
    /// zero: 2 ms).
    pub interval: Duration,
    /// Deferred mode (what the default gives under any order but
    /// intervals; set it to choose it): no writer thread and no shared clock;
    /// each thread keeps a logical clock and buffers binary records, and
    /// [`Recorder::finish`] orders, formats and writes everything. The
    /// cheapest way to record a black-box trace ([`Recorder::trace`]);
    /// memory grows by 32 bytes per poll or wake until finish. See
    /// [`crate::deferred`] for the order it guarantees (not
    /// `order: intervals`).
    pub deferred: bool,
    /// Binary modes: room made at creation for this many events (default
    /// 0: none). Their memory is allocated and touched before the run, so
    /// the run does not pay its page faults; what is not used is given
    /// back at finish. A program that records about as much each time can
    /// take the figure from the last run's [`Summary::events`]. Bounded by
    /// half the memory available (Linux) and what one recorder can hold; a
    /// reserve the allocator refuses ends early, never fails.
    pub reserve: usize,
    /// Buffered mode (what the default gives under `order: intervals`; set
    /// it to choose it; ignored when deferred): the one shared
    /// clock of the streaming mode, but no writer thread: each event is a
    /// 32-byte binary record (64 with call and ret that do not fit in 32
    /// bits, or with a victim or queue number of 254 or more) in its
    /// thread's buffer, and [`Recorder::finish`] merges and formats them
    /// all. An op takes no lock (a tick and a store); memory grows with
    /// the run until finish. Events with `time`, `future`, `priority` or
    /// `detail` take the general path (80 bytes).
    pub buffered: bool,
    /// Streaming mode (ignored when deferred or buffered): the one shared
    /// clock, and a writer thread that merges the threads' buffers every
    /// `interval` and writes the lines as the run goes, so memory stays
    /// bounded however long the run; an op holds its thread's buffer lock
    /// and recording costs several times what the binary modes cost.
    pub streaming: bool,
}

impl Options {
    /// The streaming mode (see [`Options::streaming`], the field).
    pub fn streaming() -> Options {
        Options { streaming: true, ..Options::default() }
    }

    /// The binary mode these options give under header: deferred, buffered,
    /// or neither (streaming).
    fn mode(&self, header: &Header) -> (bool, bool) {
        match (self.deferred, self.buffered, self.streaming) {
            (true, _, _) => (true, false),
            (false, true, _) => (false, true),
            (false, false, true) => (false, false),
            (false, false, false) => (header.order != Order::Intervals, header.order == Order::Intervals),
        }
    }
}

impl Recorder {
    /// A recorder that writes header and then the events to out, with the
    /// default options: binary records during the run, the lines written
    /// by [`Recorder::finish`] (see [`Options`]).
    pub fn new(header: Header, out: impl Write + Send + 'static) -> Recorder {
        Recorder::with_options(header, out, Options::default())
    }

    /// A recorder with options.
    pub fn with_options(header: Header, out: impl Write + Send + 'static, opts: Options) -> Recorder {
        let minor = header.effective_minor();
        let (deferred, buffered) = opts.mode(&header);
        let binary = deferred || buffered;
        let interval = if opts.interval.is_zero() { Duration::from_millis(2) } else { opts.interval };
        if deferred {
            deferred::calibration_origin();
        }
        if binary {
            deferred::prefill(opts.reserve);
        }
        let inner = Arc::new(Inner {
            id: NEXT_RECORDER.fetch_add(1, Ordering::Relaxed),
            s: Arc::new(Shared {
                clock: AtomicU64::new(1),
                bufs: Mutex::new(Vec::new()),
                snap: std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()),
                snaps: Mutex::new(Snapshots(Vec::new())),
                header,
                stop: Mutex::new(false),
                stop_cv: Condvar::new(),
            }),
            next_task: Padded(AtomicU64::new(1)),
            writer: Mutex::new(None),
            later: Mutex::new(None),
            deferred,
            binary,
            next_idx: AtomicU32::new(0),
            finished: AtomicBool::new(false),
            v1_0: minor == 0,
            undeclared: AtomicU64::new(0),
        });
        let mut st = WriterState {
            out: Box::new(io::BufWriter::with_capacity(1 << 16, out)),
            pending: Vec::new(),
            taken: Vec::new(),
            pool: Vec::new(),
            line: Vec::with_capacity(1 << 16),
            last: None,
            written: 0,
            max_pending: 0,
            v1_1_in_v1_0: 0,
            minor,
            error: None,
        };
        if binary {
            *inner.later.lock().unwrap() = Some(st);
            return Recorder { inner };
        }
        let w = Arc::clone(&inner.s);
        let handle = thread::Builder::new()
            .name("execspec-trace-writer".into())
            .spawn(move || -> io::Result<WriterState> {
                st.out.write_all(w.header.to_json().as_bytes())?;
                let mut stop = w.stop.lock().unwrap();
                while !*stop {
                    stop = w.stop_cv.wait_timeout(stop, interval).unwrap().0;
                    if *stop {
                        break;
                    }
                    drop(stop);
                    w.drain(&mut st, None)?;
                    stop = w.stop.lock().unwrap();
                }
                Ok(st)
            })
            .expect("execspec-trace: cannot start the writer thread");
        *inner.writer.lock().unwrap() = Some(handle);
        Recorder { inner }
    }

    /// The header the trace starts with.
    pub fn header(&self) -> &Header {
        &self.inner.s.header
    }

    /// A fresh task id (1, 2, …), for executors that have none of their own.
    pub fn new_task_id(&self) -> u64 {
        self.inner.next_task.0.fetch_add(1, Ordering::Relaxed)
    }

    /// Reads the clock without drawing a tick: in streaming mode the tick
    /// the next draw will get (every tick drawn so far is below it), in
    /// deferred mode the largest tick any thread has published. It orders
    /// nothing and no event can be recorded with it (an event's tick is
    /// drawn in an op: [`Recorder::op`], [`Recorder::record`]); use it to
    /// measure, e.g. how many ticks a stretch of a run drew.
    pub fn now(&self) -> u64 {
        if self.inner.deferred {
            return self.inner.s.max_published();
        }
        self.inner.s.clock.load(Ordering::SeqCst)
    }

    /// Opens an op on this thread's buffer: its ticks and the events
    /// recorded with them are taken by the writer together. Hold it across
    /// a state word's load–tick–CAS loop or a lock-free queue operation.
    /// In the binary modes (the default) an op takes no lock; streaming,
    /// it holds the thread's buffer lock, so keep it short (the writer
    /// waits for it). Ops nest on one thread.
    #[inline(always)]
    pub fn op(&self) -> Op<'_> {
        let buf = self.local_buf();
        // Deferred and buffered: no writer reads the buffers during the
        // run, so no lock (a record is published by its stream's store).
        let locked = !self.inner.binary;
        if locked {
            lock_op(buf);
        }
        Op { rec: self, buf, locked, _not_send: std::marker::PhantomData }
    }

    /// This thread's buffer for this recorder. The pointer stays valid while
    /// the recorder lives (its list of buffers holds an Arc of each).
    #[inline]
    pub(crate) fn local_buf(&self) -> *const Buf {
        let id = self.inner.id;
        let (last, p) = LAST.with(|c| c.get());
        if last == id {
            return p;
        }
        let p = self.local_buf_slow();
        LAST.with(|c| c.set((id, p)));
        p
    }

    #[cold]
    fn local_buf_slow(&self) -> *const Buf {
        let id = self.inner.id;
        let found = BUFS.try_with(|bufs| {
            let mut bufs = bufs.borrow_mut();
            if let Some(i) = bufs.iter().position(|(r, _)| *r == id) {
                if i != 0 {
                    bufs.swap(0, i); // the recorder used last comes first
                }
                return Arc::as_ptr(&bufs[0].1);
            }
            // Forget buffers of recorders that finished (only we hold them).
            bufs.retain(|(_, b)| Arc::strong_count(b) > 1);
            let b = self.new_buf();
            let p = Arc::as_ptr(&b);
            bufs.insert(0, (id, b));
            p
        });
        // While this thread's locals are destroyed: a buffer the recorder
        // alone holds (one per call; only wakers dropped then get here).
        found.unwrap_or_else(|_| Arc::as_ptr(&self.new_buf()))
    }

    fn new_buf(&self) -> Arc<Buf> {
        let mut bufs = self.inner.s.bufs.lock().unwrap();
        // A thread's clock starts above every tick published so far: its
        // first events come after everything that happened before it
        // started.
        let start = bufs.iter().map(|b| b.published.load(Ordering::Acquire)).max().unwrap_or(0);
        let b = Arc::new(Buf::new(self.inner.next_idx.fetch_add(1, Ordering::Relaxed), start));
        bufs.push(Arc::clone(&b));
        // A new snapshot of the buffers for max_published; the old ones
        // stay alive (a reader may hold one) until the recorder is dropped.
        let mut snap = Box::new(Snapshot(bufs.iter().map(Arc::as_ptr).collect()));
        let p: *mut Snapshot = &mut *snap;
        self.inner.s.snaps.lock().unwrap().0.push(snap);
        self.inner.s.snap.store(p, Ordering::Release);
        b
    }

    /// Records e now: its seq is drawn and the event buffered in one op.
    /// This is the whole contract for recorders whose executor draws
    /// inside its own critical sections (order "seq"): call it there.
    // Always inlined: out of line, the event built on the caller's stack
    // was read back with loads wider than its stores (a store-forwarding
    // stall, 40 % of a buffered record's time).
    #[inline(always)]
    pub fn record(&self, e: Event) -> u64 {
        let mut op = self.op();
        let s = op.tick();
        op.emit(Event { seq: s, ..e });
        s
    }

    /// Records a push (spawn, wake scheduled, requeue with its queue) done
    /// by f with the interval contract: call is drawn before f, ret after,
    /// and the event's seq is its call. Returns f's value.
    ///
    /// f runs inside an op (the push's seq is drawn before it and its
    /// event must be buffered in the same op): it must not block. A push
    /// that can wait (a bounded channel's `send`) stalls the writer and
    /// [`Recorder::finish`] while it waits; use a non-blocking attempt
    /// (`try_send`) in [`Recorder::try_push`] and retry outside.
    pub fn push<R>(&self, e: Event, f: impl FnOnce() -> R) -> R {
        match self.try_push(e, || Ok::<R, std::convert::Infallible>(f())) {
            Ok(r) => r,
            Err(never) => match never {},
        }
    }

    /// A push that may fail (a send on a closed channel, a full bounded
    /// queue): as [`Recorder::push`], but the event is recorded only when
    /// f returns Ok; a failed push leaves nothing in the trace (its ticks
    /// are drawn and unused, which the format allows).
    pub fn try_push<R, E>(&self, e: Event, f: impl FnOnce() -> Result<R, E>) -> Result<R, E> {
        let mut op = self.op();
        let call = op.tick();
        let r = f();
        if r.is_ok() {
            let ret = op.tick();
            op.emit(Event { seq: call, call: Some(call), ret: Some(ret), ..e });
        }
        r
    }

    /// Records a take done by f with the interval contract: call before f,
    /// ret after, seq = ret. f returns the task with its source and victim,
    /// or None (nothing recorded). Returns f's value.
    ///
    /// f runs outside any op, so it may block (a channel's `recv`, a
    /// condition variable): the writer and [`Recorder::finish`] do not
    /// wait for it. (A take's seq is its ret, drawn after f in an op of its
    /// own; its call is only a bound.) A take that returns after finish is
    /// not written.
    pub fn take<T>(&self, worker: impl Into<Option<u32>>, f: impl FnOnce() -> Option<(T, u64, Source, Option<u32>)>) -> Option<T> {
        let call = self.op().tick();
        let (t, task, src, victim) = f()?;
        let mut op = self.op();
        let ret = op.tick();
        op.emit(Event { seq: ret, call: Some(call), ret: Some(ret), ..Event::take(task, worker, src, victim) });
        Some(t)
    }

    /// Records the executor (worker None) or one worker stopping (v1.1).
    /// Called while the thread unwinds from a panic (from a destructor or
    /// a guard: `std::thread::panicking()`), the stop's reason is
    /// `unwound`; otherwise no reason is written (see
    /// [`Recorder::stop_with`]).
    pub fn stop(&self, worker: impl Into<Option<u32>>) {
        let mut e = Event::stop(worker);
        if thread::panicking() {
            e.reason = Some(StopReason::Unwound);
        }
        self.record(e);
    }

    /// Records a stop with its reason (v1.1). While the thread unwinds
    /// from a panic a `shutdown` is recorded as `unwound`: the executor
    /// did not stop on its own terms.
    pub fn stop_with(&self, worker: impl Into<Option<u32>>, reason: StopReason) {
        let reason = if reason == StopReason::Shutdown && thread::panicking() { StopReason::Unwound } else { reason };
        self.record(Event::stop(worker).with_reason(reason));
    }

    /// Events recorded so far that use a v1.1 field under a header that
    /// declares v1.0 ([`Header::v1_0`]); counted as they are recorded, so
    /// a program can stop at the first. Always 0 under a v1.1 header.
    /// [`Recorder::finish`] fails when there were any.
    pub fn undeclared_v1_1(&self) -> u64 {
        self.inner.undeclared.load(Ordering::Relaxed)
    }

    /// Merges what is buffered, writes it, and flushes. Call it when no
    /// thread records any more (e.g. after the runtime was dropped): events
    /// whose tick is drawn after finish reads the clock are not written
    /// (counted as late). Idempotent: a second call returns an error.
    pub fn finish(&self) -> io::Result<Summary> {
        if self.inner.finished.swap(true, Ordering::SeqCst) {
            return Err(io::Error::other("execspec-trace: finish called twice"));
        }
        if self.inner.binary {
            let st = self.inner.later.lock().unwrap().take().expect("writer state");
            return self.finish_deferred(st);
        }
        *self.inner.s.stop.lock().unwrap() = true;
        self.inner.s.stop_cv.notify_all();
        let h = self.inner.writer.lock().unwrap().take().expect("writer");
        let mut st = match h.join() {
            Ok(r) => r?,
            Err(_) => return Err(io::Error::other("execspec-trace: the writer thread panicked")),
        };
        let c = self.inner.s.clock.load(Ordering::SeqCst);
        self.inner.s.drain(&mut st, Some(c))?;
        st.out.flush()?;
        if let Some(e) = st.error.take() {
            return Err(io::Error::new(io::ErrorKind::InvalidData, e));
        }
        v1_1_declared(st.v1_1_in_v1_0)?;
        let late = st.pending.len() as u64;
        Ok(self.summary(Summary { events: st.written, late, max_pending: st.max_pending, ..Summary::default() }))
    }

    /// s with the waker counts summed over the threads.
    fn summary(&self, mut s: Summary) -> Summary {
        for b in self.inner.s.bufs.lock().unwrap().iter() {
            let c = |i: usize| b.counters[i].load(Ordering::Relaxed);
            s.wakers_made += c(WAKERS_MADE);
            s.waker_clones += c(WAKER_CLONES);
            s.waker_drops += c(WAKER_DROPS);
            s.wakes += c(WAKES);
        }
        s
    }

    /// Deferred and buffered modes: takes every thread's records and
    /// events, orders them by (tick, thread), renumbers the ticks 1, 2, …
    /// (seq, call and ret alike) and writes the lines.
    fn finish_deferred(&self, mut st: WriterState) -> io::Result<Summary> {
        let scale = TimeScale::now();
        let time = |raw: u64| scale.ns(raw);
        let bufs: Vec<Arc<Buf>> = self.inner.s.bufs.lock().unwrap().clone();
        // Every event as a 16-byte key: its tick and thread, and where it
        // is: GENERAL | index into evs, or a record's chunk, its offset in
        // the chunk and the half (1: a poll's end), CHUNK_BITS + 16 + 1 bits.
        const GENERAL: u32 = 1 << 31;
        const OFFSET_BITS: u32 = 16;
        const CHUNK_BITS: u32 = 31 - OFFSET_BITS - 1;
        // The explicit event a record's key points to (None: another kind).
        fn explicit_at(chunks: &[deferred::Chunk], at: u32) -> Option<Event> {
            if at & GENERAL != 0 {
                return None;
            }
            let c = &chunks[(at >> (OFFSET_BITS + 1)) as usize];
            let off = ((at >> 1) & ((1 << OFFSET_BITS) - 1)) as usize;
            c[off].is_explicit().then(|| c[off].explicit_event(c.get(off + 1)))
        }
        const _: () = assert!(deferred::MAX_CHUNKS == 1 << CHUNK_BITS);
        const _: () = assert!(deferred::BIG <= 1 << OFFSET_BITS);
        let mut evs: Vec<Packed> = Vec::new();
        let mut gen_keys: Vec<(u64, u32, u32)> = Vec::new();
        let mut chunks: Vec<deferred::Chunk> = Vec::new();
        let mut thread_of_chunk: Vec<u32> = Vec::new();
        let mut intervals = false;
        for b in &bufs {
            b.acquire();
            // SAFETY: the lock is held.
            let ch = unsafe { &mut *b.chunks.get() };
            for c in std::iter::once(&mut ch.cur).chain(ch.full.iter_mut()) {
                for e in c.drain(..) {
                    intervals |= e.has_interval();
                    gen_keys.push((e.seq, b.idx, GENERAL | evs.len() as u32));
                    evs.push(e);
                }
            }
            b.release();
            let from = chunks.len();
            b.recs.take(&mut chunks);
            thread_of_chunk.resize(thread_of_chunk.len() + chunks.len() - from, b.idx);
        }
        if chunks.len() >= 1 << CHUNK_BITS || evs.len() >= GENERAL as usize {
            return Err(io::Error::other(format!(
                "execspec-trace: more records than one deferred recorder holds ({} chunks of {} records, 2^31 explicit events)",
                1 << CHUNK_BITS,
                deferred::BIG
            )));
        }
        let n_recs: usize = chunks.iter().map(|c| c.len()).sum();
        let mut keys = Vec::with_capacity(2 * n_recs + evs.len());
        let mut wakes = 0;
        keys.append(&mut gen_keys);
        for (ci, c) in chunks.iter().enumerate() {
            let thread = thread_of_chunk[ci];
            for (off, r) in c.records() {
                let at = ((ci as u32) << (OFFSET_BITS + 1)) | ((off as u32) << 1);
                keys.push((r.tick, thread, at));
                wakes += u64::from(r.kind == deferred::WAKE);
                if r.kind == deferred::POLL {
                    keys.push((r.end, thread, at | 1));
                }
                if r.kind == deferred::EXPLICIT {
                    let e = c[off].explicit_event(c.get(off + 1));
                    intervals |= e.call.is_some() || e.ret.is_some();
                }
            }
        }
        keys.sort_unstable_by_key(|&(t, i, _)| (t, i));
        // The seq of the key at position n is n + 1, unless call and ret
        // ticks that are no event's seq need numbers too.
        let ranks: Option<Vec<(u64, u32)>> = intervals.then(|| {
            let mut all: Vec<(u64, u32)> = keys.iter().map(|&(t, i, _)| (t, i)).collect();
            for &(_, i, at) in &keys {
                if at & GENERAL != 0 {
                    evs[(at & !GENERAL) as usize].interval_ticks(|x| all.push((x, i)));
                } else if let Some(e) = explicit_at(&chunks, at) {
                    for x in e.call.into_iter().chain(e.ret) {
                        all.push((x, i));
                    }
                }
            }
            all.sort_unstable();
            all.dedup();
            all
        });
        let rank = |k: (u64, u32)| match &ranks {
            Some(r) => r.binary_search(&k).expect("a drawn tick") as u64 + 1,
            None => unreachable!(),
        };
        st.out.write_all(self.inner.s.header.to_json().as_bytes())?;
        for (n, &(t, i, at)) in keys.iter().enumerate() {
            let seq = if ranks.is_some() { rank((t, i)) } else { n as u64 + 1 };
            if at & GENERAL != 0 {
                let e = &mut evs[(at & !GENERAL) as usize];
                e.seq = seq;
                if ranks.is_some() {
                    e.map_interval_ticks(|x| rank((x, i)));
                }
                if st.minor == 0 && e.is_v1_1() {
                    st.v1_1_in_v1_0 += 1;
                }
                e.write_json(&mut st.line);
            } else if let Some(mut e) = explicit_at(&chunks, at) {
                e.seq = seq;
                if ranks.is_some() {
                    e.call = e.call.map(|x| rank((x, i)));
                    e.ret = e.ret.map(|x| rank((x, i)));
                }
                if st.minor == 0 && e.is_v1_1() {
                    st.v1_1_in_v1_0 += 1;
                }
                Packed::from(e).write_json(&mut st.line);
            } else {
                let r = chunks[(at >> (OFFSET_BITS + 1)) as usize].full(((at >> 1) & ((1 << OFFSET_BITS) - 1)) as usize);
                if st.minor == 0 && r.is_v1_1() {
                    st.v1_1_in_v1_0 += 1;
                }
                r.write_json(at & 1, seq, time, &mut st.line);
            }
            if st.line.len() >= 1 << 16 {
                st.out.write_all(&st.line)?;
                st.line.clear();
            }
        }
        st.out.write_all(&st.line)?;
        st.out.flush()?;
        v1_1_declared(st.v1_1_in_v1_0)?;
        let n = keys.len();
        deferred::recycle_all(chunks);
        deferred::trim_pool();
        Ok(self.summary(Summary { events: n as u64, late: 0, max_pending: n, wakes, ..Summary::default() }))
    }
}

impl Shared {
    /// The largest tick any thread published (deferred mode).
    #[inline]
    fn max_published(&self) -> u64 {
        let p = self.snap.load(Ordering::Acquire);
        if p.is_null() {
            return 0;
        }
        // SAFETY: a snapshot lives as long as self (`snaps`), and each
        // buffer in it as long as `bufs` holds it (to the end).
        unsafe { (*p).0.iter().map(|&b| (*b).published.load(Ordering::Acquire)).max().unwrap_or(0) }
    }

    /// One merge round: read the clock, take every buffer's events, write
    /// those below the watermark in seq order. With last = Some(c) (finish)
    /// the watermark is c.
    fn drain(&self, st: &mut WriterState, last: Option<u64>) -> io::Result<()> {
        let c = match last {
            Some(c) => c,
            None => self.clock.load(Ordering::SeqCst),
        };
        let bufs: Vec<Arc<Buf>> = self.bufs.lock().unwrap().clone();
        for b in &bufs {
            let fresh = st.pool.pop().unwrap_or_default();
            b.acquire();
            // SAFETY: the lock is held.
            let ch = unsafe { &mut *b.chunks.get() };
            if !ch.cur.is_empty() {
                st.taken.push(std::mem::replace(&mut ch.cur, fresh));
            } else if fresh.capacity() > 0 {
                st.pool.push(fresh);
            }
            st.taken.append(&mut ch.full);
            // Give the thread back emptied chunks for what it will record.
            while ch.free.len() < 8 {
                match st.pool.pop() {
                    Some(c) => ch.free.push(c),
                    None => break,
                }
            }
            b.release();
            for mut c in st.taken.drain(..) {
                st.pending.append(&mut c);
                if st.pool.len() < 4096 {
                    st.pool.push(c);
                }
            }
        }
        st.max_pending = st.max_pending.max(st.pending.len());
        // A stable sort finds the per-thread runs (each already in seq
        // order) and merges them: about linear here.
        st.pending.sort_by_key(|e| e.seq);
        let n = st.pending.partition_point(|e| e.seq < c);
        for e in &st.pending[..n] {
            if let Some(l) = st.last {
                if e.seq <= l && st.error.is_none() {
                    st.error = Some(format!("execspec-trace: event {} ({}) after event {}: a tick used outside the op that drew it", e.seq, e.kind_name(), l));
                }
            }
            if st.minor == 0 && e.is_v1_1() {
                st.v1_1_in_v1_0 += 1;
            }
            st.last = Some(e.seq);
            e.write_json(&mut st.line);
            if st.line.len() >= 1 << 16 {
                st.out.write_all(&st.line)?;
                st.line.clear();
            }
        }
        st.out.write_all(&st.line)?;
        st.line.clear();
        st.written += n as u64;
        st.pending.drain(..n);
        Ok(())
    }
}

/// An open op (streaming: the current thread holds its buffer's lock; the
/// binary modes: no lock). Draw ticks with
/// [`Op::tick`] and record their events with [`Op::emit`] before the op ends
/// (dropped). Not Send: it belongs to the thread that opened it.
pub struct Op<'r> {
    rec: &'r Recorder,
    buf: *const Buf,
    /// Whether the op holds its buffer's lock (streaming mode).
    locked: bool,
    _not_send: std::marker::PhantomData<*const ()>,
}

impl Op<'_> {
    /// Draws the next tick of the clock.
    #[inline]
    pub fn tick(&mut self) -> u64 {
        if self.rec.inner.deferred {
            // A barrier: above every tick any thread published.
            let floor = self.rec.inner.s.max_published();
            // SAFETY: see Recorder::op.
            return unsafe { (*self.buf).advance(floor) };
        }
        self.rec.inner.s.clock.fetch_add(1, Ordering::SeqCst)
    }

    /// Draws n consecutive ticks and returns the first (for two events that
    /// take effect in one step, e.g. a poll-end pending and its requeue).
    #[inline]
    pub fn ticks(&mut self, n: u64) -> u64 {
        if self.rec.inner.deferred {
            let first = self.tick();
            for _ in 1..n {
                // SAFETY: see Recorder::op.
                unsafe { (*self.buf).advance(0) };
            }
            return first;
        }
        self.rec.inner.s.clock.fetch_add(n, Ordering::SeqCst)
    }

    /// The task-state contract: loads word, draws a tick, and
    /// compare-and-swaps word from the loaded value to the first of
    /// f(loaded); when the CAS fails it loads again and redraws the tick.
    /// Returns the tick of the transition that took effect (the seq of its
    /// event), the value it replaced, and the second of f's values. Of two
    /// transitions of one word, the later one loaded after the earlier one's
    /// CAS, so drew its tick later: seq order is the word's order. (A
    /// transition that keeps the state must still change the word, e.g. a
    /// version in its high bits, or a concurrent one may be ordered wrong.)
    pub fn transition<T>(&mut self, word: &AtomicU64, mut f: impl FnMut(u64) -> (u64, T)) -> (u64, u64, T) {
        loop {
            let old = word.load(Ordering::SeqCst);
            let tick = self.tick();
            let (new, x) = f(old);
            if word.compare_exchange(old, new, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
                return (tick, old, x);
            }
        }
    }

    /// Buffers e, whose seq must be a tick drawn in this op.
    #[inline(always)]
    pub fn emit(&mut self, e: Event) {
        if self.rec.inner.v1_0 && e.is_v1_1() {
            self.rec.inner.undeclared.fetch_add(1, Ordering::Relaxed);
        }
        if !self.locked {
            // SAFETY: see Recorder::op; the stream is this thread's own.
            let b = unsafe { &*self.buf };
            match deferred::Rec::explicit(&e) {
                Some((r, x)) => b.recs.push_slots(r, x),
                None => emit_general(b, e),
            }
            return;
        }
        // SAFETY: this thread holds the buffer's lock (see Recorder::op).
        unsafe { (*(*self.buf).chunks.get()).push(e) }
    }

    /// The recorder the op belongs to.
    pub fn recorder(&self) -> &Recorder {
        self.rec
    }
}

/// Opens a streaming op: the thread's buffer locked (nested ops count).
#[cold]
#[inline(never)]
fn lock_op(buf: *const Buf) {
    // SAFETY: see Recorder::op; depth is owner-only.
    let b = unsafe { &*buf };
    unsafe {
        let d = &mut *b.depth.get();
        if *d == 0 {
            b.acquire();
        }
        *d += 1;
    }
}

/// A deferred or buffered op's event with a field of the general path:
/// buffered as a [`Packed`] under the buffer's lock, which finish takes too.
#[cold]
#[inline(never)]
fn emit_general(b: &Buf, e: Event) {
    b.acquire();
    // SAFETY: the lock is held.
    unsafe { (*b.chunks.get()).push(e) };
    b.release();
}

impl Drop for Op<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        if !self.locked {
            return;
        }
        // SAFETY: see Recorder::op.
        let b = unsafe { &*self.buf };
        unsafe {
            let d = &mut *b.depth.get();
            *d -= 1;
            if *d == 0 {
                b.release();
            }
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // A recorder dropped without finish: stop the writer thread.
        *self.s.stop.lock().unwrap() = true;
        self.s.stop_cv.notify_all();
    }
}

/// Whether the kind is a queue operation under the interval contract.
pub fn is_queue_op(e: &Event) -> bool {
    e.kind == Kind::Take || (matches!(e.kind, Kind::Spawn | Kind::Wake | Kind::Requeue) && e.queue.is_some())
}

/// The error of a finish whose events used v1.1 fields under a v1.0 header.
fn v1_1_declared(undeclared: u64) -> io::Result<()> {
    if undeclared == 0 {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidData,
        format!("execspec-trace: {} events use trace format v1.1 fields but the header does not declare minor 1 (Header::v1_1)", undeclared),
    ))
}
