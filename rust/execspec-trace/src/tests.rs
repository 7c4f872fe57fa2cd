use crate::*;
use std::future::Future;
use std::io::{self, Write};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::Duration;

/// An in-memory output shared with the test.
#[derive(Clone, Default)]
struct Out(Arc<Mutex<Vec<u8>>>);

impl Write for Out {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Out {
    fn lines(&self) -> Vec<String> {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap().lines().map(String::from).collect()
    }
}

fn field(line: &str, name: &str) -> Option<u64> {
    let key = format!("\"{}\":", name);
    let i = line.find(&key)? + key.len();
    let rest = &line[i..];
    let end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    rest[..end].parse().ok()
}

fn text_field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let key = format!("\"{}\":\"", name);
    let i = line.find(&key)? + key.len();
    let rest = &line[i..];
    Some(&rest[..rest.find('"')?])
}

/// Many threads record plain events, pushes and takes (with the interval
/// contract, yielding inside the queue operation) while the writer merges
/// every 50 µs: every event is written exactly once, in increasing seq order,
/// and each take's seq is its ret, each push's its call.
#[test]
fn merge_writes_every_event_in_seq_order() {
    for buffered in [false, true] {
        merge_in_seq_order(Options { interval: Duration::from_micros(50), buffered, streaming: !buffered, ..Options::default() });
    }
}

fn merge_in_seq_order(opts: Options) {
    let out = Out::default();
    let rec = Recorder::with_options(Header::new("merge", 8, "worksteal").order(Order::Intervals), out.clone(), opts);
    const THREADS: u32 = 8;
    const PER: u64 = 5000;
    record_mixed(&rec, THREADS, PER, true);
    let sum = rec.finish().unwrap();
    let lines = out.lines();
    assert_eq!(sum.events, u64::from(THREADS) * PER);
    assert_eq!(lines.len() as u64, 1 + u64::from(THREADS) * PER);
    assert!(lines[0].starts_with("{\"format\":\"execspec-trace\",\"version\":1,\"minor\":1,"));
    let mut last = 0;
    let mut tasks = std::collections::HashSet::new();
    for l in &lines[1..] {
        let seq = field(l, "seq").unwrap();
        assert!(seq > last, "seq {} after {}: {}", seq, last, l);
        last = seq;
        assert!(tasks.insert(field(l, "task").unwrap()), "task written twice: {}", l);
        assert_seq_is_its_tick(l, seq);
    }
}

/// A thread holds its op (a tick drawn, the event not yet buffered) while the
/// writer runs and other threads record later ticks: the writer waits, and
/// the held event is still written before them.
#[test]
fn watermark_waits_for_an_open_op() {
    let out = Out::default();
    let rec = Recorder::with_options(Header::new("hold", 2, "fifo"), out.clone(), Options { interval: Duration::from_micros(20), ..Options::streaming() });
    let (drawn_tx, drawn_rx) = mpsc::channel();
    let r2 = rec.clone();
    let h = thread::spawn(move || {
        let mut op = r2.op();
        let s = op.tick();
        drawn_tx.send(s).unwrap();
        thread::sleep(Duration::from_millis(30)); // the writer runs meanwhile
        op.emit(Event { seq: s, ..Event::poll_begin(1, Some(0)) });
    });
    let held = drawn_rx.recv().unwrap();
    let mut later = Vec::new();
    for t in 2..50 {
        later.push(rec.record(Event::poll_begin(t, Some(1))));
        thread::sleep(Duration::from_micros(100));
    }
    h.join().unwrap();
    rec.finish().unwrap();
    let seqs: Vec<u64> = out.lines()[1..].iter().map(|l| field(l, "seq").unwrap()).collect();
    assert_eq!(seqs[0], held);
    assert!(later.iter().all(|&s| s > held));
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{:?}", seqs);
}

/// A tick used outside the op that drew it is an error at finish (when the
/// writer saw the events out of order), not a silently misordered trace.
#[test]
fn tick_used_outside_its_op_is_reported() {
    let out = Out::default();
    let rec = Recorder::with_options(Header::new("misuse", 1, "fifo"), out, Options { interval: Duration::from_micros(10), ..Options::streaming() });
    let early = {
        let mut op = rec.op();
        op.tick()
    };
    rec.record(Event::poll_begin(1, Some(0)));
    // The writer (every 10 µs) writes the later event meanwhile; long
    // enough for a loaded machine.
    thread::sleep(Duration::from_millis(300));
    rec.op().emit(Event { seq: early, ..Event::poll_begin(2, Some(0)) });
    let err = rec.finish().unwrap_err();
    assert!(err.to_string().contains("a tick used outside the op that drew it"), "{}", err);
}

