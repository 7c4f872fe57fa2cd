//! What recording costs on the hot path of a busy executor loop: each of T
//! threads runs N polls of about 16 ns of work, and records four events per
//! poll with explicit calls (a take, the poll's begin and end, a requeue),
//! each with a tick of the shared clock; side by side with the same loop
//! recording nothing, alternated, medians of R rounds.
//!
//!     SPINS=8 cargo run --release --example busybench [T] [N] [R] [default|streaming|buffered|deferred|all]
//!
//! Each mode runs as a program's first recording would (its records'
//! memory touched for the first time during the run) and, for buffered
//! and deferred, with `Options::reserve` (touched when the recorder is
//! made, before the run).
//!
//! Per event: (recorded run − plain run) / events, medians of each, by
//! the CPU time of the loop's threads (page faults included; the time a
//! loaded machine gave to other processes excluded) and by the wall
//! clock; `finish` (ordering and formatting) after the run, apart. The
//! recorder's own helper thread (which touches the memory of chunks ahead
//! of the recording threads) is not in the loop's CPU time.
use execspec_trace::{Event, Header, Options, PollResult, Queue, Recorder, Source};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// About 16 ns of work (calibrated at start): a poll that does little.
#[path = "shared/cpu.rs"]
mod cpu;
use cpu::thread_cpu;

#[inline(never)]
fn poll(spins: u64, x: u64) -> u64 {
    let mut h = x;
    for _ in 0..spins {
        h = black_box(h.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(7));
    }
    h
}

/// One run: its wall time and the CPU time of its threads, summed.
fn run(threads: u32, n: u64, spins: u64, rec: Option<&Recorder>) -> (Duration, f64) {
    let start = Instant::now();
    let cpu = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|w| {
                s.spawn(move || {
                    let c0 = thread_cpu();
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
                    thread_cpu() - c0
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).sum::<f64>()
    });
    (start.elapsed(), cpu)
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
        // Options::default() under this header (order seq): deferred.
        ("default", Options::default()),
        ("default+reserve", Options { reserve, ..Options::default() }),
        ("streaming", Options::streaming()),
        ("buffered", Options { buffered: true, ..Options::default() }),
        ("buffered+reserve", Options { buffered: true, reserve, ..Options::default() }),
        ("deferred", Options { deferred: true, ..Options::default() }),
        ("deferred+reserve", Options { deferred: true, reserve, ..Options::default() }),
    ];
    let modes: Vec<_> = all.into_iter().filter(|(name, _)| which == "all" || name.split('+').next() == Some(which) || which == *name).collect();
    for (name, opts) in modes {
        let (mut plain, mut rec_t, mut fin, mut cpu_plain, mut cpu_rec) = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            let (w, c) = run(threads, n, spins, None);
            plain.push(w.as_secs_f64());
            cpu_plain.push(c);
            let rec = Recorder::with_options(Header::new("busybench", threads, "worksteal"), std::io::sink(), opts.clone());
            let (w, c) = run(threads, n, spins, Some(&rec));
            rec_t.push(w.as_secs_f64());
            cpu_rec.push(c);
            let t = Instant::now();
            let sum = rec.finish()?;
            assert_eq!(sum.events, events);
            fin.push(t.elapsed().as_secs_f64());
        }
        let (p, r, f) = (median(&mut plain), median(&mut rec_t), median(&mut fin));
        let (cp, cr) = (median(&mut cpu_plain), median(&mut cpu_rec));
        let per = |x: f64| x * 1e9 / events as f64;
        println!(
            "{}: {} threads x {} polls ({} spins), {} events. CPU: plain {:.1} ns per poll, recorded {:.1} ms (x{:.2} the plain {:.1} ms): {:.1} ns per event added. Wall: {:.1} ns per plain poll, x{:.2}: {:.1} ns per event added. finish {:.1} ms ({:.1} ns per event)",
            name,
            threads,
            n,
            spins,
            events,
            cp * 1e9 / (n * u64::from(threads)) as f64,
            cr * 1e3,
            cr / cp,
            cp * 1e3,
            per(cr - cp),
            p * 1e9 / n as f64,
            r / p,
            (r - p) * 1e9 / (events / u64::from(threads)) as f64,
            f * 1e3,
            per(f)
        );
    }
    Ok(())
}
