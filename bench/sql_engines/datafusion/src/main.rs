#[path = "../../common/data.rs"]
mod data;
use datafusion::arrow::array::{ArrayRef, DictionaryArray, Float64Array, Int32Array, Int64Array, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Int32Type, Schema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::datasource::MemTable;
use datafusion::prelude::*;
use std::sync::Arc;

const BATCH: usize = 65_536;

fn str_col(plain: bool, keys: &[u32], names: &[String]) -> ArrayRef {
    if plain {
        Arc::new(StringArray::from_iter_values(keys.iter().map(|&k| names[k as usize].as_str())))
    } else {
        let k = Int32Array::from_iter_values(keys.iter().map(|&k| k as i32));
        let v = StringArray::from_iter_values(names.iter().map(|s| s.as_str()));
        Arc::new(DictionaryArray::<Int32Type>::try_new(k, Arc::new(v)).unwrap())
    }
}

#[tokio::main]
async fn main() -> datafusion::error::Result<()> {
    let plain = std::env::var("DF_PLAIN").is_ok();
    let t = std::time::Instant::now();
    let d = data::generate();
    println!("generate: {:.1} ms", t.elapsed().as_secs_f64() * 1e3);

    let c0 = data::cpu_ms();
    let t = std::time::Instant::now();
    let sty = if plain { DataType::Utf8 } else { DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)) };
    let schema = Arc::new(Schema::new(vec![
        Field::new("run", sty.clone(), false),
        Field::new("tag", sty, false),
        Field::new("step", DataType::Int64, false),
        Field::new("wall_time", DataType::Float64, false),
        Field::new("value", DataType::Float64, false),
    ]));
    let ctx = SessionContext::new();
    let nparts = ctx.state().config().target_partitions();
    let mut parts: Vec<Vec<RecordBatch>> = vec![Vec::new(); nparts];
    let mut i = 0;
    let mut bi = 0;
    while i < data::NROWS {
        let e = (i + BATCH).min(data::NROWS);
        let b = RecordBatch::try_new(schema.clone(), vec![
            str_col(plain, &d.run[i..e], &d.run_names),
            str_col(plain, &d.tag[i..e], &d.tag_names),
            Arc::new(Int64Array::from(d.step[i..e].to_vec())),
            Arc::new(Float64Array::from(d.wall_time[i..e].to_vec())),
            Arc::new(Float64Array::from(d.value[i..e].to_vec())),
        ])?;
        parts[bi % nparts].push(b);
        bi += 1;
        i = e;
    }
    drop(d.step.len());
    ctx.register_table("scalars", Arc::new(MemTable::try_new(schema, parts)?))?;
    let rs = Arc::new(Schema::new(vec![
        Field::new("run", DataType::Utf8, false),
        Field::new("lr", DataType::Float64, false),
        Field::new("seed", DataType::Int64, false),
    ]));
    let rb = RecordBatch::try_new(rs.clone(), vec![
        Arc::new(StringArray::from_iter_values(d.run_names.iter())),
        Arc::new(Float64Array::from(d.runs_lr.clone())),
        Arc::new(Int64Array::from(d.runs_seed.clone())),
    ])?;
    ctx.register_table("runs", Arc::new(MemTable::try_new(rs, vec![vec![rb]])?))?;
    println!("load cpu {:.0} ms", data::cpu_ms() - c0);
    println!("load (to arrow batches, {} batches, {} partitions, {}): {:.1} ms", bi, nparts,
        if plain { "plain Utf8" } else { "Dictionary(Int32,Utf8)" }, t.elapsed().as_secs_f64() * 1e3);
    drop(d);

    for (name, q) in [("Q1", data::Q1), ("Q2", data::Q2), ("Q3", data::Q3)] {
        let mut res = Vec::new();
        let mut best = f64::INFINITY;
        let mut best_cpu = f64::INFINITY;
        let mut all = Vec::new();
        for _ in 0..3 {
            let c = data::cpu_ms();
            let t = std::time::Instant::now();
            res = ctx.sql(q).await?.collect().await?;
            let e = t.elapsed().as_secs_f64() * 1e3;
            let ce = data::cpu_ms() - c;
            all.push(format!("{e:.1}/{ce:.0}"));
            best = best.min(e);
            best_cpu = best_cpu.min(ce);
        }
        let rows: usize = res.iter().map(|b| b.num_rows()).sum();
        println!("{name}: best wall {best:.1} ms, best cpu {best_cpu:.0} ms (wall/cpu runs: {}) rows={rows}", all.join(", "));
        if name != "Q3" {
            println!("{}", datafusion::arrow::util::pretty::pretty_format_batches(&res)?);
        }
    }
    Ok(())
}