/// Under a header that asks for v1.0, a v1.1 event is counted when it is
/// recorded (a program can stop at the first), and finish fails; a header
/// is v1.1 unless it asks.
#[test]
fn v1_1_event_in_v1_0_header_is_an_error() {
    for opts in [Options::streaming(), deferred(), Options { buffered: true, ..Options::default() }, Options::default()] {
        let rec = Recorder::with_options(Header::new("old", 1, "fifo").v1_0(), io::sink(), opts.clone());
        rec.record(Event::poll_begin(1, Some(0)));
        assert_eq!(rec.undeclared_v1_1(), 0);
        rec.record(Event::poll_begin(1, Some(0)).with_future(1));
        assert_eq!(rec.undeclared_v1_1(), 1, "counted when recorded, before finish");
        rec.stop(None);
        assert_eq!(rec.undeclared_v1_1(), 2);
        let err = rec.finish().unwrap_err();
        assert!(err.to_string().contains("does not declare minor 1"), "{}", err);
        let rec = Recorder::with_options(Header::new("old", 1, "fifo").v1_0(), io::sink(), opts.clone());
        let _f = rec.trace(std::future::ready(()), false);
        assert_eq!(rec.undeclared_v1_1(), 1, "a wrapped future's polls carry future (v1.1)");
        let out = Out::default();
        let rec = Recorder::with_options(Header::new("new", 1, "fifo"), out.clone(), opts);
        rec.record(Event::poll_begin(1, Some(0)).with_future(1));
        rec.stop(None);
        assert_eq!(rec.undeclared_v1_1(), 0);
        assert_eq!(rec.finish().unwrap().events, 2);
        assert!(out.lines()[0].contains("\"minor\":1"), "{}", out.lines()[0]);
    }
}

/// A take whose search blocks (a channel's recv) does not hold up finish:
/// the search runs outside any op. The take that returns after finish is
/// not written.
#[test]
fn blocking_take_does_not_stall_finish() {
    for opts in [Options::streaming(), deferred(), Options { buffered: true, ..Options::default() }, Options::default()] {
        let out = Out::default();
        let rec = Recorder::with_options(Header::new("chan", 1, "fifo"), out.clone(), opts);
        let (tx, rx) = mpsc::channel::<u64>();
        rec.record(Event::spawn(1, None, Some(Queue::Global)));
        let r2 = rec.clone();
        let taker = thread::spawn(move || r2.take(0, || rx.recv().ok().map(|t| (t, t, Source::Global, None))));
        thread::sleep(Duration::from_millis(20)); // the taker is in recv
        let (done_tx, done_rx) = mpsc::channel();
        let r3 = rec.clone();
        thread::spawn(move || done_tx.send(r3.finish().map(|s| s.events)).unwrap());
        let got = done_rx.recv_timeout(Duration::from_secs(10)).expect("finish returned while a take blocked in its search");
        assert_eq!(got.unwrap(), 1);
        tx.send(1).unwrap();
        assert_eq!(taker.join().unwrap(), Some(1));
        assert_eq!(out.lines().len(), 2, "{:?}", out.lines());
    }
}

/// A push that fails (a send on a closed channel) is left out of the trace;
/// one that succeeds is recorded with its interval.
#[test]
fn failed_push_is_not_recorded() {
    let out = Out::default();
    let rec = Recorder::new(Header::new("chan", 1, "fifo").order(Order::Intervals), out.clone());
    let (tx, rx) = mpsc::channel::<u64>();
    assert!(rec.try_push(Event::spawn(1, None, Some(Queue::Global)), || tx.send(1)).is_ok());
    drop(rx);
    assert!(rec.try_push(Event::spawn(2, None, Some(Queue::Global)), || tx.send(2)).is_err());
    assert_eq!(rec.push(Event::spawn(3, None, Some(Queue::Global)), || 7), 7);
    rec.finish().unwrap();
    let lines = out.lines();
    assert_eq!(lines.len(), 3, "{:?}", lines);
    assert_eq!(field(&lines[1], "task"), Some(1));
    assert_eq!(field(&lines[2], "task"), Some(3));
    for l in &lines[1..] {
        assert!(field(l, "call").unwrap() < field(l, "ret").unwrap(), "{}", l);
    }
}

/// now() reads the clock: it draws no tick, and no tick drawn before it is
/// at or above it.
#[test]
fn now_reads_without_drawing() {
    for opts in [Options::streaming(), deferred(), Options { buffered: true, ..Options::default() }, Options::default()] {
        let rec = Recorder::with_options(Header::new("now", 1, "fifo"), io::sink(), opts);
        let s1 = rec.record(Event::poll_begin(1, 0));
        let a = rec.now();
        let b = rec.now();
        assert_eq!(a, b, "now drew a tick");
        assert!(s1 <= a);
        let s2 = rec.record(Event::poll_end(1, 0, PollResult::Ready));
        assert!(s2 > s1 && s2 >= a, "{} {} {}", s1, s2, a);
        rec.finish().unwrap();
    }
}

