//! tokio's multi-threaded runtime, checked black-box through the
//! execspec-trace future wrapper.
//!
//!     tokio-check [run] [--workload all|spawn|notify|oneshot|yield|outside|sleep] [--workers N] [--scale N] [--no-time | --end-time] [--streaming] [--out FILE]
//!     tokio-check run --workload lifo --workers 1 [--victims N] [--rounds N] [--deadline-ms N]
//!     tokio-check run --workload inject --workers 1 [--slow N] [--polls N] [--poll-us N] [--injected N] [--every-us N]
//!     tokio-check bench [--workers N] [--tasks N] [--yields N] [--work-ns N] [--reps N] [--no-time | --end-time] [--out FILE] [--warm] [--reserve] [--only 0|1|2]
//!
//! Every task is spawned through `spawn`, which wraps it with
//! `Recorder::trace` (spawn, poll-begin, poll-end on the polling worker,
//! every wake through its waker; clones and drops counted). Worker identity
//! comes from the runtime's `on_thread_start` hook; `on_thread_stop` records
//! the worker's stop, and the runtime's shutdown the executor's stop. Takes,
//! queues and wake outcomes are tokio's own and invisible: the header says
//! `"unobserved":["take","queue","outcome"]`. Spawns and poll-begins carry
//! `time` (`Stamps::Begins`: what `verify check` measures waits with, one
//! clock read per poll); `--end-time` stamps poll-ends too, `--no-time`
//! nothing.
//!
//! The recorder is deferred (binary per-thread records, the JSON lines
//! written at finish); `--streaming` uses the streaming recorder (one
//! shared clock, a writer thread merging as the run goes).
//!
//! `bench` runs a spawn/yield benchmark three ways side by side — without
//! the wrapper, with a deferred recorder, with a streaming one — rotating
//! their order, each run in a fresh process (as a program's first
//! recording: the recorder's memory is page-faulted in during the run), and
//! prints the medians: CPU during the run (every thread, the streaming
//! writer's included) and the CPU of `finish` (the deferred recorder's sort
//! and formatting) apart. `--warm` runs them all in this process after a
//! warm-up instead (the recorder reuses the memory of the runs before);
//! `--reserve` makes the deferred recorder with room for the run's events
//! (`Options::reserve`: its memory touched before the run);
//! `--only N` runs just one way N times, for a profiler.

use common::Args;
use execspec_trace::{set_worker, Header, Options, Recorder, Stamps, Summary};
use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{oneshot, Notify};

fn runtime(workers: usize, rec: Option<Recorder>) -> tokio::runtime::Runtime {
    let next = Arc::new(AtomicU32::new(0));
    let n = workers as u32;
    let mut b = tokio::runtime::Builder::new_multi_thread();
    b.worker_threads(workers).enable_time();
    // Workers are the first threads the runtime starts; a later thread (a
    // blocking-pool thread) is no worker.
    b.on_thread_start(move || {
        let id = next.fetch_add(1, Ordering::SeqCst);
        set_worker(if id < n { Some(id) } else { None });
    });
    if let Some(rec) = rec {
        b.on_thread_stop(move || {
            if let Some(w) = execspec_trace::current_worker() {
                rec.stop(Some(w));
            }
            set_worker(None);
        });
    }
    b.build().expect("tokio runtime")
}

/// Spawns fut on the current runtime, wrapped so that it is recorded.
fn spawn<F>(rec: &Recorder, time: Stamps, fut: F) -> tokio::task::JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    tokio::spawn(rec.trace(fut, time))
}

#[derive(Clone)]
struct Ctx {
    rec: Recorder,
    time: Stamps,
    scale: u64,
}

/// A tree of tasks spawned from tasks, each awaiting its children.
fn tree(cx: Ctx, depth: u32) -> std::pin::Pin<Box<dyn Future<Output = u64> + Send>> {
    Box::pin(async move {
        if depth == 0 {
            tokio::task::yield_now().await;
            return 1;
        }
        let a = spawn(&cx.rec, cx.time, tree(cx.clone(), depth - 1));
        let b = spawn(&cx.rec, cx.time, tree(cx.clone(), depth - 1));
        a.await.unwrap() + b.await.unwrap() + 1
    })
}

