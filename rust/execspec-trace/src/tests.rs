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
    let out = Out::default();
    let rec = Recorder::with_options(
        Header::new("merge", 8, "worksteal").order(Order::Intervals),
        out.clone(),
        Options { interval: Duration::from_micros(50) },
    );
    const THREADS: u32 = 8;
    const PER: u64 = 5000;
    let hs: Vec<_> = (0..THREADS)
        .map(|w| {
            let rec = rec.clone();
            thread::spawn(move || {
                for i in 0..PER {
                    let task = u64::from(w) * PER + i + 1;
                    match i % 3 {
                        0 => {
                            rec.record(Event::poll_begin(task, Some(w)));
                        }
                        1 => rec.push(Event::spawn(task, Some(w), Some(Queue::Local(w))), || {
                            if i % 7 == 1 {
                                thread::yield_now();
                            }
                        }),
                        _ => {
                            let got = rec.take(w, || {
                                if i % 5 == 2 {
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
        match text_field(l, "kind").unwrap() {
            "take" => assert_eq!(Some(seq), field(l, "ret"), "{}", l),
            "spawn" => assert_eq!(Some(seq), field(l, "call"), "{}", l),
            _ => assert!(field(l, "call").is_none()),
        }
    }
}

/// A thread holds its op (a tick drawn, the event not yet buffered) while the
/// writer runs and other threads record later ticks: the writer waits, and
/// the held event is still written before them.
#[test]
fn watermark_waits_for_an_open_op() {
    let out = Out::default();
    let rec = Recorder::with_options(Header::new("hold", 2, "fifo"), out.clone(), Options { interval: Duration::from_micros(20) });
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
    let rec = Recorder::with_options(Header::new("misuse", 1, "fifo"), out, Options { interval: Duration::from_micros(10) });
    let early = {
        let mut op = rec.op();
        op.tick()
    };
    rec.record(Event::poll_begin(1, Some(0)));
    thread::sleep(Duration::from_millis(20)); // the writer writes the later event
    rec.op().emit(Event { seq: early, ..Event::poll_begin(2, Some(0)) });
    let err = rec.finish().unwrap_err();
    assert!(err.to_string().contains("a tick used outside the op that drew it"), "{}", err);
}

#[test]
fn v1_1_event_in_v1_0_header_is_an_error() {
    let rec = Recorder::new(Header::new("old", 1, "fifo"), io::sink());
    rec.record(Event::poll_begin(1, Some(0)).with_future(1));
    let err = rec.finish().unwrap_err();
    assert!(err.to_string().contains("does not declare minor 1"), "{}", err);
    let rec = Recorder::new(Header::new("new", 1, "fifo").v1_1(), io::sink());
    rec.record(Event::poll_begin(1, Some(0)).with_future(1));
    rec.stop(None);
    assert_eq!(rec.finish().unwrap().events, 2);
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
/// and every waker it made, cloned and dropped balances out.
#[test]
fn wrapper_records_polls_and_wakes() {
    let out = Out::default();
    let rec = Recorder::new(Header::black_box("test", 1), out.clone());
    set_worker(Some(0));
    let flag = Arc::new(Flag { woken: AtomicU64::new(0), thread: thread::current() });
    let waker = Waker::from(flag.clone());
    let mut fut = Box::pin(rec.trace(SelfWaking { polls: 0, fired: Arc::new(AtomicBool::new(false)) }, true));
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
        [
            "spawn", "poll-begin", "wake", "poll-end:pending", "poll-begin", "poll-end:pending", "wake@out", "poll-begin",
            "poll-end:ready"
        ],
        "{:#?}",
        lines
    );
    for l in &lines[1..] {
        if l.contains("poll-") {
            assert_eq!(field(l, "future"), Some(1), "{}", l);
            assert!(field(l, "time").is_some(), "{}", l);
        }
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
#[test]
fn transition_ticks_follow_the_state_word() {
    let out = Out::default();
    let rec = Recorder::with_options(Header::new("cas", 3, "fifo"), out.clone(), Options { interval: Duration::from_micros(100) });
    let word = Arc::new(AtomicU64::new(0));
    const PER: u64 = 20_000;
    let hs: Vec<_> = (0..3u32)
        .map(|w| {
            let (rec, word) = (rec.clone(), word.clone());
            thread::spawn(move || {
                for i in 0..PER {
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
    assert_eq!(tasks.len() as u64, 3 * PER);
    for (i, t) in tasks.iter().enumerate() {
        assert_eq!(*t, i as u64 + 1, "event {} records value {}", i, t);
    }
}
