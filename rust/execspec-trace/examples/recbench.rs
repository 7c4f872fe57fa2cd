//! How much recording costs, without an executor: T threads record N
//! poll-begin events each into a recorder writing to /dev/null (or FILE).
//!
//!     cargo run --release --example recbench [T] [N] [FILE]
use execspec_trace::{Event, Header, Recorder};
use std::time::Instant;

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let threads: u32 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(2);
    let n: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let path = args.get(3).cloned().unwrap_or_else(|| "/dev/null".into());
    let rec = Recorder::new(Header::new("recbench", threads, "fifo"), std::io::BufWriter::new(execspec_trace::create_file(&path)?));
    let start = Instant::now();
    let hs: Vec<_> = (0..threads)
        .map(|w| {
            let rec = rec.clone();
            std::thread::spawn(move || {
                for i in 0..n {
                    rec.record(Event::poll_begin(i + 1, Some(w)));
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    let recorded = start.elapsed();
    let sum = rec.finish()?;
    let total = start.elapsed();
    let events = sum.events as f64;
    println!(
        "{} threads x {} events: recorded in {:.1} ms ({:.0} ns/event per thread), written in {:.1} ms ({:.0} ns/event overall); merge window up to {} events",
        threads,
        n,
        recorded.as_secs_f64() * 1e3,
        recorded.as_secs_f64() * 1e9 / n as f64,
        total.as_secs_f64() * 1e3,
        total.as_secs_f64() * 1e9 / events,
        sum.max_pending
    );
    Ok(())
}