/// Pairs of tasks that wake each other through two Notify.
async fn notify_pairs(cx: Ctx) {
    let mut hs = Vec::new();
    for _ in 0..4 * cx.scale {
        let (a, b) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
        let rounds = 20;
        let (a2, b2) = (a.clone(), b.clone());
        hs.push(spawn(&cx.rec, cx.time, async move {
            for _ in 0..rounds {
                b2.notify_one();
                a2.notified().await;
            }
        }));
        hs.push(spawn(&cx.rec, cx.time, async move {
            for _ in 0..rounds {
                b.notified().await;
                a.notify_one();
            }
        }));
    }
    for h in hs {
        h.await.unwrap();
    }
}

/// A chain of tasks, each waiting on a oneshot from the one before.
async fn oneshot_chain(cx: Ctx) {
    let n = 50 * cx.scale;
    let (first_tx, mut rx) = oneshot::channel::<u64>();
    let mut hs = Vec::new();
    for _ in 0..n {
        let (tx, next_rx) = oneshot::channel::<u64>();
        let prev = rx;
        hs.push(spawn(&cx.rec, cx.time, async move {
            let v = prev.await.unwrap();
            let _ = tx.send(v + 1);
        }));
        rx = next_rx;
    }
    first_tx.send(0).unwrap();
    assert_eq!(rx.await.unwrap(), n);
    for h in hs {
        h.await.unwrap();
    }
}

/// Tasks that yield, competing for the workers.
async fn yielders(cx: Ctx) {
    let hs: Vec<_> = (0..10 * cx.scale)
        .map(|i| {
            spawn(&cx.rec, cx.time, async move {
                for _ in 0..(10 + i % 7) {
                    tokio::task::yield_now().await;
                }
            })
        })
        .collect();
    for h in hs {
        h.await.unwrap();
    }
}

/// Tasks woken from a thread outside the runtime, through oneshot and Notify
/// (one Notify per task: notify_one keeps one permit, so a Notify shared by
/// tasks that are not all waiting yet would lose notifications).
async fn outside(cx: Ctx) {
    let n = 20 * cx.scale;
    let mut senders = Vec::new();
    let mut notifies = Vec::new();
    let mut hs = Vec::new();
    for _ in 0..n {
        let (tx, rx) = oneshot::channel::<()>();
        senders.push(tx);
        let nf = Arc::new(Notify::new());
        notifies.push(nf.clone());
        hs.push(spawn(&cx.rec, cx.time, async move {
            rx.await.unwrap();
            nf.notified().await;
        }));
    }
    let th = std::thread::spawn(move || {
        for tx in senders {
            let _ = tx.send(());
            std::thread::sleep(Duration::from_micros(20));
        }
        for nf in notifies {
            nf.notify_one();
            std::thread::sleep(Duration::from_micros(20));
        }
    });
    for h in hs {
        h.await.unwrap();
    }
    th.join().unwrap();
}

/// Starvation through the LIFO slot (run with `--workers 1`): `victims`
/// tasks are spawned from a worker (each onto its queue), then two tasks
/// that wake each other through `Notify` start there. Every wake from a
/// worker lands in its LIFO slot, which tokio 1.24 polls before its run
/// queue as long as the task budget lasts, and `Notify` spends none: the
/// pair runs on and the victims wait until it stops, after `rounds` rounds
/// or at the deadline (a thread outside). With the slot's polls capped
/// (tokio 1.29, `patches/1-lifo-slot-cap.patch`) each victim runs within a
/// few polls of its spawn. A victim yields a few times (its own waker: to
/// the back of the run queue) and ends.
async fn lifo_pingpong(cx: Ctx, victims: u64, rounds: u64, deadline: Duration) {
    let stop = Arc::new(AtomicBool::new(false));
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let s2 = stop.clone();
    let timer = std::thread::spawn(move || {
        let _ = done_rx.recv_timeout(deadline);
        s2.store(true, Ordering::SeqCst);
    });
    let hs: Vec<_> = (0..victims)
        .map(|_| {
            spawn(&cx.rec, cx.time, async {
                for _ in 0..3 {
                    common::yield_now().await;
                }
            })
        })
        .collect();
    let (ping, pong) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let (ping2, pong2, stop2) = (ping.clone(), pong.clone(), stop.clone());
    let partner = spawn(&cx.rec, cx.time, async move {
        loop {
            ping2.notified().await;
            pong2.notify_one();
            if stop2.load(Ordering::SeqCst) {
                break;
            }
        }
    });
    let mut n = 0;
    while n < rounds && !stop.load(Ordering::SeqCst) {
        ping.notify_one();
        pong.notified().await;
        n += 1;
    }
    stop.store(true, Ordering::SeqCst);
    ping.notify_one();
    partner.await.unwrap();
    drop(done_tx);
    timer.join().unwrap();
    for h in hs {
        h.await.unwrap();
    }
    eprintln!("tokio-check: lifo: {} ping-pong rounds", n);
}

