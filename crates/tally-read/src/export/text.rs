//! The text formats' sink: each row a JSON line or a CSV line, each distinct tag's field
//! encoded once (non-finite values as Python's tokens NaN, Infinity, -Infinity).

use super::options::Format;
use super::sink::RowSink;
use crate::error::Error;
use std::io::Write;
use tally_tfevents::{Interner, ScalarRef};

/// Writes `v` as a JSON number (the shortest representation that round-trips, as serde_json
/// prints it), or one of the Python-compatible tokens for non-finite values.
fn write_json_number(out: &mut dyn Write, v: f64) -> std::io::Result<()> {
    if v.is_nan() {
        out.write_all(b"NaN")
    } else if v.is_infinite() {
        out.write_all(if v > 0.0 { b"Infinity" } else { b"-Infinity" })
    } else {
        // `from` keeps an I/O error's kind: a reader gone away stays a closed pipe.
        serde_json::to_writer(out, &v).map_err(std::io::Error::from)
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// Each distinct tag's encoded form, made once: rows repeat a few tags millions of times.
struct Encoded<T> {
    ids: Interner,
    encoded: Vec<T>,
    encode: fn(&str) -> T,
}

impl<T> Encoded<T> {
    fn new(encode: fn(&str) -> T) -> Self {
        Encoded {
            ids: Interner::new(),
            encoded: Vec::new(),
            encode,
        }
    }

    fn get(&mut self, s: &str) -> &T {
        let id = self.ids.id(s);
        if id == self.encoded.len() {
            self.encoded.push((self.encode)(s));
        }
        &self.encoded[id]
    }
}

fn json_string(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// A JSON line's start up to its run.
fn json_run(run: &str) -> String {
    format!("{{\"run\":{}", json_string(run))
}

/// Rows as JSON lines or CSV on a writer.
pub(super) struct TextSink<'a> {
    out: &'a mut dyn Write,
    format: Format,
    /// The current run's row start, and each tag's field, encoded once.
    run: String,
    tags: Encoded<String>,
}

impl<'a> TextSink<'a> {
    pub(super) fn new(out: &'a mut dyn Write, format: Format) -> Self {
        let tags = match format {
            Format::Csv => Encoded::new(csv_field),
            _ => Encoded::new(json_string),
        };
        TextSink {
            out,
            format,
            run: String::new(),
            tags,
        }
    }
}

impl RowSink for TextSink<'_> {
    fn header(&mut self) -> Result<(), Error> {
        if self.format == Format::Csv {
            writeln!(self.out, "run,tag,step,wall_time,value")?;
        }
        Ok(())
    }

    fn start_run(&mut self, run: &str) {
        self.run = match self.format {
            Format::Csv => csv_field(run),
            _ => json_run(run),
        };
    }

    fn row(&mut self, s: ScalarRef<'_>) -> Result<(), Error> {
        let out = &mut *self.out;
        out.write_all(self.run.as_bytes())?;
        match self.format {
            Format::Csv => {
                out.write_all(b",")?;
                out.write_all(self.tags.get(s.tag).as_bytes())?;
                writeln!(out, ",{},{},{}", s.step, s.wall_time, s.value)?;
            }
            _ => {
                out.write_all(b",\"tag\":")?;
                out.write_all(self.tags.get(s.tag).as_bytes())?;
                write!(out, ",\"step\":{},\"wall_time\":", s.step)?;
                write_json_number(out, s.wall_time)?;
                out.write_all(b",\"value\":")?;
                write_json_number(out, s.value)?;
                out.write_all(b"}\n")?;
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), Error> {
        Ok(self.out.flush()?)
    }
}
