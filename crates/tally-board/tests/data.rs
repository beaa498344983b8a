//! What the board's API computes from a run's points beyond bucketing them: TensorBoard's
//! smoothing over every raw point, group curves' smoothing, a group-by key no run has, and a
//! run damaged in its middle (`docs/contract/board.md` "Every point drawn", "Runs grouped over
//! seeds", "The runs table"). Asked through `api::answer`, as the page's requests are.

mod common;

use common::{append, records};
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use tally_board::api::{answer, Body};
use tally_board::catalog::Catalog;
use tally_board::query::Target;

const FILE: &str = "events.out.tfevents.1700000000.host";

/// The status and JSON body of `target`.
fn ask(catalog: &Catalog, target: &str) -> (u16, Value) {
    let a = answer(catalog, &Target::parse(target), &|| true);
    match a.body {
        Body::Json(v) => (a.status, v),
        Body::File(..) => panic!("{target} answered a file"),
    }
}

fn ok(catalog: &Catalog, target: &str) -> Value {
    let (status, body) = ask(catalog, target);
    assert_eq!(status, 200, "{target}: {body}");
    body
}

/// TensorBoard's rule, written out here apart from the board's code: the debiased EMA over
/// every point, a non-finite value its own, a constant series left as it is.
fn tensorboard_smoothing(values: &[f64], w: f64) -> Vec<f64> {
    let constant = values.iter().all(|&v| v == values[0]);
    let (mut last, mut n) = (0.0, 0);
    values
        .iter()
        .map(|&v| {
            if constant || !v.is_finite() {
                return v;
            }
            last = last * w + (1.0 - w) * v;
            n += 1;
            last / (1.0 - w.powi(n))
        })
        .collect()
}

fn number(v: &Value) -> f64 {
    v.as_f64()
        .unwrap_or_else(|| v.as_str().unwrap().parse().unwrap())
}

/// A skewed series: mostly 1 to 1.5, a spike of 300 every 997 points (float32 values).
fn skewed(n: i64) -> Vec<f64> {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    (0..n)
        .map(|i| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // As the event holds it: a float32.
            let v = 1.0 + (seed % 1000) as f64 / 2000.0 + if i % 997 == 0 { 300.0 } else { 0.0 };
            v as f32 as f64
        })
        .collect()
}