/// Starvation of the injection queue under slow polls (run with
/// `--workers 1`): `slow` tasks spawned on the worker poll for `poll_us`
/// each time and yield (to the back of its run queue), `polls` times, while
/// a thread outside the runtime spawns `injected` tasks, one every
/// `every_us` (onto the injection queue). tokio 1.24 takes from the
/// injection queue every 61 ticks whatever a poll costs, so each waits up
/// to 61 slow polls and they queue up; with the interval tuned from the
/// poll time (tokio 1.29, `patches/2-inject-interval-tuning.patch`) every 2.
async fn inject_slow(cx: Ctx, slow: u64, polls: u64, poll_us: u64, injected: u64, every_us: u64) {
    let hs: Vec<_> = (0..slow)
        .map(|_| {
            spawn(&cx.rec, cx.time, async move {
                for _ in 0..polls {
                    spin(poll_us * 1000);
                    common::yield_now().await;
                }
            })
        })
        .collect();
    let handle = tokio::runtime::Handle::current();
    let (rec, time) = (cx.rec.clone(), cx.time);
    let outside = std::thread::spawn(move || {
        // Once the slow tasks have started.
        std::thread::sleep(Duration::from_micros(2 * poll_us));
        (0..injected)
            .map(|_| {
                let h = handle.spawn(rec.trace(async {}, time));
                std::thread::sleep(Duration::from_micros(every_us));
                h
            })
            .collect::<Vec<_>>()
    });
    for h in hs {
        h.await.unwrap();
    }
    let injected = tokio::task::spawn_blocking(move || outside.join().unwrap()).await.unwrap();
    for h in injected {
        h.await.unwrap();
    }
}

/// Tasks woken by the timer driver.
async fn sleepers(cx: Ctx) {
    let hs: Vec<_> = (0..10 * cx.scale)
        .map(|i| {
            spawn(&cx.rec, cx.time, async move {
                for _ in 0..3 {
                    tokio::time::sleep(Duration::from_micros(50 + 10 * (i % 5))).await;
                }
            })
        })
        .collect();
    for h in hs {
        h.await.unwrap();
    }
}

const EXECUTOR: &str = "tokio-1.24.2 multi-thread";

/// Which events carry `time`: spawns and poll-begins unless `--no-time`
/// (none) or `--end-time` (poll-ends too).
fn stamps(args: &Args) -> Stamps {
    match (args.flag("--no-time"), args.flag("--end-time")) {
        (true, true) => args.usage("--no-time and --end-time exclude each other"),
        (true, false) => Stamps::Off,
        (false, true) => Stamps::All,
        (false, false) => Stamps::Begins,
    }
}

fn run(args: &Args) -> io::Result<()> {
    let workers = args.num("--workers", 2) as usize;
    let scale = args.num("--scale", 4);
    let time = stamps(args);
    let workload = args.text("--workload", "all").to_string();
    let opts = if args.flag("--streaming") { Options::streaming() } else { Options { deferred: true, ..Options::default() } };
    let rec = Recorder::with_options(Header::black_box(EXECUTOR, workers as u32), args.out()?, opts);
    let rt = runtime(workers, Some(rec.clone()));
    let cx = Ctx { rec: rec.clone(), time, scale };
    let start = Instant::now();
    let w = workload.clone();
    let lifo = (args.num("--victims", 8), args.num("--rounds", 20_000), Duration::from_millis(args.num("--deadline-ms", 5000)));
    let inject = (args.num("--slow", 4), args.num("--polls", 100), args.num("--poll-us", 200), args.num("--injected", 20), args.num("--every-us", 2000));
    rt.block_on(async move {
        let all = w == "all";
        if all || w == "spawn" {
            let leaves = 1 << 3;
            for _ in 0..cx.scale {
                let n = spawn(&cx.rec, cx.time, tree(cx.clone(), 3)).await.unwrap();
                assert_eq!(n, 2 * leaves - 1);
            }
        }
        if all || w == "notify" {
            spawn(&cx.rec, cx.time, notify_pairs(cx.clone())).await.unwrap();
        }
        if all || w == "oneshot" {
            spawn(&cx.rec, cx.time, oneshot_chain(cx.clone())).await.unwrap();
        }
        if all || w == "yield" {
            spawn(&cx.rec, cx.time, yielders(cx.clone())).await.unwrap();
        }
        if all || w == "outside" {
            spawn(&cx.rec, cx.time, outside(cx.clone())).await.unwrap();
        }
        if all || w == "sleep" {
            spawn(&cx.rec, cx.time, sleepers(cx.clone())).await.unwrap();
        }
        // Not in "all": starvation workloads, one worker.
        if w == "lifo" {
            spawn(&cx.rec, cx.time, lifo_pingpong(cx.clone(), lifo.0, lifo.1, lifo.2)).await.unwrap();
        }
        if w == "inject" {
            let (slow, polls, poll_us, injected, every_us) = inject;
            spawn(&cx.rec, cx.time, inject_slow(cx.clone(), slow, polls, poll_us, injected, every_us)).await.unwrap();
        }
    });
    drop(rt); // joins the workers (their on_thread_stop records their stop)
    rec.stop(None);
    let sum = rec.finish()?;
    eprintln!("tokio-check: workload {}, {} workers, scale {}: {} in {:.3}s", workload, workers, scale, describe(&sum), start.elapsed().as_secs_f64());
    Ok(())
}