/// time 0 means "not recorded": now_ns never returns it.
#[test]
fn now_ns_is_never_zero() {
    assert!(now_ns() >= 1);
    assert!(crate::recorder::ns_since_for_test(std::time::Instant::now()) >= 1);
}

/// A stop recorded while the thread unwinds from a panic (a guard's drop)
/// says `unwound`; an orderly one says nothing or its reason.
#[test]
fn stop_while_unwinding_is_unwound() {
    let out = Out::default();
    let rec = Recorder::new(Header::new("stops", 2, "fifo"), out.clone());
    struct Guard(Recorder, u32);
    impl Drop for Guard {
        fn drop(&mut self) {
            self.0.stop(Some(self.1));
        }
    }
    let r2 = rec.clone();
    let h = thread::spawn(move || {
        let _g = Guard(r2, 1);
        panic!("a worker's task panicked");
    });
    assert!(h.join().is_err());
    rec.stop_with(Some(0), StopReason::Panic);
    rec.stop_with(None, StopReason::Shutdown);
    rec.finish().unwrap();
    let lines = out.lines();
    assert_eq!(lines.len(), 4, "{:?}", lines);
    assert_eq!(text_field(&lines[1], "reason"), Some("unwound"), "{}", lines[1]);
    assert_eq!(text_field(&lines[2], "reason"), Some("panic"));
    assert_eq!(text_field(&lines[3], "reason"), Some("shutdown"));
    let rec = Recorder::new(Header::new("plain", 1, "fifo"), out.clone());
    rec.stop(None);
    rec.finish().unwrap();
    assert!(out.lines().last().unwrap().ends_with("\"kind\":\"stop\"}"), "{:?}", out.lines().last());
}

#[test]
fn finish_twice_is_an_error() {
    let rec = Recorder::new(Header::new("x", 1, "fifo"), io::sink());
    rec.finish().unwrap();
    assert!(rec.finish().is_err());
}

/// A future that wakes itself during its first poll, hands a clone of its
/// waker to another thread that wakes it during the second poll's
/// aftermath, and is ready at the third.
struct SelfWaking {
    polls: u32,
    fired: Arc<AtomicBool>,
}

impl Future for SelfWaking {
    type Output = u32;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u32> {
        self.polls += 1;
        match self.polls {
            1 => {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            2 => {
                let w = cx.waker().clone();
                let fired = self.fired.clone();
                thread::spawn(move || {
                    thread::sleep(Duration::from_millis(5));
                    fired.store(true, Ordering::SeqCst);
                    w.wake();
                });
                Poll::Pending
            }
            _ => Poll::Ready(self.polls),
        }
    }
}

struct Flag {
    woken: AtomicU64,
    thread: thread::Thread,
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref()
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.fetch_add(1, Ordering::SeqCst);
        self.thread.unpark();
    }
}

/// The wrapper records spawn, each poll's begin and end (with the worker
/// set by set_worker and future 1), each wake before the poll it causes,
/// and every waker it made, cloned and dropped balances out; time on the
/// events its stamps name.
#[test]
fn wrapper_records_polls_and_wakes() {
    for stamps in [Stamps::All, Stamps::Begins, Stamps::Off] {
        wrapper_records_with(stamps);
    }
}

fn wrapper_records_with(stamps: Stamps) {
    let out = Out::default();
    let rec = Recorder::new(Header::black_box("test", 1), out.clone());
    set_worker(Some(0));
    let flag = Arc::new(Flag { woken: AtomicU64::new(0), thread: thread::current() });
    let waker = Waker::from(flag.clone());
    let mut fut = Box::pin(rec.trace(SelfWaking { polls: 0, fired: Arc::new(AtomicBool::new(false)) }, stamps));
    let mut cx = Context::from_waker(&waker);
    let v = loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            break v;
        }
        while flag.woken.swap(0, Ordering::SeqCst) == 0 {
            thread::park();
        }
    };
    assert_eq!(v, 3);
    drop(fut);
    set_worker(None);
    let sum = rec.finish().unwrap();
    let lines = out.lines();
    assert!(lines[0].contains("\"unobserved\":[\"take\",\"queue\",\"outcome\"]"), "{}", lines[0]);
    let kinds: Vec<String> = lines[1..]
        .iter()
        .map(|l| {
            let mut k = text_field(l, "kind").unwrap().to_string();
            if let Some(r) = text_field(l, "result") {
                k = format!("{}:{}", k, r);
            }
            if field(l, "worker").is_none() {
                k += "@out";
            }
            k
        })
        .collect();
    assert_eq!(
        kinds,
        ["spawn", "poll-begin", "wake", "poll-end:pending", "poll-begin", "poll-end:pending", "wake@out", "poll-begin", "poll-end:ready"],
        "{:#?}",
        lines
    );
    for l in &lines[1..] {
        if l.contains("poll-") {
            assert_eq!(field(l, "future"), Some(1), "{}", l);
        }
        let timed = match stamps {
            Stamps::All => !l.contains("\"wake\""),
            Stamps::Begins => l.contains("spawn") || l.contains("poll-begin"),
            Stamps::Off => false,
        };
        assert_eq!(field(l, "time").is_some(), timed, "{:?}: {}", stamps, l);
    }
    assert_eq!(sum.wakes, 2);
    assert_eq!(sum.wakers_made, 1);
    assert!(sum.waker_clones >= 1);
    assert_eq!(sum.wakers_made + sum.waker_clones, sum.waker_drops, "{:?}", sum);
}

