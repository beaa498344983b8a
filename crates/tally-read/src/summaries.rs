//! A run's summaries other than scalars, as a viewer shows them (`docs/contract/board.md`
//! "One run's views"): every text entry per tag (the newest [`TEXT_KEPT`]), the newest
//! [`IMAGES_KEPT`] images and [`HISTOGRAMS_KEPT`] histograms per tag (a viewer's step slider
//! and its histograms over time). Read on from where each file's reading stopped, as
//! [`crate::live::LiveRun`] reads scalars, so a growing run costs only its new bytes.
//!
//! Both encodings writers use are read: the classic `Summary.Value` fields (`image`, `histo`:
//! torch, tensorboardX, tally) and the tensors of TensorBoard's `images`, `histograms` and
//! `text` plugins (TensorFlow 2 writers).

use crate::error::Error;
use crate::files::run_event_files;
use prost::Message;
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use tally_tfevents::proto::summary::value::Value as Payload;
use tally_tfevents::proto::{event, summary, HistogramProto, SummaryImage, TensorProto};
use tally_tfevents::{open_event_file_at, OnCorruption};

/// Text entries kept per tag: a run that logs text every step keeps its newest.
pub const TEXT_KEPT: usize = 100;

/// Images kept per tag, the newest (TensorBoard keeps a reservoir of 10 by default).
pub const IMAGES_KEPT: usize = 50;

/// Histograms kept per tag, the newest (TensorBoard keeps a reservoir of 500 by default).
pub const HISTOGRAMS_KEPT: usize = 500;

/// One text summary.
#[derive(Debug, Clone, PartialEq)]
pub struct Text {
    /// The event's step.
    pub step: i64,
    /// The event's wall time, seconds since the epoch.
    pub wall_time: f64,
    /// The text; a 2-D string tensor (a table) as Markdown table rows.
    pub text: String,
}

/// One image summary: the encoded file as written.
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    /// The event's step.
    pub step: i64,
    /// The event's wall time.
    pub wall_time: f64,
    /// Width in pixels, as the writer recorded it.
    pub width: u32,
    /// Height in pixels, as the writer recorded it.
    pub height: u32,
    /// The media type the bytes start with: `image/png`, `image/gif`, `image/jpeg`, else
    /// `application/octet-stream`.
    pub mime: &'static str,
    /// The encoded image.
    pub bytes: Vec<u8>,
}

/// One histogram summary, as TensorBoard's histograms plugin reads it: buckets of `[left,
/// right, count]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    /// The event's step.
    pub step: i64,
    /// The event's wall time.
    pub wall_time: f64,
    /// `[left, right, count]` per bucket.
    pub buckets: Vec<[f64; 3]>,
}

/// A run's text, image and histogram summaries, as read so far.
#[derive(Debug, Default)]
pub struct RunSummaries {
    dir: PathBuf,
    /// Each file's next record boundary, in run order.
    offsets: Vec<(PathBuf, u64)>,
    /// By tag, oldest first.
    pub text: BTreeMap<String, VecDeque<Text>>,
    /// By tag, the newest [`IMAGES_KEPT`] in run order, oldest first.
    pub images: BTreeMap<String, VecDeque<Image>>,
    /// By tag, the newest [`HISTOGRAMS_KEPT`] in run order, oldest first.
    pub histograms: BTreeMap<String, VecDeque<Histogram>>,
}

impl RunSummaries {
    /// Reads the run in `dir` (its own event files, `files::run_event_files`).
    pub fn open(dir: &Path) -> Result<Self, Error> {
        let mut run = RunSummaries {
            dir: dir.to_owned(),
            ..RunSummaries::default()
        };
        run.refresh()?;
        Ok(run)
    }

    /// Reads what the run's files gained since the last refresh. A corrupt record is passed
    /// over (the scalar readers report it); a partial record at a file's end is read again
    /// next time. A file that vanished reads the run again.
    pub fn refresh(&mut self) -> Result<(), Error> {
        let files = run_event_files(&self.dir)?;
        if !self
            .offsets
            .iter()
            .zip(&files)
            .all(|((held, _), file)| held == file)
            || self.offsets.len() > files.len()
        {
            *self = RunSummaries {
                dir: self.dir.clone(),
                ..RunSummaries::default()
            };
        }
        for (i, file) in files.iter().enumerate() {
            if i == self.offsets.len() {
                self.offsets.push((file.clone(), 0));
            }
            let offset = self.offsets[i].1;
            if std::fs::metadata(file).map(|m| m.len()).unwrap_or(0) <= offset {
                continue;
            }
            let mut events =
                open_event_file_at(file, offset)?.with_on_corruption(OnCorruption::Skip);
            while let Some(event) = events.read_event()? {
                if let Some(event::What::Summary(s)) = event.what {
                    for value in s.value {
                        self.take(event.step, event.wall_time, value);
                    }
                }
            }
            self.offsets[i].1 = events.records().position();
        }
        Ok(())
    }