fn describe(s: &Summary) -> String {
    format!(
        "{} events, {} wakes; wakers: {} made, {} clones, {} drops ({} alive at the end)",
        s.events,
        s.wakes,
        s.wakers_made,
        s.waker_clones,
        s.waker_drops,
        (s.wakers_made + s.waker_clones) as i64 - s.waker_drops as i64
    )
}

#[repr(C)]
struct Rusage {
    utime: [i64; 2],
    stime: [i64; 2],
    rest: [i64; 14],
}

extern "C" {
    fn getrusage(who: i32, usage: *mut Rusage) -> i32;
}

/// CPU seconds (user + system) used so far by every thread of the process,
/// ended ones included (getrusage RUSAGE_SELF, Linux).
fn cpu_seconds() -> f64 {
    let mut r = Rusage { utime: [0; 2], stime: [0; 2], rest: [0; 14] };
    // SAFETY: getrusage writes a struct rusage, which Rusage lays out for
    // 64-bit Linux (two timevals, fourteen longs).
    if unsafe { getrusage(0, &mut r) } != 0 {
        return f64::NAN;
    }
    (r.utime[0] + r.stime[0]) as f64 + (r.utime[1] + r.stime[1]) as f64 * 1e-6
}

/// What one spawn/yield run cost.
struct Cost {
    /// Wall and CPU seconds from the first spawn to the last join.
    wall: f64,
    cpu: f64,
    /// Wall and CPU seconds of the recorder's finish (0 without one).
    finish_wall: f64,
    finish_cpu: f64,
    sum: Option<Summary>,
}

/// One spawn/yield run: tasks spawned from the main future, each yielding
/// `yields` times, traced (with the time stamps asked for)
/// when rec is given.
fn bench_once(workers: usize, tasks: u64, yields: u64, work_ns: u64, time: Stamps, rec: Option<Recorder>) -> Cost {
    let rt = runtime(workers, None);
    let cpu0 = cpu_seconds();
    let start = Instant::now();
    let r2 = rec.clone();
    rt.block_on(async move {
        let body = move || async move {
            for _ in 0..yields {
                spin(work_ns);
                tokio::task::yield_now().await;
            }
        };
        let hs: Vec<_> = match &r2 {
            Some(rec) => (0..tasks).map(|_| tokio::spawn(rec.trace(body(), time))).collect(),
            None => (0..tasks).map(|_| tokio::spawn(body())).collect(),
        };
        for h in hs {
            h.await.unwrap();
        }
    });
    let wall = start.elapsed().as_secs_f64();
    let cpu1 = cpu_seconds();
    let sum = rec.map(|r| r.finish().expect("finish"));
    let finish_wall = start.elapsed().as_secs_f64() - wall;
    let finish_cpu = cpu_seconds() - cpu1;
    drop(rt);
    Cost { wall, cpu: cpu1 - cpu0, finish_wall, finish_cpu, sum }
}