#[test]
fn smoothing_is_tensorboards_average_over_every_raw_point_at_each_bucket_s_last() {
    // The issue's case: a skewed 100 000-point series at 0.99 on a 1 000-pixel chart. An
    // average over each bucket's first, lowest, highest and last points counts every spike
    // about 25 times over; TensorBoard's, over the raw points, does not.
    let dir = tempfile::tempdir().unwrap();
    let values = skewed(100_000);
    let file = dir.path().join("r").join(FILE);
    append(
        &file,
        &records(
            values
                .iter()
                .enumerate()
                .map(|(i, &v)| (i as i64, vec![("return", v)])),
        ),
    );
    let catalog = Catalog::new(vec![dir.path().to_owned()]);
    let want = tensorboard_smoothing(&values, 0.99);
    let body = ok(
        &catalog,
        "/api/scalars?run=r&tag=return&width=1000&smoothing=0.99",
    );
    let buckets = body["buckets"].as_array().unwrap();
    assert_eq!(buckets.len(), 1000);
    for b in buckets {
        let last = b["last"][0].as_u64().unwrap() as usize;
        let got = number(&b["smoothed"]);
        assert!((got - want[last]).abs() <= 1e-9 * want[last].abs(), "{b}");
    }
    let end = number(&buckets[999]["smoothed"]);
    // The old way, for the record: the average over the buckets' extremes.
    let mut extremes = Vec::new();
    for b in buckets {
        let mut points: Vec<(i64, f64)> = ["first", "min", "max", "last"]
            .iter()
            .map(|k| (b[k][0].as_i64().unwrap(), number(&b[k][2])))
            .collect();
        points.sort_by_key(|p| p.0);
        points.dedup_by_key(|p| p.0);
        extremes.extend(points.iter().map(|p| p.1));
    }
    let old = *tensorboard_smoothing(&extremes, 0.99).last().unwrap();
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    eprintln!("at the end: {end} smoothed, {old} over the buckets' extremes; mean {mean}");
    assert!(end < 2.0 && (1.0..1.6).contains(&mean), "{end} {mean}");
    assert!(old > 4.0, "{old}");

    // A zoom's buckets carry the same average, not one restarted at its window.
    let zoom = ok(
        &catalog,
        "/api/scalars?run=r&tag=return&start=50000&end=50999&width=10&smoothing=0.99",
    );
    for b in zoom["buckets"].as_array().unwrap() {
        let last = b["last"][0].as_u64().unwrap() as usize;
        assert!((number(&b["smoothed"]) - want[last]).abs() < 1e-9, "{b}");
    }
    // A cursor's readout: the nearest raw point and its smoothed value.
    let near = ok(
        &catalog,
        "/api/nearest?run=r&tag=return&at=50000.2&smoothing=0.99",
    );
    assert_eq!(near["point"][0], 50_000);
    assert!(
        (number(&near["smoothed"]) - want[50_000]).abs() < 1e-9,
        "{near}"
    );
    // Without smoothing=, no smoothed value.
    let plain = ok(&catalog, "/api/scalars?run=r&tag=return&width=10");
    assert!(plain["buckets"][0].get("smoothed").is_none());
    for bad in ["1", "1.5", "-0.1", "nan", "x"] {
        let (status, body) = ask(
            &catalog,
            &format!("/api/scalars?run=r&tag=return&smoothing={bad}"),
        );
        assert_eq!(status, 400, "{bad}: {body}");
        let error = body["error"].as_str().unwrap();
        assert!(error.contains(&format!("smoothing={bad}")), "{error}");
    }
}

#[test]
fn a_followed_run_s_newest_buckets_carry_the_average_over_every_point_before_them() {
    // docs/contract/board.md "Live runs": a chart following a growing run asks with span=.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r").join(FILE);
    let values: Vec<f64> = (0..3_000)
        .map(|i| ((i * 7919) % 113) as f64 + f64::from(i == 2_500) * 1e3)
        .collect();
    let point = |i: usize| (i as i64, vec![("loss", values[i])]);
    append(&file, &records((0..1_000).map(point)));
    let catalog = Catalog::new(vec![dir.path().to_owned()]);
    let first = ok(
        &catalog,
        "/api/scalars?run=r&tag=loss&width=100&smoothing=0.6",
    );
    assert_eq!(first["total"], 1_000);
    for grown in [2_000, 3_000] {
        append(&file, &records((grown - 1_000..grown).map(point)));
        // The board reads a held run on at most once a second.
        std::thread::sleep(std::time::Duration::from_millis(1_100));
        let want = tensorboard_smoothing(&values[..grown], 0.6);
        let body = ok(
            &catalog,
            "/api/scalars?run=r&tag=loss&start=990&span=10&smoothing=0.6",
        );
        assert_eq!(body["total"], grown);
        let buckets = body["buckets"].as_array().unwrap();
        assert_eq!(buckets.len(), (grown - 990) / 10);
        for b in buckets {
            let last = b["last"][0].as_u64().unwrap() as usize;
            assert!((number(&b["smoothed"]) - want[last]).abs() < 1e-9, "{b}");
        }
    }
}