    fn take(&mut self, step: i64, wall_time: f64, value: summary::Value) {
        let plugin = value
            .metadata
            .as_ref()
            .and_then(|m| m.plugin_data.as_ref())
            .map_or("", |p| p.plugin_name.as_str());
        match (value.value, plugin) {
            (Some(Payload::Image(bytes)), _) => {
                if let Ok(image) = SummaryImage::decode(bytes.as_slice()) {
                    let (width, height) = (image.width.max(0) as u32, image.height.max(0) as u32);
                    let bytes = image.encoded_image_string;
                    keep(
                        self.images.entry(value.tag).or_default(),
                        IMAGES_KEPT,
                        Image {
                            step,
                            wall_time,
                            width,
                            height,
                            mime: mime_of(&bytes),
                            bytes,
                        },
                    );
                }
            }
            (Some(Payload::Tensor(t)), "images") => {
                // [width, height, image, ...]: the first sample is shown.
                if let [w, h, first, ..] = t.string_val.as_slice() {
                    let number =
                        |b: &[u8]| std::str::from_utf8(b).ok().and_then(|s| s.parse().ok());
                    let bytes = first.clone();
                    keep(
                        self.images.entry(value.tag).or_default(),
                        IMAGES_KEPT,
                        Image {
                            step,
                            wall_time,
                            width: number(w).unwrap_or(0),
                            height: number(h).unwrap_or(0),
                            mime: mime_of(&bytes),
                            bytes,
                        },
                    );
                }
            }
            (Some(Payload::Histo(bytes)), _) => {
                if let Ok(h) = HistogramProto::decode(bytes.as_slice()) {
                    let buckets = histo_buckets(&h);
                    keep(
                        self.histograms.entry(value.tag).or_default(),
                        HISTOGRAMS_KEPT,
                        Histogram {
                            step,
                            wall_time,
                            buckets,
                        },
                    );
                }
            }
            (Some(Payload::Tensor(t)), "histograms") => {
                if let Some(buckets) = tensor_buckets(&t) {
                    keep(
                        self.histograms.entry(value.tag).or_default(),
                        HISTOGRAMS_KEPT,
                        Histogram {
                            step,
                            wall_time,
                            buckets,
                        },
                    );
                }
            }
            (Some(Payload::Tensor(t)), "text") => {
                let entries = self.text.entry(value.tag).or_default();
                entries.push_back(Text {
                    step,
                    wall_time,
                    text: tally_tfevents::plugin_summaries::tensor_text(&t),
                });
                if entries.len() > TEXT_KEPT {
                    entries.pop_front();
                }
            }
            _ => {}
        }
    }
}

/// Appends `item`, letting the oldest go past `kept`.
fn keep<T>(held: &mut VecDeque<T>, kept: usize, item: T) {
    held.push_back(item);
    if held.len() > kept {
        held.pop_front();
    }
}

/// The media type an encoded image's first bytes say.
fn mime_of(bytes: &[u8]) -> &'static str {
    if bytes.starts_with(b"\x89PNG") {
        "image/png"
    } else if bytes.starts_with(b"GIF8") {
        "image/gif"
    } else if bytes.starts_with(b"\xFF\xD8") {
        "image/jpeg"
    } else {
        "application/octet-stream"
    }
}

/// A `HistogramProto`'s buckets as TensorBoard reads them: the first opens at `min`, the
/// last closes at `max`, each other spans from the previous limit to its own.
fn histo_buckets(h: &HistogramProto) -> Vec<[f64; 3]> {
    let n = h.bucket.len().min(h.bucket_limit.len());
    (0..n)
        .map(|i| {
            let left = if i == 0 { h.min } else { h.bucket_limit[i - 1] };
            let right = if i + 1 == n { h.max } else { h.bucket_limit[i] };
            [left, right, h.bucket[i]]
        })
        .collect()
}

