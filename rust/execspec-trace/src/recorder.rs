//! The recorder: one logical clock, per-thread buffers, a writer that merges
//! them in seq order.
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

use crate::event::{Event, Header, Kind, Source};
use crate::packed::Packed;
use std::cell::{Cell, RefCell, UnsafeCell};
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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
/// events out. `depth` is touched by the owner thread only (nested ops).
struct Buf {
    locked: AtomicBool,
    depth: UnsafeCell<u32>,
    chunks: UnsafeCell<Chunks>,
}

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
}

/// Declares which worker the current thread is (None: not a worker). Call it
/// from the executor's thread start, e.g. tokio's `on_thread_start`.
pub fn set_worker(worker: Option<u32>) {
    WORKER.with(|w| w.set(worker));
}

/// The worker the current thread declared with [`set_worker`].
pub fn current_worker() -> Option<u32> {
    WORKER.with(|w| w.get())
}

/// Monotonic nanoseconds since the first call in this process (the `time`
/// field of v1.1).
pub fn now_ns() -> u64 {
    static ORIGIN: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let o = *ORIGIN.get_or_init(Instant::now);
    o.elapsed().as_nanos() as u64
}

/// What the writer thread shares with the recording threads.
struct Shared {
    clock: AtomicU64,
    bufs: Mutex<Vec<Arc<Buf>>>,
    header: Header,
    stop: Mutex<bool>,
    stop_cv: Condvar,
}

pub(crate) struct Inner {
    id: u64,
    s: Arc<Shared>,
    next_task: AtomicU64,
    writer: Mutex<Option<JoinHandle<io::Result<WriterState>>>>,
    finished: AtomicBool,
    pub(crate) waker_clones: AtomicU64,
    pub(crate) waker_drops: AtomicU64,
    pub(crate) wakers_made: AtomicU64,
    pub(crate) wakes: AtomicU64,
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
    pub late: u64,
    /// The most events the writer held back at once (the merge window).
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

/// Options of a recorder.
#[derive(Clone, Debug)]
pub struct Options {
    /// How often the writer merges the buffers (default 2 ms).
    pub interval: Duration,
}

impl Default for Options {
    fn default() -> Options {
        Options { interval: Duration::from_millis(2) }
    }
}

impl Recorder {
    /// A recorder that writes header and then the events to out, merging the
    /// threads' buffers every 2 ms on a writer thread of its own.
    pub fn new(header: Header, out: impl Write + Send + 'static) -> Recorder {
        Recorder::with_options(header, out, Options::default())
    }

