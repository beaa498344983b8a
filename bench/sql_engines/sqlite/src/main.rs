#[path = "../../common/data.rs"]
mod data;
use rusqlite::vtab::{CreateVTab, VTabKind, Module, Context, Filters, IndexInfo, VTab, VTabConnection, VTabCursor};
use rusqlite::{ffi, params, Connection, Result};
use std::borrow::Cow;
use std::ffi::{c_int, CStr};
use std::time::Instant;

#[repr(C)]
struct ColTab {
    base: ffi::sqlite3_vtab,
    d: &'static data::Data,
}
unsafe impl<'vtab> VTab<'vtab> for ColTab {
    type Aux = &'static data::Data;
    type Cursor = ColCursor;
    fn connect(_db: &mut VTabConnection, aux: Option<&Self::Aux>, _m: &[u8], _db2: &[u8], _t: &[u8], _a: &[&[u8]]) -> Result<(Cow<'static, CStr>, Self)> {
        Ok((Cow::Borrowed(c"CREATE TABLE x(run TEXT, tag TEXT, step INTEGER, wall_time REAL, value REAL)"),
            ColTab { base: ffi::sqlite3_vtab::default(), d: aux.unwrap() }))
    }
    fn best_index(&self, info: &mut IndexInfo) -> Result<bool> {
        info.set_estimated_cost(data::NROWS as f64);
        info.set_estimated_rows(data::NROWS as i64);
        Ok(true)
    }
    fn open(&'vtab mut self) -> Result<ColCursor> {
        Ok(ColCursor { base: ffi::sqlite3_vtab_cursor::default(), d: self.d, i: 0 })
    }
}
impl<'vtab> CreateVTab<'vtab> for ColTab { const KIND: VTabKind = VTabKind::Default; }
#[repr(C)]
struct ColCursor {
    base: ffi::sqlite3_vtab_cursor,
    d: &'static data::Data,
    i: usize,
}
unsafe impl VTabCursor for ColCursor {
    fn filter(&mut self, _n: c_int, _s: Option<&str>, _a: &Filters<'_>) -> Result<()> { self.i = 0; Ok(()) }
    fn next(&mut self) -> Result<()> { self.i += 1; Ok(()) }
    fn eof(&self) -> bool { self.i >= data::NROWS }
    fn column(&self, ctx: &mut Context, c: c_int) -> Result<()> {
        let d = self.d; let i = self.i;
        match c {
            0 => ctx.set_result(&d.run_names[d.run[i] as usize].as_str()),
            1 => ctx.set_result(&d.tag_names[d.tag[i] as usize].as_str()),
            2 => ctx.set_result(&d.step[i]),
            3 => ctx.set_result(&d.wall_time[i]),
            _ => ctx.set_result(&d.value[i]),
        }
    }
    fn rowid(&self) -> Result<i64> { Ok(self.i as i64) }
}

fn run_q(db: &Connection, q: &str) -> usize {
    let mut st = db.prepare(q).unwrap();
    let n = st.column_count();
    let mut rows = st.query([]).unwrap();
    let mut cnt = 0;
    let mut acc = 0.0f64;
    while let Some(r) = rows.next().unwrap() {
        for c in 0..n {
            if let Ok(v) = r.get::<_, f64>(c) { acc += v; }
        }
        cnt += 1;
    }
    std::hint::black_box(acc);
    cnt
}
fn show(db: &Connection, q: &str) {
    let mut st = db.prepare(q).unwrap();
    let n = st.column_count();
    let mut rows = st.query([]).unwrap();
    while let Some(r) = rows.next().unwrap() {
        let v: Vec<String> = (0..n).map(|c| format!("{:?}", r.get_ref(c).unwrap())).collect();
        println!("  {}", v.join(" | "));
    }
}

fn main() -> Result<()> {
    let mode = std::env::args().nth(1).unwrap_or("insert".into());
    let t = Instant::now();
    let d: &'static data::Data = Box::leak(Box::new(data::generate()));
    println!("generate: {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    let db = Connection::open_in_memory()?;
    println!("sqlite {}", rusqlite::version());
    let c0 = data::cpu_ms();
    let t = Instant::now();
    db.execute_batch("CREATE TABLE runs(run TEXT, lr REAL, seed INTEGER)")?;
    for r in 0..data::NRUNS {
        db.execute("INSERT INTO runs VALUES (?1, ?2, ?3)", params![d.run_names[r], d.runs_lr[r], d.runs_seed[r]])?;
    }
    if mode == "vtab" {
        const MODULE: Module<ColTab> = Module::read_only_module();
        db.create_module(c"coltab", &MODULE, Some(d))?;
        db.execute_batch("CREATE VIRTUAL TABLE scalars USING coltab")?;
    } else {
        db.execute_batch("CREATE TABLE scalars(run TEXT, tag TEXT, step INTEGER, wall_time REAL, value REAL); BEGIN")?;
        {
            let mut st = db.prepare("INSERT INTO scalars VALUES (?1, ?2, ?3, ?4, ?5)")?;
            for i in 0..data::NROWS {
                st.execute(params![d.run_names[d.run[i] as usize], d.tag_names[d.tag[i] as usize], d.step[i], d.wall_time[i], d.value[i]])?;
            }
        }
        db.execute_batch("COMMIT")?;
    }
    println!("load ({mode}): {:.1} ms wall, {:.0} ms cpu", t.elapsed().as_secs_f64() * 1e3, data::cpu_ms() - c0);
    if mode == "insert-index" {
        let t = Instant::now();
        db.execute_batch("CREATE INDEX i_tag_run_step ON scalars(tag, run, step)")?;
        println!("create index (tag,run,step): {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    }
    for (name, q) in [("Q1", data::Q1), ("Q2", data::Q2), ("Q3", data::Q3)] {
        data::best_of_3(name, || run_q(&db, q));
        if name != "Q3" { show(&db, q); }
    }
    Ok(())
}
