// Shared deterministic data generator (included by every program).
pub const NRUNS: usize = 20;
pub const NTAGS: usize = 10;
pub const NSTEPS: usize = 50_000;
pub const NROWS: usize = NRUNS * NTAGS * NSTEPS;

pub struct Data {
    pub run_names: Vec<String>,
    pub tag_names: Vec<String>,
    pub run: Vec<u32>, // dictionary key
    pub tag: Vec<u32>, // dictionary key
    pub step: Vec<i64>,
    pub wall_time: Vec<f64>,
    pub value: Vec<f64>,
    // runs table
    pub runs_lr: Vec<f64>,
    pub runs_seed: Vec<i64>,
}

pub fn generate() -> Data {
    let run_names: Vec<String> = (0..NRUNS).map(|r| format!("r{r:02}")).collect();
    let tag_names: Vec<String> = (0..NTAGS).map(|t| format!("t{t}")).collect();
    let mut run = Vec::with_capacity(NROWS);
    let mut tag = Vec::with_capacity(NROWS);
    let mut step = Vec::with_capacity(NROWS);
    let mut wall_time = Vec::with_capacity(NROWS);
    let mut value = Vec::with_capacity(NROWS);
    for r in 0..NRUNS {
        for t in 0..NTAGS {
            for s in 0..NSTEPS {
                run.push(r as u32);
                tag.push(t as u32);
                step.push(s as i64);
                wall_time.push(1.7e9 + s as f64 * 0.5 + r as f64);
                value.push((s as f64 * 0.001 + r as f64).sin() + t as f64);
            }
        }
    }
    let runs_lr = (0..NRUNS).map(|r| 1e-3 * (1 + r % 4) as f64).collect();
    let runs_seed = (0..NRUNS).map(|r| (r * 7) as i64).collect();
    Data { run_names, tag_names, run, tag, step, wall_time, value, runs_lr, runs_seed }
}

pub const Q1: &str = "SELECT tag, count(*), avg(value), min(value), max(value) FROM scalars GROUP BY tag";
pub const Q2: &str = "WITH last AS (SELECT run, max(step) AS s FROM scalars WHERE tag='t3' GROUP BY run) SELECT r.lr, avg(x.value), count(*) FROM scalars x JOIN last l ON x.run=l.run AND x.step=l.s AND x.tag='t3' JOIN runs r ON r.run=x.run GROUP BY r.lr ORDER BY 2 DESC";
pub const Q3: &str = "SELECT run, step, value FROM scalars WHERE tag='t1' AND step % 1000 = 0 ORDER BY run, step";

/// Process CPU time (user+sys, all threads) in ms, from /proc/self/stat (10 ms ticks).
pub fn cpu_ms() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap();
    let rest = &s[s.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    (f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap()) * 10.0
}

pub fn best_of_3<F: FnMut() -> usize>(name: &str, mut f: F) {
    let mut best = f64::INFINITY;
    let mut best_cpu = f64::INFINITY;
    let mut rows = 0;
    let mut all = Vec::new();
    for _ in 0..3 {
        let c = cpu_ms();
        let t = std::time::Instant::now();
        rows = f();
        let e = t.elapsed().as_secs_f64() * 1e3;
        let ce = cpu_ms() - c;
        all.push(format!("{e:.1}/{ce:.0}"));
        best = best.min(e);
        best_cpu = best_cpu.min(ce);
    }
    println!("{name}: best wall {best:.1} ms, best cpu {best_cpu:.0} ms (wall/cpu runs: {}) rows={rows}", all.join(", "));
}