    /// A recorder with options.
    pub fn with_options(header: Header, out: impl Write + Send + 'static, opts: Options) -> Recorder {
        let minor = header.effective_minor();
        let inner = Arc::new(Inner {
            id: NEXT_RECORDER.fetch_add(1, Ordering::Relaxed),
            s: Arc::new(Shared {
                clock: AtomicU64::new(1),
                bufs: Mutex::new(Vec::new()),
                header,
                stop: Mutex::new(false),
                stop_cv: Condvar::new(),
            }),
            next_task: AtomicU64::new(1),
            writer: Mutex::new(None),
            finished: AtomicBool::new(false),
            waker_clones: AtomicU64::new(0),
            waker_drops: AtomicU64::new(0),
            wakers_made: AtomicU64::new(0),
            wakes: AtomicU64::new(0),
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
        let w = Arc::clone(&inner.s);
        let handle = thread::Builder::new()
            .name("execspec-trace-writer".into())
            .spawn(move || -> io::Result<WriterState> {
                st.out.write_all(w.header.to_json().as_bytes())?;
                let mut stop = w.stop.lock().unwrap();
                while !*stop {
                    stop = w.stop_cv.wait_timeout(stop, opts.interval).unwrap().0;
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
        self.inner.next_task.fetch_add(1, Ordering::Relaxed)
    }

    /// Draws one tick of the clock outside any op. Its event cannot be
    /// recorded with it (use [`Recorder::op`]); use it only for ticks that
    /// order nothing, e.g. to measure.
    pub fn now(&self) -> u64 {
        self.inner.s.clock.load(Ordering::SeqCst)
    }

    /// Opens an op on this thread's buffer: its ticks and the events
    /// recorded with them are taken by the writer together. Hold it across
    /// a state word's load–tick–CAS loop or a lock-free queue operation;
    /// keep it short (the writer waits for it). Ops nest on one thread.
    pub fn op(&self) -> Op<'_> {
        let buf = self.local_buf();
        // SAFETY: the pointer stays valid while self (which holds an Arc of
        // every buffer in `bufs`) is borrowed; depth is owner-only.
        let b = unsafe { &*buf };
        unsafe {
            let d = &mut *b.depth.get();
            if *d == 0 {
                b.acquire();
            }
            *d += 1;
        }
        Op { rec: self, buf, _not_send: std::marker::PhantomData }
    }

    fn local_buf(&self) -> *const Buf {
        let id = self.inner.id;
        BUFS.with(|bufs| {
            let mut bufs = bufs.borrow_mut();
            if let Some(i) = bufs.iter().position(|(r, _)| *r == id) {
                if i != 0 {
                    bufs.swap(0, i); // the recorder used last comes first
                }
                return Arc::as_ptr(&bufs[0].1);
            }
            // Forget buffers of recorders that finished (only we hold them).
            bufs.retain(|(_, b)| Arc::strong_count(b) > 1);
            let b = Arc::new(Buf {
                locked: AtomicBool::new(false),
                depth: UnsafeCell::new(0),
                chunks: UnsafeCell::new(Chunks { cur: Vec::with_capacity(CHUNK), full: Vec::new(), free: Vec::new() }),
            });
            self.inner.s.bufs.lock().unwrap().push(Arc::clone(&b));
            let p = Arc::as_ptr(&b);
            bufs.insert(0, (id, b));
            p
        })
    }

    /// Records e now: its seq is drawn and the event buffered in one op.
    /// This is the whole contract for recorders whose executor draws
    /// inside its own critical sections (order "seq"): call it there.
    pub fn record(&self, e: Event) -> u64 {
        let mut op = self.op();
        let s = op.tick();
        op.emit(Event { seq: s, ..e });
        s
    }

    /// Records a push (spawn, wake scheduled, requeue with its queue) done
    /// by f with the interval contract: call is drawn before f, ret after,
    /// and the event's seq is its call. Returns f's value.
    pub fn push<R>(&self, e: Event, f: impl FnOnce() -> R) -> R {
        let mut op = self.op();
        let call = op.tick();
        let r = f();
        let ret = op.tick();
        op.emit(Event { seq: call, call: Some(call), ret: Some(ret), ..e });
        r
    }

    /// Records a take done by f with the interval contract: call before f,
    /// ret after, seq = ret. f returns the task with its source and victim,
    /// or None (nothing recorded). Returns f's value.
    pub fn take<T>(&self, worker: u32, f: impl FnOnce() -> Option<(T, u64, Source, Option<u32>)>) -> Option<T> {
        let mut op = self.op();
        let call = op.tick();
        let r = f();
        let ret = op.tick();
        r.map(|(t, task, src, victim)| {
            op.emit(Event { seq: ret, call: Some(call), ret: Some(ret), ..Event::take(task, worker, src, victim) });
            t
        })
    }

    /// Records the executor (worker None) or one worker stopping (v1.1).
    pub fn stop(&self, worker: Option<u32>) {
        self.record(Event::stop(worker));
    }

    /// Merges what is buffered, writes it, and flushes. Call it when no
    /// thread records any more (e.g. after the runtime was dropped): events
    /// whose tick is drawn after finish reads the clock are not written
    /// (counted as late). Idempotent: a second call returns an error.
    pub fn finish(&self) -> io::Result<Summary> {
        if self.inner.finished.swap(true, Ordering::SeqCst) {
            return Err(io::Error::other("execspec-trace: finish called twice"));
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
        if st.v1_1_in_v1_0 > 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "execspec-trace: {} events use trace format v1.1 fields but the header does not declare minor 1 (Header::v1_1)",
                    st.v1_1_in_v1_0
                ),
            ));
        }
        let late = st.pending.len() as u64;
        Ok(Summary {
            events: st.written,
            late,
            max_pending: st.max_pending,
            wakers_made: self.inner.wakers_made.load(Ordering::Relaxed),
            waker_clones: self.inner.waker_clones.load(Ordering::Relaxed),
            waker_drops: self.inner.waker_drops.load(Ordering::Relaxed),
            wakes: self.inner.wakes.load(Ordering::Relaxed),
        })
    }
}

impl Shared {
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
                    st.error = Some(format!(
                        "execspec-trace: event {} ({}) after event {}: a tick used outside the op that drew it",
                        e.seq,
                        e.kind_name(),
                        l
                    ));
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

/// An open op: the current thread holds its buffer's lock. Draw ticks with
/// [`Op::tick`] and record their events with [`Op::emit`] before the op ends
/// (dropped). Not Send: it belongs to the thread that opened it.
pub struct Op<'r> {
    rec: &'r Recorder,
    buf: *const Buf,
    _not_send: std::marker::PhantomData<*const ()>,
}

impl Op<'_> {
    /// Draws the next tick of the clock.
    #[inline]
    pub fn tick(&mut self) -> u64 {
        self.rec.inner.s.clock.fetch_add(1, Ordering::SeqCst)
    }

    /// Draws n consecutive ticks and returns the first (for two events that
    /// take effect in one step, e.g. a poll-end pending and its requeue).
    #[inline]
    pub fn ticks(&mut self, n: u64) -> u64 {
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

    /// Buffers e, whose seq (and call/ret) must be ticks drawn in this op.
    #[inline]
    pub fn emit(&mut self, e: Event) {
        // SAFETY: this thread holds the buffer's lock (see Recorder::op).
        unsafe { (*(*self.buf).chunks.get()).push(e) }
    }

    /// The recorder the op belongs to.
    pub fn recorder(&self) -> &Recorder {
        self.rec
    }
}

impl Drop for Op<'_> {
    fn drop(&mut self) {
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
