#[path = "../../common/data.rs"]
mod data;
fn main() {
    let t = std::time::Instant::now();
    let d = data::generate();
    println!("generate: {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    let s: f64 = d.value.iter().sum();
    println!("rows={} checksum={s:.3} runs={} {}", d.step.len(), d.run_names.len(), d.runs_lr.len());
}
