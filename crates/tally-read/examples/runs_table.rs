//! The runs table alone (`runs_table PATH... [--tags GLOB...]`): its rows, the time to read
//! them and the process's peak resident memory, for BENCHMARKS.md "Questions across runs": a
//! release build of this crate measures the table in minutes of build, without the SQL engine
//! the command line carries.

use std::path::PathBuf;
use std::time::Instant;
use tally_read::columns::ReadOptions;
use tally_read::runs::runs_table;

fn main() {
    let (mut paths, mut tags) = (Vec::<PathBuf>::new(), Vec::<String>::new());
    let mut in_tags = false;
    for a in std::env::args().skip(1) {
        match a.as_str() {
            "--tags" => in_tags = true,
            _ if in_tags => tags.push(a),
            _ => paths.push(a.into()),
        }
    }
    let start = Instant::now();
    let table = runs_table(&paths, &tags, ReadOptions::default()).expect("reading the runs");
    let elapsed = start.elapsed();
    let points: u64 = table.rows.iter().map(|r| r.points).sum();
    let findings: usize = table
        .rows
        .iter()
        .filter_map(|r| r.health.as_ref())
        .map(Vec::len)
        .sum();
    // VmHWM: the peak resident set, as the kernel counts it.
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let peak = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .map_or("?".to_owned(), |v| v.trim().to_owned());
    println!(
        "{} runs, {points} points, {findings} findings: {:.1} ms, peak RSS {peak}",
        table.rows.len(),
        elapsed.as_secs_f64() * 1e3
    );
}
