//! What recording costs on the hot path of a busy executor loop: each of T
//! threads runs N polls of about 16 ns of work, and records four events per
//! poll with explicit calls (a take, the poll's begin and end, a requeue),
//! each with a tick of the shared clock; side by side with the same loop
//! recording nothing, alternated, medians of R rounds.
//!
//!     SPINS=8 cargo run --release --example busybench [T] [N] [R] [streaming|buffered|deferred|all]
//!
//! Each mode runs as a program's first recording would (its records'
//! memory touched for the first time during the run) and, for buffered
//! and deferred, with `Options::reserve` (touched when the recorder is
//! made, before the run).
//!
//! Per event: (recorded run − plain run) / events, and the recorded run
//! alone / events, both during the run; `finish` (ordering and formatting)
//! after it, apart.
use execspec_trace::{Event, Header, Options, PollResult, Queue, Recorder, Source};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// About 16 ns of work (calibrated at start): a poll that does little.
#[inline(never)]
fn poll(spins: u64, x: u64) -> u64 {
    let mut h = x;
    for _ in 0..spins {
        h = black_box(h.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(7));
    }
    h
}

fn run(threads: u32, n: u64, spins: u64, rec: Option<&Recorder>) -> Duration {
    let start = Instant::now();
    std::thread::scope(|s| {
        for w in 0..threads {
            s.spawn(move || {
                let mut h = u64::from(w);
                for i in 0..n {
                    let task = i % 64 + 1 + u64::from(w) * 64;
                    match rec {
                        Some(r) => {
                            r.record(Event::take(task, w, Source::Local, None));
                            r.record(Event::poll_begin(task, w));
                            h = poll(spins, h);
                            r.record(Event::poll_end(task, w, PollResult::Pending));
                            r.record(Event::requeue(task, w, Queue::Local(w)));
                        }
                        None => h = poll(spins, h),
                    }
                }
                black_box(h);
            });
        }
    });
    start.elapsed()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let threads: u32 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1);
    let n: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let rounds: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(7);
    let which = args.get(4).map(String::as_str).unwrap_or("all");
    // The poll's work: SPINS multiply-rotate steps (default 8: about 16 ns
    // on the machine of bench/results/rust.md).
    let spins: u64 = std::env::var("SPINS").ok().and_then(|v| v.parse().ok()).unwrap_or(8);
    let events = 4 * n * u64::from(threads);
    let reserve = events as usize;
    let all = [
        ("streaming", Options::default()),
        ("buffered", Options { buffered: true, ..Options::default() }),
        ("buffered+reserve", Options { buffered: true, reserve, ..Options::default() }),
        ("deferred", Options { deferred: true, ..Options::default() }),
        ("deferred+reserve", Options { deferred: true, reserve, ..Options::default() }),
    ];
    let modes: Vec<_> = all.into_iter().filter(|(name, _)| which == "all" || name.split('+').next() == Some(which) || which == *name).collect();
    for (name, opts) in modes {
        let (mut plain, mut rec_t, mut fin) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            plain.push(run(threads, n, spins, None).as_secs_f64());
            let rec = Recorder::with_options(Header::new("busybench", threads, "worksteal"), std::io::sink(), opts.clone());
            rec_t.push(run(threads, n, spins, Some(&rec)).as_secs_f64());
            let t = Instant::now();
            let sum = rec.finish()?;
            assert_eq!(sum.events, events);
            fin.push(t.elapsed().as_secs_f64());
        }
        let (p, r, f) = (median(&mut plain), median(&mut rec_t), median(&mut fin));
        println!(
            "{}: {} threads x {} polls ({} spins, {:.1} ns per plain poll), {} events: plain {:.1} ms, recorded {:.1} ms (x{:.1}): {:.1} ns per event added, {:.1} ns per event in all; finish {:.1} ms ({:.1} ns per event)",
            name,
            threads,
            n,
            spins,
            p * 1e9 / n as f64,
            events,
            p * 1e3,
            r * 1e3,
            r / p,
            (r - p) * 1e9 / (events / u64::from(threads)) as f64,
            r * 1e9 / (events / u64::from(threads)) as f64,
            f * 1e3,
            f * 1e9 / events as f64
        );
    }
    Ok(())
}
