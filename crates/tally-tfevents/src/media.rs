//! Image, video and audio summaries: PNG, animated GIF and 16-bit PCM WAV encoding.
//!
//! The summaries are the ones TensorBoard's Python writers produce: a `Summary.Image`
//! holding a PNG (or, for a video, an animated GIF looping forever) and a `Summary.Audio`
//! holding a WAV file.

use crate::proto::{summary, SummaryAudio, SummaryImage};
use prost::Message;
use std::collections::HashMap;

/// Why an image, video or audio clip cannot be encoded.
#[derive(Debug, thiserror::Error)]
pub enum MediaError {
    /// The pixel buffer does not match its declared shape.
    #[error("{what}: {got} bytes do not match the shape {shape:?}")]
    Shape {
        /// The argument.
        what: &'static str,
        /// Byte count received.
        got: usize,
        /// Declared shape.
        shape: Vec<usize>,
    },
    /// Channels other than 1 to 4, or dimensions a format cannot hold.
    #[error("{0}")]
    Unsupported(String),
    /// The encoder failed.
    #[error("{format} encoding failed: {message}")]
    Encode {
        /// `PNG` or `GIF`.
        format: &'static str,
        /// The encoder's message.
        message: String,
    },
}

fn check_len(what: &'static str, data: &[u8], shape: &[usize]) -> Result<(), MediaError> {
    if data.len() != shape.iter().product::<usize>() {
        return Err(MediaError::Shape {
            what,
            got: data.len(),
            shape: shape.to_vec(),
        });
    }
    Ok(())
}

fn dim(what: &str, v: usize, max: usize) -> Result<u32, MediaError> {
    if v == 0 || v > max {
        return Err(MediaError::Unsupported(format!(
            "{what} must be between 1 and {max} pixels, got {v}"
        )));
    }
    Ok(v as u32)
}

/// Encodes `pixels` (row-major height × width × channels, 8 bits each) as a PNG.
pub fn encode_png(
    pixels: &[u8],
    height: usize,
    width: usize,
    channels: usize,
) -> Result<Vec<u8>, MediaError> {
    check_len("image", pixels, &[height, width, channels])?;
    let color = match channels {
        1 => png::ColorType::Grayscale,
        2 => png::ColorType::GrayscaleAlpha,
        3 => png::ColorType::Rgb,
        4 => png::ColorType::Rgba,
        c => {
            return Err(MediaError::Unsupported(format!(
                "image: {c} channels; expected 1 (gray), 2 (gray+alpha), 3 (RGB) or 4 (RGBA)"
            )))
        }
    };
    let (h, w) = (
        dim("image height", height, i32::MAX as usize)?,
        dim("image width", width, i32::MAX as usize)?,
    );
    let err = |e: png::EncodingError| MediaError::Encode {
        format: "PNG",
        message: e.to_string(),
    };
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, w, h);
    enc.set_color(color);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().map_err(err)?;
    writer.write_image_data(pixels).map_err(err)?;
    writer.finish().map_err(err)?;
    Ok(out)
}

/// A `Summary.Value` holding the PNG of an 8-bit height × width × channels image.
pub fn image_value(
    tag: &str,
    pixels: &[u8],
    height: usize,
    width: usize,
    channels: usize,
) -> Result<summary::Value, MediaError> {
    let png = encode_png(pixels, height, width, channels)?;
    Ok(image_summary_value(tag, height, width, channels, png))
}

fn image_summary_value(
    tag: &str,
    height: usize,
    width: usize,
    channels: usize,
    encoded: Vec<u8>,
) -> summary::Value {
    let image = SummaryImage {
        height: height as i32,
        width: width as i32,
        colorspace: channels as i32,
        encoded_image_string: encoded,
    };
    summary::Value {
        tag: tag.to_string(),
        value: Some(summary::value::Value::Image(image.encode_to_vec())),
        ..Default::default()
    }
}

