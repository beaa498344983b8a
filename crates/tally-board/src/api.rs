//! The board's HTTP API, which its page uses and scripts may too (`docs/contract/board.md`
//! "The API"): each handler takes the catalog and the request's target and gives a status and
//! a JSON body.

use crate::catalog::{lock, Catalog, Entry};
use crate::query::Target;
use serde_json::{json, Map, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tally::health::RuleSet;
use tally_read::compare::{absent_message, compare, Settings, BAND_REPS};
use tally_read::damage::damage_json;
use tally_read::diagnose::{diagnose, Thresholds, DEFAULT_LAST};
use tally_read::downsample::{Axis, Bucket, Point};
use tally_read::health::{check_paths, finding_json};
use tally_read::json::number;
use tally_read::live::LiveRun;
use tally_read::meta::{read_json, RunConfigFacts};
use tally_read::shares::run_timeline_shares;
use tally_read::smooth;
use tally_read::summaries::RunSummaries;
use tally_schema::legacy::glob_match;

/// The widest chart a request may ask buckets for.
pub const MAX_WIDTH: usize = 16_384;

/// A run not written to for this long, while it is `running` or grew while the board watched,
/// is shown stalled.
pub const STALLED_AFTER: Duration = Duration::from_secs(60);

/// An answer: the HTTP status and the body.
pub struct Answer {
    /// 200, or 400 (a bad parameter), 404 (no such run, tag or route), 500 (reading failed).
    pub status: u16,
    /// The body.
    pub body: Body,
}

/// What an answer carries: JSON, or a file as a run holds it (an image).
pub enum Body {
    /// Every route but `/api/image`, and every error.
    Json(Value),
    /// The bytes and their media type.
    File(&'static str, Vec<u8>),
}

impl Answer {
    fn ok(body: Value) -> Self {
        Answer {
            status: 200,
            body: Body::Json(body),
        }
    }

    fn error(status: u16, message: impl Into<String>) -> Self {
        Answer {
            status,
            body: Body::Json(json!({ "error": message.into() })),
        }
    }
}

/// Answers a request for an `/api/` path; `wanted` says whether its asker still waits (a run's
/// read stops when not: `docs/contract/board.md` "Bounded reads").
pub fn answer(catalog: &Catalog, target: &Target, wanted: Wanted) -> Answer {
    let result = match target.path.as_str() {
        "/api/runs" => runs(catalog, target),
        "/api/tags" => tags(catalog, target),
        "/api/scalars" => scalars(catalog, target, wanted),
        "/api/nearest" => nearest(catalog, target, wanted),
        "/api/groups" => groups(catalog, target),
        "/api/run" => run(catalog, target, wanted),
        "/api/media" => media(catalog, target),
        "/api/image" => image(catalog, target),
        other => Err(Answer::error(404, format!("{other}: no such API path"))),
    };
    result.unwrap_or_else(|e| e)
}

type Handled = Result<Answer, Answer>;

/// Whether the request's asker still waits for the answer.
pub type Wanted<'a> = &'a dyn Fn() -> bool;

/// `GET /api/runs[?since=G][&tags=GLOB,...]`: the runs table, every row or those changed since
/// generation `G`, with the figures of the tags matching the globs.
fn runs(catalog: &Catalog, target: &Target) -> Handled {
    let since: u64 = parse(target, "since")?.unwrap_or(0);
    let globs: Vec<String> = target
        .get("tags")
        .map(|g| {
            g.split(',')
                .filter(|g| !g.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let table = catalog.table();
    let now = SystemTime::now();
    let rows: Vec<Value> = table
        .runs
        .iter()
        .filter(|(_, e)| e.changed > since)
        .map(|(name, e)| run_json(name, e, &globs, now))
        .collect();
    Ok(Answer::ok(json!({
        "generation": table.generation,
        "notice": table.notice,
        "pending": table.pending,
        "names": table.runs.keys().collect::<Vec<_>>(),
        "runs": rows,
    })))
}

/// One row: the runs table's flat columns (`tally runs --json`'s), then the board's own.
fn run_json(name: &str, e: &Entry, globs: &[String], now: SystemTime) -> Value {
    let mut row = Map::new();
    match &e.row {
        Some(Ok(r)) => {
            for (k, v) in r.flat() {
                let tag = k.rsplit_once(':').map(|(t, _)| t);
                if tag.is_none_or(|t| globs.iter().any(|g| glob_match(g, t))) {
                    row.insert(k, v);
                }
            }
        }
        Some(Err(message)) => {
            row.insert("run".to_owned(), json!(name));
            row.insert("dir".to_owned(), json!(e.dir.display().to_string()));
            row.insert("error".to_owned(), json!(message));
        }
        None => {
            row.insert("run".to_owned(), json!(name));
            row.insert("dir".to_owned(), json!(e.dir.display().to_string()));
        }
    }
    let written = e.written.and_then(|w| w.duration_since(UNIX_EPOCH).ok());
    row.insert(
        "written".to_owned(),
        json!(written.map(|d| d.as_secs_f64())),
    );
    row.insert("state".to_owned(), json!(state(e, now)));
    row.insert("damage".to_owned(), damage_json(&e.damage));
    Value::Object(row)
}

/// `running`, `stalled`, or the status the run's summary gives (`null` without one).
fn state(e: &Entry, now: SystemTime) -> Option<String> {
    if e.row.is_none() {
        return Some("reading".to_owned());
    }
    let status = e
        .row
        .as_ref()
        .and_then(|r| r.as_ref().ok())
        .and_then(|r| r.status.clone());
    let watched = status.as_deref() == Some("running") || e.grew;
    let quiet = e
        .written
        .and_then(|w| now.duration_since(w).ok())
        .is_some_and(|d| d >= STALLED_AFTER);
    if watched && quiet && status.as_deref().is_none_or(|s| s == "running") {
        return Some("stalled".to_owned());
    }
    status.or(e.grew.then(|| "running".to_owned()))
}

/// `GET /api/tags[?run=R]`: each tag with how many runs have it and its points in all.
fn tags(catalog: &Catalog, target: &Target) -> Handled {
    let table = catalog.table();
    let only = target.get("run");
    if let Some(run) = only {
        if !table.runs.contains_key(run) {
            return Err(no_run(run));
        }
    }
    let mut tags: Vec<(String, u64, u64)> = Vec::new();
    for (name, e) in &table.runs {
        if only.is_some_and(|r| r != name) {
            continue;
        }
        let Some(Ok(row)) = &e.row else { continue };
        for t in &row.tags {
            match tags.iter_mut().find(|(tag, _, _)| *tag == t.tag) {
                Some((_, runs, points)) => {
                    *runs += 1;
                    *points += t.count;
                }
                None => tags.push((t.tag.clone(), 1, t.count)),
            }
        }
    }
    let tags: Vec<Value> = tags
        .into_iter()
        .map(|(tag, runs, points)| json!({"tag": tag, "runs": runs, "points": points}))
        .collect();
    Ok(Answer::ok(json!({ "tags": tags })))
}

/// `GET /api/scalars?run=R&tag=T&width=W[&x=step|wall][&start=S][&end=E]`: the points of one
/// run's tag in `W` buckets, each with its first, last, lowest and highest point and its
/// non-finite points; with `span=B` (and `start`), in buckets of x span `B` laid from `S`.
fn scalars(catalog: &Catalog, target: &Target, wanted: Wanted) -> Handled {
    let (run, tag) = (required(target, "run")?, required(target, "tag")?);
    let width = width(target, 1000)?;
    let axis = axis(target)?;
    let (start, end) = (parse::<f64>(target, "start")?, parse::<f64>(target, "end")?);
    let span: Option<f64> = parse(target, "span")?;
    let smoothing = smoothing(target)?;
    let live = held(catalog, run, wanted)?;
    let live = lock(&live);
    let series = live.chart(tag).ok_or_else(|| no_tag(run, tag))?;
    let d = match span {
        None => series
            .downsample(axis, start, end, width)
            .map_err(read_failed)?,
        // A chart following a growing run: its newest buckets, at the span it draws.
        Some(span) => {
            let start = start.ok_or_else(|| {
                Answer::error(400, "span= needs start=: buckets are laid from the start")
            })?;
            series
                .downsample_from(axis, start, end, span, MAX_WIDTH)
                .map_err(read_failed)?
                .ok_or_else(|| {
                    Answer::error(
                        400,
                        format!("span={span}: buckets must be wider than 0 and at most {MAX_WIDTH} of them"),
                    )
                })?
        }
    };
    // Over every raw point from the series' first, whatever the window (board.md "Every point
    // drawn").
    let smoothed = match smoothing {
        Some(w) => Some(series.smoothed(axis, &d, w).map_err(read_failed)?),
        None => None,
    };
    let buckets: Vec<Value> = d
        .buckets
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let mut json = bucket_json(b);
            if let Some(s) = &smoothed {
                json["smoothed"] = number(s[i]);
            }
            json
        })
        .collect();
    Ok(Answer::ok(json!({
        "run": run,
        "tag": tag,
        "x": target.get("x").unwrap_or("step"),
        "start": d.start,
        "end": d.end,
        "points": d.points,
        "total": series.len(),
        "buckets": buckets,
    })))
}

/// `GET /api/nearest?run=R&tag=T&at=X[&x=step|wall][&smoothing=M]`: the raw point nearest to
/// `X`, and TensorBoard's smoothed value there.
fn nearest(catalog: &Catalog, target: &Target, wanted: Wanted) -> Handled {
    let (run, tag) = (required(target, "run")?, required(target, "tag")?);
    let at: f64 = parse(target, "at")?.ok_or_else(|| missing("at"))?;
    let axis = axis(target)?;
    let smoothing = smoothing(target)?;
    let live = held(catalog, run, wanted)?;
    let live = lock(&live);
    let series = live.chart(tag).ok_or_else(|| no_tag(run, tag))?;
    let point = series.nearest(axis, at).map_err(read_failed)?;
    let mut answer = json!({
        "run": run,
        "tag": tag,
        "point": point.map(point_json),
    });
    if let (Some(w), Some(p)) = (smoothing, point) {
        let smoothed = series.smoothed_at(axis, &p, w).map_err(read_failed)?;
        answer["smoothed"] = smoothed.map_or(Value::Null, number);
    }
    Ok(Answer::ok(answer))
}

/// `GET /api/groups?tag=T&by=KEY,...[&width=W][&smoothing=M]`: the runs grouped by
/// configuration keys (the seed left out, say), each group's mean and its 95 % bootstrap band
/// on up to `W` aligned steps (`tally compare`'s curves, `docs/contract/consumers.md` "Comparing
/// runs"), with TensorBoard's smoothing of the mean and IQM curves when asked.
fn groups(catalog: &Catalog, target: &Target) -> Handled {
    let tag = required(target, "tag")?;
    let by: Vec<String> = required(target, "by")?
        .split(',')
        .filter(|k| !k.is_empty())
        .map(str::to_owned)
        .collect();
    if by.is_empty() {
        return Err(Answer::error(
            400,
            "by=: name at least one configuration key",
        ));
    }
    let width = width(target, 400)?;
    let smoothing = smoothing(target)?;
    let settings = Settings {
        by: by.clone(),
        curve_points: width,
        reps: BAND_REPS,
        ..Settings::new(tag)
    };
    let found =
        compare(catalog.inputs(), &settings).map_err(|e| Answer::error(500, e.to_string()))?;
    // No key any run has: one group of every run would read as an answer (board.md "Runs
    // grouped over seeds"); `absent` says why there is none.
    let pooled = found.absent.len() == by.len();
    let groups: Vec<Value> = found
        .groups
        .iter()
        .filter(|_| !pooled)
        .map(|g| {
            let mut json = g.to_json(&by);
            if let (Some(w), Some(curve)) = (smoothing, json["curve"].as_array_mut()) {
                let mean: Vec<f64> = g.curve.iter().map(|p| p.mean).collect();
                let iqm: Vec<f64> = g.curve.iter().map(|p| p.iqm.value).collect();
                let (mean, iqm) = (smooth::smoothed(&mean, w), smooth::smoothed(&iqm, w));
                for (i, point) in curve.iter_mut().enumerate() {
                    point["smoothed"] = finite_or_null(mean[i]);
                    point["iqm_smoothed"] = finite_or_null(iqm[i]);
                }
            }
            json
        })
        .collect();
    Ok(Answer::ok(json!({
        "tag": tag,
        "by": by,
        "groups": groups,
        "unscored": found.unscored.iter().map(|(run, why)| json!({"run": run, "why": why})).collect::<Vec<_>>(),
        "absent": found.absent.iter().map(|k| absent_message(k)).collect::<Vec<_>>(),
    })))
}

/// A group curve's number: `null` when not finite, as the rest of a group's JSON has it.
fn finite_or_null(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// The `smoothing` parameter: TensorBoard's smoothing weight, 0 (none) to below 1.
fn smoothing(target: &Target) -> Result<Option<f64>, Answer> {
    let weight: Option<f64> = parse(target, "smoothing")?;
    match weight {
        Some(w) if !smooth::weight_ok(w) => Err(Answer::error(
            400,
            format!(
                "smoothing={}: the smoothing weight is at least 0 and below 1",
                target.get("smoothing").unwrap_or_default()
            ),
        )),
        _ => Ok(weight),
    }
}

fn bucket_json(b: &Bucket) -> Value {
    json!({
        "first": point_json(b.first),
        "last": point_json(b.last),
        "min": b.min.map(point_json),
        "max": b.max.map(point_json),
        "count": b.count,
        "nonfinite": b.nonfinite.iter().copied().map(point_json).collect::<Vec<_>>(),
    })
}

/// `[step, wall_time, value]`; a value that JSON has no number for is the string `"NaN"`,
/// `"Infinity"` or `"-Infinity"` (JavaScript's `Number()` reads each back).
fn point_json(p: Point) -> Value {
    json!([p.step, p.wall_time, number(p.value)])
}

/// A held series' points could not be read back from its files (`docs/contract/board.md`
/// "Bounded reads").
fn read_failed(e: tally_read::Error) -> Answer {
    Answer::error(500, e.to_string())
}

/// The run's held series (read now if not held), or why not.
fn held(catalog: &Catalog, run: &str, wanted: Wanted) -> Result<Arc<Mutex<LiveRun>>, Answer> {
    catalog
        .live(run, wanted)
        .map_err(|e| Answer::error(500, e.to_string()))?
        .ok_or_else(|| no_run(run))
}

/// The `width` parameter (`default` when absent), 1 to [`MAX_WIDTH`].
fn width(target: &Target, default: usize) -> Result<usize, Answer> {
    let width: usize = parse(target, "width")?.unwrap_or(default);
    if !(1..=MAX_WIDTH).contains(&width) {
        return Err(Answer::error(
            400,
            format!("width={width}: a chart is 1 to {MAX_WIDTH} buckets wide"),
        ));
    }
    Ok(width)
}

fn axis(target: &Target) -> Result<Axis, Answer> {
    match target.get("x").unwrap_or("step") {
        "step" => Ok(Axis::Step),
        "wall" => Ok(Axis::WallTime),
        other => Err(Answer::error(
            400,
            format!("x={other}: the x axis is `step` or `wall`"),
        )),
    }
}

fn required<'a>(target: &'a Target, name: &str) -> Result<&'a str, Answer> {
    target.get(name).ok_or_else(|| missing(name))
}

fn missing(name: &str) -> Answer {
    Answer::error(400, format!("the `{name}` parameter is missing"))
}

/// A parameter read as a number (integers for counts, finite floats for positions).
fn parse<T: Number>(target: &Target, name: &str) -> Result<Option<T>, Answer> {
    match target.get(name) {
        None | Some("") => Ok(None),
        Some(text) => match text.parse::<T>() {
            Ok(v) if v.is_finite() => Ok(Some(v)),
            _ => Err(Answer::error(
                400,
                format!("{name}={text}: not a finite number"),
            )),
        },
    }
}

/// What [`parse`] reads.
trait Number: std::str::FromStr {
    fn is_finite(&self) -> bool;
}

impl Number for f64 {
    fn is_finite(&self) -> bool {
        f64::is_finite(*self)
    }
}

impl Number for u64 {
    fn is_finite(&self) -> bool {
        true
    }
}

impl Number for usize {
    fn is_finite(&self) -> bool {
        true
    }
}

/// `GET /api/run?run=R[&width=W]`: what a run says about itself: its summary
/// (`run_summary.json`), its bottleneck reading (`tally diagnose`'s JSON; `null` with the reason
/// for a run it cannot read, such as another writer's), the default health rules' findings
/// (`tally health`'s), and its timelines as shares over at most `W` step buckets (empty for a
/// run without them).
fn run(catalog: &Catalog, target: &Target, wanted: Wanted) -> Handled {
    let name = required(target, "run")?;
    let width = width(target, 200)?;
    let dir = catalog.dir_of(name).ok_or_else(|| no_run(name))?;
    let summary = read_json(&dir.join("run_summary.json")).unwrap_or(None);
    // The listing's skips are on the runs table's notice already.
    let (diagnosis, why) = match diagnose(
        &dir,
        DEFAULT_LAST,
        Thresholds::default(),
        &mut tally_read::Quiet,
    ) {
        Ok(d) => (d.to_json(), None),
        Err(e) => (Value::Null, Some(e.to_string())),
    };
    // The health rules' defaults over the run, as `tally health` reads it.
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let health = match check_paths(
        std::slice::from_ref(&dir),
        &RuleSet::defaults(),
        now,
        &mut tally_read::Quiet,
    ) {
        Ok(runs) => json!(runs
            .iter()
            .flat_map(|r| r.findings.iter().map(finding_json))
            .collect::<Vec<_>>()),
        Err(e) => json!({ "error": e.to_string() }),
    };
    let shares = match RunConfigFacts::read_or_default(&dir).profile() {
        Some(profile) => {
            let live = held(catalog, name, wanted)?;
            let live = lock(&live);
            let shares = run_timeline_shares(profile, &live, width);
            Some(shares.map_err(|e| Answer::error(500, e.to_string()))?)
        }
        None => None,
    };
    // What its reader read past, as its row says (board.md "The runs table").
    let damage = catalog
        .table()
        .runs
        .get(name)
        .map_or(json!([]), |e| damage_json(&e.damage));
    Ok(Answer::ok(json!({
        "run": name,
        "summary": summary,
        "damage": damage,
        "diagnosis": diagnosis,
        "diagnosis_error": why,
        "health": health,
        "timelines": shares,
    })))
}

/// `GET /api/media?run=R`: the run's text entries per tag, and per image and histogram tag its
/// newest (the fields at the top) and every one kept, oldest first (`steps` for images, whose
/// bytes come from `/api/image`; `history` for histograms).
fn media(catalog: &Catalog, target: &Target) -> Handled {
    let name = required(target, "run")?;
    let run = summaries(catalog, name)?;
    let run = lock(&run);
    let text: Vec<Value> = run
        .text
        .iter()
        .map(|(tag, entries)| {
            let entries: Vec<Value> = entries
                .iter()
                .map(|t| json!({ "step": t.step, "wall_time": t.wall_time, "text": t.text }))
                .collect();
            json!({ "tag": tag, "entries": entries })
        })
        .collect();
    let image_json = |i: &tally_read::summaries::Image| {
        json!({ "step": i.step, "wall_time": i.wall_time,
                "width": i.width, "height": i.height, "mime": i.mime })
    };
    let images: Vec<Value> = run
        .images
        .iter()
        .filter_map(|(tag, held)| {
            let mut newest = image_json(held.back()?);
            newest["tag"] = json!(tag);
            newest["steps"] = held.iter().map(image_json).collect();
            Some(newest)
        })
        .collect();
    let histogram_json = |h: &tally_read::summaries::Histogram| {
        let buckets: Vec<Value> = h
            .buckets
            .iter()
            .map(|b| json!([number(b[0]), number(b[1]), number(b[2])]))
            .collect();
        json!({ "step": h.step, "wall_time": h.wall_time, "buckets": buckets })
    };
    let histograms: Vec<Value> = run
        .histograms
        .iter()
        .filter_map(|(tag, held)| {
            let mut newest = histogram_json(held.back()?);
            newest["tag"] = json!(tag);
            newest["history"] = held.iter().map(histogram_json).collect();
            Some(newest)
        })
        .collect();
    Ok(Answer::ok(json!({
        "run": name,
        "text": text,
        "images": images,
        "histograms": histograms,
    })))
}

/// `GET /api/image?run=R&tag=T[&step=S]`: the tag's newest image (of step `S`, the newest of
/// it, when given), as the run holds it.
fn image(catalog: &Catalog, target: &Target) -> Handled {
    let name = required(target, "run")?;
    let tag = required(target, "tag")?;
    let step: Option<f64> = parse(target, "step")?;
    let run = summaries(catalog, name)?;
    let run = lock(&run);
    let held = run
        .images
        .get(tag)
        .ok_or_else(|| Answer::error(404, format!("run {name:?} has no image tag {tag:?}")))?;
    let image = match step {
        None => held.back(),
        Some(step) => held.iter().rev().find(|i| i.step as f64 == step),
    }
    .ok_or_else(|| {
        Answer::error(
            404,
            format!(
                "run {name:?} holds no image of tag {tag:?} at step {}",
                step.unwrap_or(0.0)
            ),
        )
    })?;
    Ok(Answer {
        status: 200,
        body: Body::File(image.mime, image.bytes.clone()),
    })
}

fn summaries(catalog: &Catalog, run: &str) -> Result<Arc<Mutex<RunSummaries>>, Answer> {
    catalog
        .summaries(run)
        .map_err(|e| Answer::error(500, e.to_string()))?
        .ok_or_else(|| no_run(run))
}

fn no_run(run: &str) -> Answer {
    Answer::error(
        404,
        format!("run {run:?}: no such run under the board's paths"),
    )
}

fn no_tag(run: &str, tag: &str) -> Answer {
    Answer::error(404, format!("run {run:?} has no scalar tag {tag:?}"))
}