/// The histograms plugin's tensor: `k × 3` doubles (or floats), `[left, right, count]` rows.
fn tensor_buckets(t: &TensorProto) -> Option<Vec<[f64; 3]>> {
    let values: Vec<f64> = if !t.tensor_content.is_empty() {
        match t.dtype {
            2 => t
                .tensor_content
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
                .collect(),
            1 => t
                .tensor_content
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64)
                .collect(),
            _ => return None,
        }
    } else if !t.double_val.is_empty() {
        t.double_val.clone()
    } else {
        t.float_val.iter().map(|&v| v as f64).collect()
    };
    values
        .len()
        .is_multiple_of(3)
        .then(|| values.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use tally_tfevents::proto::{
        summary_metadata, tensor_shape_proto, SummaryMetadata, TensorShapeProto,
    };
    use tally_tfevents::{
        encode_summary, encode_summary_event, histogram_value, image_value, text_value,
        RecordWriter,
    };

    fn record(step: i64, values: Vec<summary::Value>) -> Vec<u8> {
        let event = encode_summary_event(Some(step), 100.0 + step as f64, &encode_summary(values));
        let mut w = RecordWriter::new(Vec::new());
        w.write_record(&event).unwrap();
        w.into_inner()
    }

    fn append(path: &Path, bytes: &[u8]) {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        f.write_all(bytes).unwrap();
    }

    fn plugin_tensor(tag: &str, plugin: &str, tensor: TensorProto) -> summary::Value {
        summary::Value {
            tag: tag.into(),
            metadata: Some(SummaryMetadata {
                plugin_data: Some(summary_metadata::PluginData {
                    plugin_name: plugin.into(),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            value: Some(Payload::Tensor(Box::new(tensor))),
            ..Default::default()
        }
    }

    #[test]
    fn text_images_and_histograms_of_both_encodings_are_read_the_newest_kept() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("events.out.tfevents.1.host");
        let hist = |step: f64| HistogramProto {
            min: 0.0,
            max: 3.0 + step,
            num: 6.0,
            bucket_limit: vec![1.0, 2.0, f64::MAX],
            bucket: vec![1.0, 2.0, 3.0],
            ..Default::default()
        };
        append(
            &file,
            &record(
                1,
                vec![text_value("hp", "lr 0.1"), histogram_value("w", &hist(1.0))],
            ),
        );
        append(
            &file,
            &record(
                2,
                vec![image_value("frame", &[255, 0, 0], 1, 1, 3).unwrap()],
            ),
        );
        let mut run = RunSummaries::open(dir.path()).unwrap();
        // torch's add_text names the tag `<tag>/text_summary`; it is kept as written.
        assert_eq!(
            run.text["hp/text_summary"]
                .iter()
                .map(|t| t.text.as_str())
                .collect::<Vec<_>>(),
            ["lr 0.1"]
        );
        assert_eq!(
            run.histograms["w"].back().unwrap().buckets,
            vec![[0.0, 1.0, 1.0], [1.0, 2.0, 2.0], [2.0, 4.0, 3.0]]
        );
        let image = run.images["frame"].back().unwrap();
        assert_eq!(
            (image.step, image.width, image.height, image.mime),
            (2, 1, 1, "image/png")
        );

        // Read on: TensorFlow 2's plugin tensors, and a newer histogram replacing the older.
        let table = TensorProto {
            dtype: 7,
            tensor_shape: Some(TensorShapeProto {
                dim: vec![
                    tensor_shape_proto::Dim {
                        size: 2,
                        ..Default::default()
                    };
                    2
                ],
                ..Default::default()
            }),
            string_val: ["k", "v", "lr", "0.1"]
                .iter()
                .map(|s| s.as_bytes().to_vec())
                .collect(),
            ..Default::default()
        };
        let tf_hist = TensorProto {
            dtype: 2,
            double_val: vec![0.0, 0.5, 7.0, 0.5, 1.0, 9.0],
            ..Default::default()
        };
        let gif = TensorProto {
            dtype: 7,
            string_val: vec![b"4".to_vec(), b"3".to_vec(), b"GIF89a...".to_vec()],
            ..Default::default()
        };
        append(
            &file,
            &record(
                3,
                vec![
                    plugin_tensor("hp/text_summary", "text", table),
                    plugin_tensor("w", "histograms", tf_hist),
                    plugin_tensor("clip", "images", gif),
                ],
            ),
        );
        // A partial record waits for the next refresh.
        let partial = record(4, vec![text_value("hp", "later")]);
        append(&file, &partial[..partial.len() - 3]);
        run.refresh().unwrap();
        let texts: Vec<_> = run.text["hp/text_summary"]
            .iter()
            .map(|t| (t.step, t.text.as_str()))
            .collect();
        assert_eq!(texts, [(1, "lr 0.1"), (3, "| k | v |\n| lr | 0.1 |")]);
        assert_eq!(run.histograms["w"].back().unwrap().step, 3);
        // The older histogram is kept too, for the histograms over time.
        assert_eq!(
            run.histograms["w"]
                .iter()
                .map(|h| h.step)
                .collect::<Vec<_>>(),
            [1, 3]
        );
        assert_eq!(
            run.histograms["w"].back().unwrap().buckets,
            vec![[0.0, 0.5, 7.0], [0.5, 1.0, 9.0]]
        );
        let clip = run.images["clip"].back().unwrap();
        assert_eq!((clip.width, clip.height, clip.mime), (4, 3, "image/gif"));
        append(&file, &partial[partial.len() - 3..]);
        run.refresh().unwrap();
        assert_eq!(run.text["hp/text_summary"].back().unwrap().text, "later");
    }

    #[test]
    fn text_logged_every_step_keeps_the_newest() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("events.out.tfevents.1.host");
        for step in 0..(TEXT_KEPT as i64 + 5) {
            append(
                &file,
                &record(step, vec![text_value("log", &format!("line {step}"))]),
            );
        }
        let run = RunSummaries::open(dir.path()).unwrap();
        let log = &run.text["log/text_summary"];
        assert_eq!(log.len(), TEXT_KEPT);
        assert_eq!(log.front().unwrap().step, 5);
    }
}