/// Encodes `frames` (frames × height × width × channels, 8 bits, 1 gray, 3 RGB or 4 RGBA
/// whose alpha is dropped) as an animated GIF looping forever at `fps`.
///
/// A frame with at most 256 colours gets its exact palette (lossless); one with more is
/// quantized (NeuQuant), since GIF holds 256 colours per frame.
pub fn encode_gif(frames: &[u8], shape: [usize; 4], fps: f64) -> Result<Vec<u8>, MediaError> {
    let [t, h, w, c] = shape;
    check_len("video", frames, &shape)?;
    if !matches!(c, 1 | 3 | 4) {
        return Err(MediaError::Unsupported(format!(
            "video: {c} channels; expected 1 (gray), 3 (RGB) or 4 (RGBA)"
        )));
    }
    if !(fps.is_finite() && fps > 0.0) {
        return Err(MediaError::Unsupported(format!(
            "fps must be a positive number, got {fps}"
        )));
    }
    let height = dim("video height", h, u16::MAX as usize)? as u16;
    let width = dim("video width", w, u16::MAX as usize)? as u16;
    if t == 0 {
        return Err(MediaError::Unsupported("video: no frames".into()));
    }
    // GIF delays are centiseconds.
    let delay = (100.0 / fps).round().clamp(1.0, f64::from(u16::MAX)) as u16;
    let err = |e: gif::EncodingError| MediaError::Encode {
        format: "GIF",
        message: e.to_string(),
    };
    let mut out = Vec::new();
    {
        let mut enc = gif::Encoder::new(&mut out, width, height, &[]).map_err(err)?;
        enc.set_repeat(gif::Repeat::Infinite).map_err(err)?;
        let mut rgb = Vec::with_capacity(h * w * 3);
        for frame in frames.chunks_exact(h * w * c) {
            rgb.clear();
            for px in frame.chunks_exact(c) {
                match c {
                    1 => rgb.extend_from_slice(&[px[0], px[0], px[0]]),
                    _ => rgb.extend_from_slice(&px[..3]),
                }
            }
            let mut f = palette_frame(width, height, &rgb)
                .unwrap_or_else(|| gif::Frame::from_rgb_speed(width, height, &rgb, 10));
            f.delay = delay;
            enc.write_frame(&f).map_err(err)?;
        }
    }
    Ok(out)
}

/// An exact-palette frame, or `None` when the frame has more than 256 colours.
fn palette_frame(width: u16, height: u16, rgb: &[u8]) -> Option<gif::Frame<'static>> {
    let mut index: HashMap<[u8; 3], u8> = HashMap::new();
    let mut palette = Vec::new();
    let mut pixels = Vec::with_capacity(rgb.len() / 3);
    for px in rgb.chunks_exact(3) {
        let key = [px[0], px[1], px[2]];
        let i = match index.get(&key) {
            Some(&i) => i,
            None => {
                if index.len() == 256 {
                    return None;
                }
                let i = index.len() as u8;
                index.insert(key, i);
                palette.extend_from_slice(&key);
                i
            }
        };
        pixels.push(i);
    }
    Some(gif::Frame::from_palette_pixels(
        width, height, pixels, palette, None,
    ))
}

/// A `Summary.Value` holding the animated GIF of a frames × height × width × channels video.
pub fn video_value(
    tag: &str,
    frames: &[u8],
    shape: [usize; 4],
    fps: f64,
) -> Result<summary::Value, MediaError> {
    let gif = encode_gif(frames, shape, fps)?;
    Ok(image_summary_value(tag, shape[1], shape[2], shape[3], gif))
}

/// Encodes interleaved samples in `[-1, 1]` (clipped) as a 16-bit PCM WAV file, converting
/// each sample as libsndfile does (tensorboardX's encoder): to 32 bits, then the top 16.
pub fn encode_wav(samples: &[f64], channels: u16, sample_rate: u32) -> Vec<u8> {
    let data_len = (samples.len() * 2) as u32;
    let block_align = channels * 2;
    let mut out = Vec::with_capacity(44 + samples.len() * 2);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data_len).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes()); // PCM
    out.extend_from_slice(&channels.to_le_bytes());
    out.extend_from_slice(&sample_rate.to_le_bytes());
    out.extend_from_slice(&(sample_rate * u32::from(block_align)).to_le_bytes());
    out.extend_from_slice(&block_align.to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data_len.to_le_bytes());
    for &s in samples {
        // NaN becomes silence (`as` maps it to 0).
        let v = (((s.clamp(-1.0, 1.0) * 2_147_483_647.0).round_ties_even() as i64) >> 16) as i16;
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

/// A `Summary.Value` holding the WAV of `samples` (frames × channels, interleaved).
pub fn audio_value(
    tag: &str,
    samples: &[f64],
    channels: usize,
    sample_rate: f64,
) -> Result<summary::Value, MediaError> {
    if !(1..=2).contains(&channels) || !samples.len().is_multiple_of(channels) {
        return Err(MediaError::Unsupported(format!(
            "snd_tensor: {channels} channels; expected 1 (mono) or 2 (stereo)"
        )));
    }
    if !(sample_rate.is_finite() && sample_rate >= 1.0 && sample_rate <= f64::from(u32::MAX)) {
        return Err(MediaError::Unsupported(format!(
            "sample_rate must be a positive number of samples per second, got {sample_rate}"
        )));
    }
    let rate = sample_rate.round() as u32;
    let audio = SummaryAudio {
        sample_rate: sample_rate as f32,
        num_channels: channels as i64,
        length_frames: (samples.len() / channels) as i64,
        encoded_audio_string: encode_wav(samples, channels as u16, rate),
        content_type: "audio/wav".to_string(),
    };
    Ok(summary::Value {
        tag: tag.to_string(),
        value: Some(summary::value::Value::Audio(audio.encode_to_vec())),
        ..Default::default()
    })
}