#[test]
fn the_board_smooths_as_tensorboard_s_own_chart_code_does() {
    // TensorBoard's line chart's `resmoothDataset`, cut out of the installed `tensorboard`
    // package's page bundle and run by node (tests/tb_smoothing.py); the test says so and
    // passes where either is missing (TALLY_TB_PYTHON names a Python that has tensorboard;
    // tests/python/test_board_smoothing.py runs the same check in the Python tests).
    // The workspace's virtualenv (`make venv` installs tensorboard) when there is one.
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python");
    let python = std::env::var("TALLY_TB_PYTHON").unwrap_or_else(|_| {
        let found = venv.is_file().then(|| venv.display().to_string());
        found.unwrap_or_else(|| "python3".to_owned())
    });
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tb_smoothing.py");
    let mut values = skewed(5_000);
    values[17] = f64::NAN;
    values[4_000] = f64::INFINITY;
    let dir = tempfile::tempdir().unwrap();
    append(
        &dir.path().join("r").join(FILE),
        &records(
            values
                .iter()
                .enumerate()
                .map(|(i, &v)| (i as i64, vec![("v", v)])),
        ),
    );
    let catalog = Catalog::new(vec![dir.path().to_owned()]);
    for weight in [0.0, 0.6, 0.95, 0.999] {
        let input = serde_json::json!({
            "weight": weight,
            "values": values.iter().map(|&v| if v.is_finite() { Value::from(v) } else { Value::Null }).collect::<Vec<_>>(),
        });
        let run = std::process::Command::new(&python)
            .arg(&script)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                child
                    .stdin
                    .take()
                    .unwrap()
                    .write_all(input.to_string().as_bytes())?;
                child.wait_with_output()
            });
        let tb: Vec<Option<f64>> = match run {
            Ok(out) if out.status.success() => serde_json::from_slice(&out.stdout).unwrap(),
            other => {
                eprintln!("TensorBoard's smoothing not run (no tensorboard or node): {other:?}");
                return;
            }
        };
        let body = ok(
            &catalog,
            &format!("/api/scalars?run=r&tag=v&width=16384&smoothing={weight}"),
        );
        let buckets = body["buckets"].as_array().unwrap();
        assert_eq!(buckets.len(), 5_000, "a bucket a point");
        for (i, b) in buckets.iter().enumerate() {
            let got = number(&b["smoothed"]);
            match tb[i] {
                Some(want) => assert!(
                    (got - want).abs() <= 1e-12 * want.abs().max(1.0),
                    "{weight} at {i}: {got} {want}"
                ),
                None => assert!(!got.is_finite(), "{weight} at {i}: {got}"),
            }
        }
    }
}

