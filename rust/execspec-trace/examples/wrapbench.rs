//! What the future wrapper costs per poll, without an executor: one thread
//! polls a future that wakes itself through a clone of its waker (as
//! tokio's yield_now does: clone, then wake after the poll) N times,
//! wrapped by a deferred recorder, by a streaming one, and not wrapped,
//! alternated; prints the median ns per poll of each (the thread's CPU
//! time, so that other processes of a loaded machine do not count).
//!
//!     cargo run --release --example wrapbench [N] [REPS] [--no-time | --begins]
//!
//! (`--begins`: time on spawns and poll-begins only, `Stamps::Begins`.)
use execspec_trace::{Header, Options, Recorder, Stamps};
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

#[path = "shared/cpu.rs"]
mod cpu;

/// Hands a clone of its waker to the caller at every poll.
struct Yield(Rc<Cell<Option<Waker>>>);

impl Future for Yield {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.0.set(Some(cx.waker().clone()));
        Poll::Pending
    }
}

struct Noop;

impl Wake for Noop {
    fn wake(self: Arc<Self>) {}
    fn wake_by_ref(self: &Arc<Self>) {}
}

fn run<F: Future>(mut f: Pin<&mut F>, n: u64, slot: &Cell<Option<Waker>>) -> f64 {
    let waker = Waker::from(Arc::new(Noop));
    let mut cx = Context::from_waker(&waker);
    let t = cpu::thread_cpu();
    for _ in 0..n {
        let _ = f.as_mut().poll(&mut cx);
        if let Some(w) = slot.take() {
            w.wake();
        }
    }
    (cpu::thread_cpu() - t) * 1e9 / n as f64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let reps: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(11);
    let has = |flag: &str| args.iter().any(|a| a == flag);
    let stamps = match (has("--no-time"), has("--begins")) {
        (true, _) => Stamps::Off,
        (false, true) => Stamps::Begins,
        _ => Stamps::All,
    };
    execspec_trace::set_worker(Some(0));
    let mut ns: [Vec<f64>; 3] = Default::default();
    for _ in 0..reps {
        let slot: Rc<Cell<Option<Waker>>> = Default::default();
        let mut plain = Box::pin(Yield(slot.clone()));
        ns[0].push(run(plain.as_mut(), n, &slot));
        for (i, deferred) in [(1, true), (2, false)] {
            let opts = if deferred { Options { deferred, ..Options::default() } } else { Options::streaming() };
            let rec = Recorder::with_options(Header::black_box("wrapbench", 1), std::io::sink(), opts);
            let mut f = Box::pin(rec.trace(Yield(slot.clone()), stamps));
            ns[i].push(run(f.as_mut(), n, &slot));
            drop(f);
            rec.finish().unwrap();
        }
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    let (p, d, s) = (med(&mut ns[0]), med(&mut ns[1]), med(&mut ns[2]));
    println!("{} polls x {} reps, time {:?}: plain {:.1} ns/poll, deferred {:.1} (+{:.1}), streaming {:.1} (+{:.1})", n, reps, stamps, p, d, d - p, s, s - p);
}