/// Busy work of about ns nanoseconds: what a poll does besides yielding.
fn spin(ns: u64) {
    if ns == 0 {
        return;
    }
    let t = Instant::now();
    while t.elapsed().as_nanos() < u128::from(ns) {
        std::hint::spin_loop();
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The bench's options, as given (a child run gets them back).
struct BenchArgs {
    workers: usize,
    tasks: u64,
    yields: u64,
    work_ns: u64,
    time: Stamps,
    /// Make room for the run's events when the recorder is made.
    reserve: bool,
    path: String,
}

impl BenchArgs {
    fn parse(args: &Args) -> BenchArgs {
        BenchArgs {
            workers: args.num("--workers", 2) as usize,
            tasks: args.num("--tasks", 1000),
            yields: args.num("--yields", 100),
            work_ns: args.num("--work-ns", 0),
            time: stamps(args),
            reserve: args.flag("--reserve"),
            // By default a file of this process's own in the temporary
            // directory (removed at the end), not a fixed name there.
            path: match args.flag("--out") {
                true => args.text("--out", "").to_string(),
                false => std::env::temp_dir().join(format!("tokio-bench-{}.jsonl", std::process::id())).display().to_string(),
            },
        }
    }

    /// Removes the trace file, unless the user named it.
    fn remove_default(&self, args: &Args) {
        if !args.flag("--out") {
            let _ = std::fs::remove_file(&self.path);
        }
    }

    /// One run: 0 plain, 1 deferred, 2 streaming.
    fn once(&self, which: usize) -> io::Result<Cost> {
        let rec = match which {
            0 => None,
            _ => {
                // Per task: its spawn, a begin and an end per poll, a wake per yield.
                let events = self.tasks.saturating_mul(3 * self.yields + 3) as usize;
                let opts = Options { deferred: which == 1, streaming: which == 2, reserve: if self.reserve { events } else { 0 }, ..Options::default() };
                let out = io::BufWriter::new(execspec_trace::create_file(&self.path)?);
                Some(Recorder::with_options(Header::black_box(EXECUTOR, self.workers as u32), out, opts))
            }
        };
        Ok(bench_once(self.workers, self.tasks, self.yields, self.work_ns, self.time, rec))
    }

    /// One run in a fresh process (`bench-one`): what a program's first
    /// recording costs, page faults of the recorder's memory included.
    fn once_cold(&self, which: usize) -> io::Result<Cost> {
        let mut cmd = std::process::Command::new(std::env::current_exe()?);
        cmd.arg("bench-one").arg(which.to_string());
        for (k, v) in [("--workers", self.workers as u64), ("--tasks", self.tasks), ("--yields", self.yields), ("--work-ns", self.work_ns)] {
            cmd.arg(k).arg(v.to_string());
        }
        match self.time {
            Stamps::Off => cmd.arg("--no-time"),
            Stamps::All => cmd.arg("--end-time"),
            Stamps::Begins => &mut cmd,
        };
        if self.reserve {
            cmd.arg("--reserve");
        }
        let out = cmd.arg("--out").arg(&self.path).stderr(std::process::Stdio::inherit()).output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let v: Vec<f64> = text.split_whitespace().filter_map(|x| x.parse().ok()).collect();
        if !out.status.success() || v.len() != 5 {
            return Err(io::Error::other(format!("tokio-check bench-one {}: {} {:?}", which, out.status, text)));
        }
        let sum = (which != 0).then(|| Summary { events: v[4] as u64, ..Summary::default() });
        Ok(Cost { wall: v[0], cpu: v[1], finish_wall: v[2], finish_cpu: v[3], sum })
    }
}

/// `bench-one N [options]`: one run, its figures on one line for `bench`.
fn bench_one(args: &Args) -> io::Result<()> {
    let which: usize = args.all().get(1).and_then(|v| v.parse().ok()).filter(|&w| w <= 2).unwrap_or_else(|| args.usage("bench-one wants 0 (plain), 1 (deferred) or 2 (streaming)"));
    let b = BenchArgs::parse(args);
    let c = b.once(which)?;
    b.remove_default(args);
    println!("{} {} {} {} {}", c.wall, c.cpu, c.finish_wall, c.finish_cpu, c.sum.map_or(0, |s| s.events));
    Ok(())
}

fn bench(args: &Args) -> io::Result<()> {
    let b = BenchArgs::parse(args);
    let reps = args.num("--reps", 11).max(1);
    let warm = args.flag("--warm");
    // --only N: run just plain (0), deferred (1) or streaming (2), in this
    // process, for a profiler.
    if args.flag("--only") {
        let w = args.num("--only", 0) as usize;
        for _ in 0..reps {
            b.once(w.min(2))?;
        }
        b.remove_default(args);
        return Ok(());
    }
    let once = |w: usize| if warm { b.once(w) } else { b.once_cold(w) };
    // Per rep: plain, deferred, streaming.
    let mut costs: [Vec<Cost>; 3] = Default::default();
    let mut events = 0;
    if warm {
        for w in 0..3 {
            b.once(w)?; // warm up
        }
    }
    for i in 0..reps as usize {
        // Rotate the order, so that none always runs on a warmer machine.
        for k in 0..3 {
            let w = (i + k) % 3;
            let c = once(w)?;
            if let Some(s) = &c.sum {
                events = s.events;
            }
            costs[w].push(c);
        }
    }
    let med = |w: usize, f: &dyn Fn(&Cost) -> f64| median(&mut costs[w].iter().map(f).collect::<Vec<_>>());
    let ratio = |w: usize, f: &dyn Fn(&Cost) -> f64| {
        let mut v: Vec<f64> = costs[w].iter().zip(&costs[0]).map(|(t, p)| f(t) / p.cpu).collect();
        median(&mut v)
    };
    b.remove_default(args);
    let (pcpu, pwall) = (med(0, &|c| c.cpu), med(0, &|c| c.wall));
    println!(
        "spawn/yield bench: {} workers, {} tasks x {} yields, {} ns of work per poll, time {}, {} reps, each run {}{}, {} events per traced run (to {})",
        b.workers,
        b.tasks,
        b.yields,
        b.work_ns,
        match b.time {
            Stamps::Off => "off",
            Stamps::Begins => "on spawns and poll-begins",
            Stamps::All => "on spawns, poll-begins and poll-ends",
        },
        reps,
        if warm { "in this process after a warm-up" } else { "in a fresh process" },
        if b.reserve { ", deferred recorder made with room for them" } else { "" },
        events,
        b.path
    );
    println!("  plain:     CPU {:.1} ms, wall {:.1} ms", pcpu * 1e3, pwall * 1e3);
    for (w, name) in [(1, "deferred"), (2, "streaming")] {
        println!(
            "  {:<10} CPU during the run {:.1} ms (median ratio {:.2}), finish {:.1} ms CPU / {:.1} ms wall, total ratio {:.2}; wall during the run {:.1} ms",
            format!("{}:", name),
            med(w, &|c| c.cpu) * 1e3,
            ratio(w, &|c| c.cpu),
            med(w, &|c| c.finish_cpu) * 1e3,
            med(w, &|c| c.finish_wall) * 1e3,
            ratio(w, &|c| c.cpu + c.finish_cpu),
            med(w, &|c| c.wall) * 1e3,
        );
    }
    let (stamp, locked) = machine_costs();
    println!(
        "  this machine: a time stamp costs {:.1} ns, a locked add {:.1} ns (a recorded yield pays one stamp with the default time, two with --end-time, and three locked operations; the plain yield {:.0} ns)",
        stamp,
        locked,
        pcpu * 1e9 / (b.tasks * (b.yields + 1)).max(1) as f64
    );
    Ok(())
}

/// What the two costs a recorded yield cannot avoid take on this machine,
/// in ns of CPU time each: a time stamp as the recorder reads it (`rdtsc`
/// on x86-64) and an uncontended locked add. They differ between machines
/// far more than a plain yield does: the ratio of a recorded yield to a
/// plain one moves with them.
fn machine_costs() -> (f64, f64) {
    const N: u32 = 2_000_000;
    let per = |f: &dyn Fn()| {
        let t = cpu_seconds();
        for _ in 0..N {
            f();
        }
        (cpu_seconds() - t) * 1e9 / f64::from(N)
    };
    let stamp = per(&|| {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: rdtsc exists on every x86-64 processor.
        std::hint::black_box(unsafe { std::arch::x86_64::_rdtsc() });
        #[cfg(not(target_arch = "x86_64"))]
        std::hint::black_box(Instant::now());
    });
    let word = std::sync::atomic::AtomicU64::new(0);
    let locked = per(&|| {
        std::hint::black_box(&word).fetch_add(1, Ordering::AcqRel);
    });
    (stamp, locked)
}

fn main() {
    common::run("tokio-check", run_main);
}

fn run_main() -> io::Result<()> {
    let args = Args::from_env("tokio-check");
    match args.command() {
        Some("bench") => bench(&args),
        Some("bench-one") => bench_one(&args),
        Some("run") | None => run(&args),
        Some(c) => args.usage(&format!("unknown command {:?} (run, bench)", c)),
    }
}