/// A panic in the inner poll is recorded as poll-end panic and propagates.
#[test]
fn wrapper_records_a_panic() {
    let out = Out::default();
    let rec = Recorder::new(Header::black_box("test", 1), out.clone());
    let mut fut = Box::pin(rec.trace(async { panic!("boom") }, false));
    let waker = Waker::from(Arc::new(Flag { woken: AtomicU64::new(0), thread: thread::current() }));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = fut.as_mut().poll(&mut Context::from_waker(&waker));
    }));
    assert!(r.is_err());
    rec.finish().unwrap();
    assert!(out.lines().last().unwrap().contains("\"result\":\"panic\""));
}

/// Threads race to advance one state word with Op::transition, each
/// recording the value it wrote as the event's task: the written trace
/// lists the values in the word's own order, 1, 2, 3, …
fn transition_order(opts: Options, per: u64) {
    let out = Out::default();
    let rec = Recorder::with_options(Header::new("cas", 3, "fifo"), out.clone(), opts);
    let word = Arc::new(AtomicU64::new(0));
    let hs: Vec<_> = (0..3u32)
        .map(|w| {
            let (rec, word) = (rec.clone(), word.clone());
            thread::spawn(move || {
                for i in 0..per {
                    let mut op = rec.op();
                    let (seq, old, ()) = op.transition(&word, |v| (v + 1, ()));
                    op.emit(Event { seq, ..Event::poll_begin(old + 1, Some(w)) });
                    drop(op);
                    if i % 64 == 0 {
                        thread::yield_now();
                    }
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    rec.finish().unwrap();
    let tasks: Vec<u64> = out.lines()[1..].iter().map(|l| field(l, "task").unwrap()).collect();
    assert_eq!(tasks.len() as u64, 3 * per);
    for (i, t) in tasks.iter().enumerate() {
        assert_eq!(*t, i as u64 + 1, "event {} records value {}", i, t);
    }
}

#[test]
fn transition_ticks_follow_the_state_word() {
    transition_order(Options { interval: Duration::from_micros(100), ..Options::streaming() }, 20_000);
}

fn deferred() -> Options {
    Options { deferred: true, ..Options::default() }
}

/// A future that wakes itself during its first poll (wake_by_ref), hands a
/// clone of its waker to `later` during its second (woken by the caller
/// between polls), and is ready at the third.
struct Later {
    polls: u32,
    later: Arc<Mutex<Vec<Waker>>>,
}

impl Future for Later {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.polls += 1;
        match self.polls {
            1 => {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            2 => {
                self.later.lock().unwrap().push(cx.waker().clone());
                Poll::Pending
            }
            _ => Poll::Ready(()),
        }
    }
}

/// The same events recorded on one thread by a streaming recorder and a
/// deferred one: explicit events (a push and a take with their intervals,
/// plain records), two wrapped tasks with self-wakes and wakes between
/// polls, stops. The two outputs are equal byte for byte.
fn record_the_same_events(opts: Options, explicit: bool) -> (Vec<u8>, Summary) {
    let out = Out::default();
    let header = if explicit { Header::black_box("same", 2).order(Order::Intervals) } else { Header::black_box("same", 2) };
    let rec = Recorder::with_options(header, out.clone(), opts);
    set_worker(Some(1));
    if explicit {
        rec.push(Event::spawn(100, Some(1), Some(Queue::Local(1))), || ());
        rec.take(1, || Some(((), 100, Source::Local, None)));
        rec.record(Event::poll_begin(100, Some(1)));
        rec.record(Event::poll_end(100, Some(1), PollResult::Ready));
    }
    let later = Arc::new(Mutex::new(Vec::new()));
    let flag = Arc::new(Flag { woken: AtomicU64::new(0), thread: thread::current() });
    let waker = Waker::from(flag.clone());
    let mut a = Box::pin(rec.trace(Later { polls: 0, later: later.clone() }, false));
    let mut b = Box::pin(rec.trace(Later { polls: 0, later: later.clone() }, false));
    let mut cx = Context::from_waker(&waker);
    let (mut a_done, mut b_done) = (false, false);
    while !(a_done && b_done) {
        if !a_done {
            a_done = a.as_mut().poll(&mut cx).is_ready();
        }
        for w in later.lock().unwrap().drain(..) {
            w.wake();
        }
        if !b_done {
            b_done = b.as_mut().poll(&mut cx).is_ready();
        }
    }
    drop((a, b));
    rec.stop(Some(1));
    set_worker(None);
    rec.stop(None);
    let sum = rec.finish().unwrap();
    let bytes = out.0.lock().unwrap().clone();
    (bytes, sum)
}

#[test]
fn deferred_output_equals_streaming_output() {
    for explicit in [false, true] {
        let (old, old_sum) = record_the_same_events(Options::streaming(), explicit);
        let (new, new_sum) = record_the_same_events(deferred(), explicit);
        let (buffered, _) = record_the_same_events(Options { buffered: true, ..Options::default() }, explicit);
        let (old, new, buffered) = (String::from_utf8(old).unwrap(), String::from_utf8(new).unwrap(), String::from_utf8(buffered).unwrap());
        assert_eq!(old, new, "explicit {}", explicit);
        assert_eq!(old, buffered, "buffered, explicit {}", explicit);
        // How many events waited for the streaming writer at once depends
        // on when its thread ran: that one figure is the timing's.
        assert_eq!(Summary { max_pending: 0, ..old_sum }, Summary { max_pending: 0, ..new_sum });
        assert_eq!(old.lines().count(), 1 + if explicit { 4 } else { 0 } + 2 * (1 + 6 + 2) + 2, "{}", old);
        assert!(old.contains("\"kind\":\"wake\",\"task\":1,\"worker\":1}"), "{}", old);
    }
}

/// A deferred recorder converts its time stamps to nanoseconds that are
/// non-decreasing per thread, above 0, and close to now_ns; the spawn
/// carries one too.
#[test]
fn deferred_time_is_nanoseconds() {
    let out = Out::default();
    let rec = Recorder::with_options(Header::black_box("time", 1), out.clone(), deferred());
    set_worker(Some(0));
    let before = now_ns();
    let flag = Arc::new(Flag { woken: AtomicU64::new(0), thread: thread::current() });
    let waker = Waker::from(flag);
    let mut f = Box::pin(rec.trace(Later { polls: 0, later: Arc::new(Mutex::new(Vec::new())) }, true));
    let mut cx = Context::from_waker(&waker);
    let _ = f.as_mut().poll(&mut cx);
    thread::sleep(Duration::from_millis(30));
    let _ = f.as_mut().poll(&mut cx);
    let _ = f.as_mut().poll(&mut cx);
    let after = now_ns();
    set_worker(None);
    rec.finish().unwrap();
    let times: Vec<u64> = out.lines()[1..].iter().filter_map(|l| field(l, "time")).collect();
    assert_eq!(times.len(), 1 + 2 * 3, "{:?}", out.lines());
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{:?}", times);
    // 1 ms of slack each side for the calibration.
    assert!(times[0] + 1_000_000 >= before && *times.last().unwrap() <= after + 1_000_000, "{:?} not in {}..{}", times, before, after);
    let slept = times[3] - times[2]; // end of poll 1 to begin of poll 2
    assert!(slept >= 25_000_000 && slept < 2_000_000_000, "{} ns across a 30 ms sleep", slept);
}

/// A deferred recorder on threads that record plain events, pushes and
/// takes: every event written once, seq 1, 2, … in each thread's program
/// order, a take's seq its ret and a push's its call.
#[test]
fn deferred_writes_every_event_in_thread_order() {
    let out = Out::default();
    let rec = Recorder::with_options(Header::new("merge", 4, "worksteal").order(Order::Intervals), out.clone(), deferred());
    const THREADS: u32 = 4;
    const PER: u64 = 3000;
    record_mixed(&rec, THREADS, PER, false);
    let sum = rec.finish().unwrap();
    assert_eq!(sum.events, u64::from(THREADS) * PER);
    let lines = out.lines();
    let mut last_task = std::collections::HashMap::new();
    let mut last_seq = 0;
    for l in &lines[1..] {
        let seq = field(l, "seq").unwrap();
        assert!(seq > last_seq, "{}", l);
        last_seq = seq;
        let task = field(l, "task").unwrap();
        let w = field(l, "worker").unwrap();
        let prev = last_task.insert(w, task).unwrap_or(w * PER);
        assert_eq!(task, prev + 1, "worker {} out of program order: {}", w, l);
        assert_seq_is_its_tick(l, seq);
    }
}

/// The barrier ticks of a deferred recorder follow a state word advanced
/// by CAS from three threads, as the shared counter's do.
#[test]
fn deferred_transition_ticks_follow_the_state_word() {
    transition_order(deferred(), 5000);
}

/// A small executor: `workers` threads take task ids from one Mutex queue
/// and poll wrapped futures that yield (wake_by_ref inside the poll), hand
/// their waker to a thread outside, or spawn. Returns the trace lines.
fn run_pool(opts: Options, workers: u32, tasks: u64) -> Vec<String> {
    type Task = Pin<Box<dyn Future<Output = ()> + Send>>;
    struct Pool {
        queue: Mutex<std::collections::VecDeque<u64>>,
        futs: Mutex<std::collections::HashMap<u64, Option<Task>>>,
        queued: Mutex<std::collections::HashSet<u64>>,
        pending: AtomicU64,
    }
    struct TaskWaker(Arc<Pool>, u64);
    impl Wake for TaskWaker {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref()
        }
        fn wake_by_ref(self: &Arc<Self>) {
            if self.0.queued.lock().unwrap().insert(self.1) {
                self.0.queue.lock().unwrap().push_back(self.1);
            }
        }
    }
    let out = Out::default();
    let rec = Recorder::with_options(Header::black_box("pool", workers), out.clone(), opts);
    let pool = Arc::new(Pool {
        queue: Mutex::new(Default::default()),
        futs: Mutex::new(Default::default()),
        queued: Mutex::new(Default::default()),
        pending: AtomicU64::new(tasks),
    });
    let (out_tx, out_rx) = mpsc::channel::<Waker>();
    let outside = thread::spawn(move || {
        for w in out_rx {
            thread::sleep(Duration::from_micros(50));
            w.wake();
        }
    });
    for t in 0..tasks {
        let out_tx = Mutex::new(out_tx.clone());
        let mut n = 0u32;
        let f = rec.trace(
            std::future::poll_fn(move |cx| {
                n += 1;
                match (n, t % 3) {
                    (1..=3, 0) => cx.waker().wake_by_ref(),
                    (1..=2, 1) => out_tx.lock().unwrap().send(cx.waker().clone()).unwrap(),
                    (1, _) => cx.waker().wake_by_ref(),
                    _ => return Poll::Ready(()),
                }
                Poll::Pending
            }),
            true,
        );
        let id = f.task();
        pool.futs.lock().unwrap().insert(id, Some(Box::pin(f)));
        pool.queued.lock().unwrap().insert(id);
        pool.queue.lock().unwrap().push_back(id);
    }
    drop(out_tx);
    let hs: Vec<_> = (0..workers)
        .map(|w| {
            let pool = pool.clone();
            let rec = rec.clone();
            thread::spawn(move || {
                set_worker(Some(w));
                while pool.pending.load(Ordering::SeqCst) > 0 {
                    let Some(id) = pool.queue.lock().unwrap().pop_front() else {
                        thread::yield_now();
                        continue;
                    };
                    pool.queued.lock().unwrap().remove(&id);
                    let fut = pool.futs.lock().unwrap().get_mut(&id).unwrap().take();
                    let Some(mut fut) = fut else {
                        // Woken during its poll on another worker, which
                        // has not put the future back yet: queue it again.
                        if pool.queued.lock().unwrap().insert(id) {
                            pool.queue.lock().unwrap().push_back(id);
                        }
                        continue;
                    };
                    let waker = Waker::from(Arc::new(TaskWaker(pool.clone(), id)));
                    if fut.as_mut().poll(&mut Context::from_waker(&waker)).is_ready() {
                        pool.pending.fetch_sub(1, Ordering::SeqCst);
                    } else {
                        pool.futs.lock().unwrap().insert(id, Some(fut));
                    }
                }
                rec.stop(Some(w));
                set_worker(None);
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    outside.join().unwrap();
    rec.stop(None);
    rec.finish().unwrap();
    out.lines()
}

/// What a black-box checker decides, checked on a trace: per task, spawn
/// first, polls that begin and end alternately, no poll after ready, each
/// poll after a Pending preceded by a wake after the previous poll began;
/// per worker one poll at a time; time non-decreasing per worker; the
/// executor's stop last.
fn check_black_box(lines: &[String]) {
    #[derive(Default)]
    struct T {
        spawned: bool,
        running: bool,
        done: bool,
        woken_since_begin: bool,
        needs_wake: bool,
    }
    let mut tasks: std::collections::HashMap<u64, T> = Default::default();
    let mut polling: std::collections::HashMap<u64, u64> = Default::default();
    let mut times: std::collections::HashMap<u64, u64> = Default::default();
    for (i, l) in lines[1..].iter().enumerate() {
        assert_eq!(field(l, "seq"), Some(i as u64 + 1), "{}", l);
        let kind = text_field(l, "kind").unwrap();
        if kind == "stop" {
            if field(l, "worker").is_none() {
                assert_eq!(i + 2, lines.len(), "executor stop not last: {}", l);
            }
            continue;
        }
        let id = field(l, "task").unwrap();
        let t = tasks.entry(id).or_default();
        if let (Some(w), Some(time)) = (field(l, "worker"), field(l, "time")) {
            let prev = times.insert(w, time).unwrap_or(0);
            assert!(time >= prev, "time goes back on worker {}: {}", w, l);
        }
        match kind {
            "spawn" => {
                assert!(!t.spawned, "{}", l);
                t.spawned = true;
            }
            "poll-begin" => {
                assert!(t.spawned && !t.running && !t.done, "{}", l);
                assert!(!t.needs_wake, "poll of a task not woken since its last Pending: {}", l);
                let w = field(l, "worker").unwrap();
                assert!(polling.insert(w, id).is_none(), "worker {} polls two tasks: {}", w, l);
                t.running = true;
                t.woken_since_begin = false;
            }
            "poll-end" => {
                assert!(t.running, "{}", l);
                t.running = false;
                polling.remove(&field(l, "worker").unwrap());
                match text_field(l, "result").unwrap() {
                    "pending" => t.needs_wake = !t.woken_since_begin,
                    _ => t.done = true,
                }
            }
            "wake" => {
                t.woken_since_begin = true;
                t.needs_wake = false;
            }
            k => panic!("unexpected kind {}: {}", k, l),
        }
    }
    assert!(tasks.values().all(|t| t.done && !t.needs_wake));
}

/// Both modes, on a small multi-threaded executor with wakes from inside
/// polls and from a thread outside, give traces that satisfy what a
/// black-box checker decides.
#[test]
fn deferred_black_box_trace_is_consistent() {
    for _ in 0..5 {
        check_black_box(&run_pool(deferred(), 3, 300));
    }
    check_black_box(&run_pool(Options::streaming(), 3, 300));
}

/// A take's seq is its return tick, a spawn's its call tick; other events
/// carry no call tick.
fn assert_seq_is_its_tick(l: &str, seq: u64) {
    match text_field(l, "kind").unwrap() {
        "take" => assert_eq!(Some(seq), field(l, "ret"), "{}", l),
        "spawn" => assert_eq!(Some(seq), field(l, "call"), "{}", l),
        _ => assert!(field(l, "call").is_none()),
    }
}

/// Records from `threads` threads, `per` events each, in turn a plain event
/// (poll-begin), a push (spawn) and a take, of tasks w·per+1, w·per+2, …;
/// with `yields`, some pushes and takes yield inside their operation.
fn record_mixed(rec: &Recorder, threads: u32, per: u64, yields: bool) {
    let hs: Vec<_> = (0..threads)
        .map(|w| {
            let rec = rec.clone();
            thread::spawn(move || {
                for i in 0..per {
                    let task = u64::from(w) * per + i + 1;
                    match i % 3 {
                        0 => {
                            rec.record(Event::poll_begin(task, Some(w)));
                        }
                        1 => rec.push(Event::spawn(task, Some(w), Some(Queue::Local(w))), || {
                            if yields && i % 7 == 1 {
                                thread::yield_now();
                            }
                        }),
                        _ => {
                            let got = rec.take(w, || {
                                if yields && i % 5 == 2 {
                                    thread::yield_now();
                                }
                                Some(((), task, Source::Global, None))
                            });
                            assert!(got.is_some());
                        }
                    }
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
}

/// Our wakers' reference count: a task's waker cloned, woken (by value and
/// by reference) and dropped from several threads at once, during the
/// task's polls, after its end and after the recorder's finish, in both
/// modes. Every waker data made is freed once (the count in the data's
/// line: a double free or a leak shows here, a use after free under Miri
/// or a sanitizer), and every wake made while recording is in the trace.
#[test]
fn wakers_shared_across_threads_are_freed_once() {
    // LIVE counts the wakers of every test: the others drop theirs before
    // they return, so it is 0 again once those running beside this one
    // are done; wait for that at the end.
    for opts in [Options::streaming(), deferred(), Options { buffered: true, ..Options::default() }, Options::default()] {
        let out = Out::default();
        let rec = Recorder::with_options(Header::black_box("test", 1), out.clone(), opts);
        let later = Arc::new(Mutex::new(Vec::new()));
        let flag = Arc::new(Flag { woken: AtomicU64::new(0), thread: thread::current() });
        let outer = Waker::from(flag.clone());
        let mut fut = Box::pin(rec.trace(Later { polls: 0, later: later.clone() }, false));
        let mut cx = Context::from_waker(&outer);
        let mut kept = Vec::new();
        loop {
            if fut.as_mut().poll(&mut cx).is_ready() {
                break;
            }
            // The waker the task stored: cloned into threads that wake and drop.
            if let Some(w) = later.lock().unwrap().pop() {
                let hs: Vec<_> = (0..4)
                    .map(|i| {
                        let w = w.clone();
                        thread::spawn(move || {
                            for k in 0..2_000 {
                                let c = w.clone();
                                if (i + k) % 2 == 0 {
                                    c.wake();
                                } else {
                                    c.wake_by_ref();
                                }
                            }
                            w
                        })
                    })
                    .collect();
                kept.extend(hs.into_iter().map(|h| h.join().unwrap()));
                kept.push(w);
            }
        }
        drop(fut);
        let sum = rec.finish().unwrap();
        assert!(sum.wakes >= 8_000, "{:?}", sum);
        // After the end and the finish: woken and dropped on other threads.
        let hs: Vec<_> = kept
            .into_iter()
            .map(|w| {
                thread::spawn(move || {
                    w.wake_by_ref();
                    w.clone().wake();
                    drop(w)
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert!(flag.woken.load(Ordering::SeqCst) >= 1);
    }
    let t = std::time::Instant::now();
    while crate::wrap::LIVE.load(Ordering::SeqCst) != 0 {
        assert!(t.elapsed() < Duration::from_secs(30), "waker data left alive: {}", crate::wrap::LIVE.load(Ordering::SeqCst));
        thread::sleep(Duration::from_millis(10));
    }
}

/// A future that wakes itself (wake_by_ref) and is pending `left` times,
/// then ready.
struct Spin {
    left: u32,
}

impl Future for Spin {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.left == 0 {
            return Poll::Ready(());
        }
        self.left -= 1;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// One thread's records fill its small chunk and more than one big one
/// (and a second recorder reuses the pooled chunks, a third has them made
/// beforehand by a reserve): every event is written once, in order, with
/// seq 1, 2, ….
#[test]
fn deferred_records_across_chunks() {
    const N: u32 = 30_000; // 2·N + 2 records: past 2,048 + 43,690
                           // Without a reserve, again (the pooled chunks), and with one.
    for reserve in [0, 0, 200_000] {
        let out = Out::default();
        let rec = Recorder::with_options(Header::black_box("test", 1), out.clone(), Options { reserve, ..deferred() });
        set_worker(Some(0));
        let waker = Waker::from(Arc::new(Flag { woken: AtomicU64::new(0), thread: thread::current() }));
        let mut fut = Box::pin(rec.trace(Spin { left: N }, false));
        while fut.as_mut().poll(&mut Context::from_waker(&waker)).is_pending() {}
        drop(fut);
        set_worker(None);
        let sum = rec.finish().unwrap();
        let lines = out.lines();
        assert_eq!(sum.events, 1 + 3 * u64::from(N) + 2);
        assert_eq!(lines.len() as u64, 1 + sum.events);
        for (i, l) in lines[1..].iter().enumerate() {
            assert_eq!(field(l, "seq"), Some(i as u64 + 1), "{}", l);
            let want = match i {
                0 => "spawn",
                _ if i == 2 + 3 * N as usize => "poll-end", // the last poll: ready, no wake
                _ => ["poll-begin", "wake", "poll-end"][(i - 1) % 3],
            };
            assert_eq!(text_field(l, "kind"), Some(want), "line {}: {}", i + 1, l);
        }
    }
}

/// create_file refuses a symbolic link at the path and leaves its target
/// as it was; a plain path is created, then truncated.
#[test]
fn create_file_refuses_a_symlink() {
    let dir = std::env::temp_dir().join(format!("execspec-trace-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let target = dir.join("target.txt");
    std::fs::write(&target, "keep").unwrap();
    let link = dir.join("trace.jsonl");
    let _ = std::fs::remove_file(&link);
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = crate::create_file(&link).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{}", err);
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
        std::fs::remove_file(&link).unwrap();
    }
    use std::io::Write;
    crate::create_file(&link).unwrap().write_all(b"a longer first line").unwrap();
    crate::create_file(&link).unwrap().write_all(b"b").unwrap();
    assert_eq!(std::fs::read_to_string(&link).unwrap(), "b");
    let err = crate::create_file(dir.join("no/such/dir/t.jsonl")).unwrap_err();
    assert!(err.to_string().contains("no/such/dir"), "{}", err);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The default options record binary: deferred under order seq, buffered
/// (the shared clock) under order intervals; streaming only when asked.
#[test]
fn default_options_record_binary_by_order() {
    let mode = |h: Header, o: Options| {
        let rec = Recorder::with_options(h, io::sink(), o);
        let m = (rec.inner.binary, rec.inner.deferred);
        rec.finish().unwrap();
        m
    };
    assert_eq!(mode(Header::new("seq", 1, "fifo"), Options::default()), (true, true));
    assert_eq!(mode(Header::new("iv", 1, "fifo").order(Order::Intervals), Options::default()), (true, false));
    assert_eq!(mode(Header::new("seq", 1, "fifo"), Options::streaming()), (false, false));
    assert_eq!(mode(Header::new("iv", 1, "fifo").order(Order::Intervals), Options { deferred: true, ..Options::default() }), (true, true));
    assert_eq!(mode(Header::new("seq", 1, "fifo"), Options { buffered: true, ..Options::default() }), (true, false));
    let rec = Recorder::new(Header::new("new", 1, "fifo"), io::sink());
    assert!(rec.inner.binary && rec.inner.deferred);
    rec.finish().unwrap();
}