/// Runs `lr{lr}_s{seed}` of `return` climbing `scale` a step, each with its run_config.json.
fn sweep(dir: &Path) {
    for (lr, scale) in [("0.1", 1.0), ("0.01", 2.0)] {
        for seed in 0..3 {
            let run = dir.join(format!("lr{lr}_s{seed}"));
            append(
                &run.join(FILE),
                &records(
                    (0..=10).map(|s| (s * 10, vec![("return", scale * s as f64 + seed as f64)])),
                ),
            );
            std::fs::write(
                run.join("run_config.json"),
                format!(r#"{{"lr": {lr}, "seed": {seed}}}"#),
            )
            .unwrap();
        }
    }
}

#[test]
fn group_curves_carry_the_smoothed_mean_and_iqm_and_a_key_no_run_has_pools_nothing() {
    let dir = tempfile::tempdir().unwrap();
    sweep(dir.path());
    let catalog = Catalog::new(vec![dir.path().to_owned()]);
    let body = ok(
        &catalog,
        "/api/groups?tag=return&by=config.lr&width=11&smoothing=0.9",
    );
    let groups = body["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2);
    for g in groups {
        let curve = g["curve"].as_array().unwrap();
        for (field, smoothed) in [("mean", "smoothed"), ("iqm", "iqm_smoothed")] {
            let raw: Vec<f64> = curve.iter().map(|p| p[field].as_f64().unwrap()).collect();
            let want = tensorboard_smoothing(&raw, 0.9);
            for (p, w) in curve.iter().zip(&want) {
                assert!((p[smoothed].as_f64().unwrap() - w).abs() < 1e-9, "{p}");
            }
        }
    }
    let plain = ok(&catalog, "/api/groups?tag=return&by=config.lr&width=11");
    assert!(plain["groups"][0]["curve"][0].get("smoothed").is_none());
    let (status, body) = ask(&catalog, "/api/groups?tag=return&by=config.lr&smoothing=2");
    assert_eq!(status, 400, "{body}");

    // A key no run has: said, and no group pooling every run under a null key.
    let body = ok(&catalog, "/api/groups?tag=return&by=config.nope&width=11");
    assert_eq!(body["groups"], serde_json::json!([]), "{body}");
    let said = body["absent"][0].as_str().unwrap();
    assert!(
        said.contains("no run has configuration key \"config.nope\""),
        "{said}"
    );
    // One key present and one absent: grouped by the one present.
    let body = ok(
        &catalog,
        "/api/groups?tag=return&by=config.lr,config.nope&width=11",
    );
    assert_eq!(body["groups"].as_array().unwrap().len(), 2, "{body}");
    assert_eq!(body["absent"].as_array().unwrap().len(), 1, "{body}");
}

/// A run of `loss` at steps 0 to 99, and the byte offset of each record.
fn hundred_points(file: &Path) -> Vec<u64> {
    let mut offsets = Vec::new();
    let mut at = 0u64;
    for s in 0..100 {
        offsets.push(at);
        let bytes = records([(s, vec![("loss", s as f64)])]);
        at += bytes.len() as u64;
        append(file, &bytes);
    }
    offsets
}

#[test]
fn a_run_damaged_in_its_middle_shows_what_precedes_the_damage_and_names_it() {
    // docs/contract/board.md "The runs table": a flipped byte in record 40's payload (its
    // framing intact: that record is skipped) and in record 40's length (framing lost: the
    // file is read up to it), beside a sound run.
    let dir = tempfile::tempdir().unwrap();
    let sound = dir.path().join("sound").join(FILE);
    hundred_points(&sound);
    let payload = dir.path().join("payload").join(FILE);
    let offsets = hundred_points(&payload);
    let mut bytes = std::fs::read(&payload).unwrap();
    bytes[offsets[40] as usize + 14] ^= 0xff;
    std::fs::write(&payload, bytes).unwrap();
    let length = dir.path().join("length").join(FILE);
    hundred_points(&length);
    let mut bytes = std::fs::read(&length).unwrap();
    bytes[offsets[40] as usize] ^= 0x01;
    std::fs::write(&length, bytes).unwrap();

    let catalog = Catalog::new(vec![dir.path().to_owned()]);
    let table = ok(&catalog, "/api/runs");
    let row = |name: &str| {
        table["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["run"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(row("sound")["points"], 100);
    assert_eq!(row("sound")["damage"], serde_json::json!([]));
    for (run, file, points, last, detail) in [
        ("payload", &payload, 99, 99, "skipped: data crc mismatch"),
        (
            "length",
            &length,
            40,
            39,
            "the rest of the file is not read: length crc mismatch",
        ),
    ] {
        let r = row(run);
        assert!(r.get("error").is_none(), "{r}");
        assert_eq!(
            (r["points"].as_u64(), r["last_step"].as_i64()),
            (Some(points), Some(last)),
            "{r}"
        );
        let damage = r["damage"].as_array().unwrap();
        assert_eq!(damage.len(), 1, "{r}");
        assert_eq!(damage[0]["file"], file.display().to_string());
        assert_eq!(damage[0]["offset"], offsets[40]);
        assert_eq!(damage[0]["kind"], "corrupt_record");
        assert!(
            damage[0]["detail"].as_str().unwrap().starts_with(detail),
            "{r}"
        );
        // The chart: every readable point, the damage named beside the run's views.
        let chart = ok(
            &catalog,
            &format!("/api/scalars?run={run}&tag=loss&width=1000"),
        );
        assert_eq!(chart["total"], points, "{chart}");
        let steps: Vec<i64> = chart["buckets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["last"][0].as_i64().unwrap())
            .collect();
        assert!(!steps.contains(&40) && steps.contains(&39), "{steps:?}");
        assert_eq!(steps.contains(&99), run == "payload");
        let one = ok(&catalog, &format!("/api/run?run={run}"));
        assert_eq!(one["damage"], r["damage"], "{one}");
    }
}
