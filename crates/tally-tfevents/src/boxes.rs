//! Bounding boxes drawn onto an image, for `add_image_with_boxes` (docs/contract/integrations.md,
//! "The writer's API, method by method").
//!
//! The drawing follows torch's and tensorboardX's writers, so an image reads the same in
//! TensorBoard whichever wrote it: each box a red outline two pixels wide, its label in black
//! on a red band inside the box's bottom-left corner. The outline covers the same pixels as
//! theirs for whole-pixel boxes; labels use an 8 × 8 bitmap font, not their TrueType one.

use crate::media::{image_value, MediaError};
use crate::proto::summary;

const RED: [u8; 3] = [255, 0, 0];
const BLACK: [u8; 3] = [0, 0, 0];
/// Glyph cell of the label font, in pixels.
const GLYPH: i64 = 8;
/// Space between a label's band and its text: 5 % of the text height, rounded up.
const MARGIN: i64 = 1;

/// One box, `[xmin, ymin, xmax, ymax]` in pixels of the image as given.
pub type Box4 = [f64; 4];

/// An RGB or RGBA image being drawn on; pixels outside it are skipped.
struct Canvas<'a> {
    pixels: &'a mut [u8],
    height: i64,
    width: i64,
    channels: usize,
}

impl Canvas<'_> {
    /// Paints the inclusive rectangle `x0..=x1` × `y0..=y1`, clipped to the image.
    fn fill(&mut self, (x0, y0): (i64, i64), (x1, y1): (i64, i64), rgb: [u8; 3]) {
        for y in y0.max(0)..=y1.min(self.height - 1) {
            for x in x0.max(0)..=x1.min(self.width - 1) {
                self.paint(x, y, rgb);
            }
        }
    }

    fn paint(&mut self, x: i64, y: i64, rgb: [u8; 3]) {
        let at = (y as usize * self.width as usize + x as usize) * self.channels;
        self.pixels[at..at + 3].copy_from_slice(&rgb);
        if self.channels == 4 {
            self.pixels[at + 3] = 255;
        }
    }

    /// A two-pixel outline: the rows above the top edge and below the bottom one, the columns
    /// inside the left and right edges (the pixels torch's and tensorboardX's writers cover).
    fn outline(&mut self, (l, t, r, b): (i64, i64, i64, i64)) {
        self.fill((l, t - 1), (r, t), RED);
        self.fill((l, b), (r, b + 1), RED);
        self.fill((l, t - 1), (l + 1, b + 1), RED);
        self.fill((r - 1, t - 1), (r, b + 1), RED);
    }

    /// The label on a red band whose bottom-left corner is the box's.
    fn label(&mut self, (l, b): (i64, i64), text: &str) {
        let glyphs: Vec<[u8; 8]> = text.chars().map(glyph).collect();
        let width = GLYPH * glyphs.len() as i64;
        let top = b - GLYPH - 2 * MARGIN;
        self.fill((l, top), (l + width, b), RED);
        for (i, rows) in glyphs.iter().enumerate() {
            let x0 = l + MARGIN + GLYPH * i as i64;
            for (dy, bits) in rows.iter().enumerate() {
                for dx in 0..GLYPH {
                    let (x, y) = (x0 + dx, top + MARGIN + dy as i64);
                    let inside = (0..self.width).contains(&x) && (0..self.height).contains(&y);
                    if bits & (1 << dx) != 0 && inside {
                        self.paint(x, y, BLACK);
                    }
                }
            }
        }
    }
}

/// A character's 8 rows (bit 0 leftmost); outside ASCII, a question mark.
fn glyph(c: char) -> [u8; 8] {
    let table = &font8x8::legacy::BASIC_LEGACY;
    table
        .get(c as usize)
        .copied()
        .unwrap_or(table[b'?' as usize])
}

/// Draws `boxes` (and `labels`, one per box) onto `pixels` (height × width × 3 or 4).
/// Corners are rounded to the nearest pixel and may lie outside the image (the part inside is
/// drawn); `xmin > xmax` or `ymin > ymax` is the same box with its corners swapped.
pub fn draw_boxes(
    pixels: &mut [u8],
    (height, width, channels): (usize, usize, usize),
    boxes: &[Box4],
    labels: Option<&[String]>,
) -> Result<(), MediaError> {
    if pixels.len() != height * width * channels {
        return Err(MediaError::Shape {
            what: "image",
            got: pixels.len(),
            shape: vec![height, width, channels],
        });
    }
    if !matches!(channels, 3 | 4) {
        return Err(MediaError::Unsupported(format!(
            "image with boxes: {channels} channels; expected 3 (RGB) or 4 (RGBA)"
        )));
    }
    if let Some(labels) = labels {
        if labels.len() != boxes.len() {
            return Err(MediaError::Unsupported(format!(
                "image with boxes: {} labels for {} boxes; give one label per box",
                labels.len(),
                boxes.len()
            )));
        }
    }
    for (i, b) in boxes.iter().enumerate() {
        if let Some(v) = b.iter().find(|v| !v.is_finite()) {
            return Err(MediaError::Unsupported(format!(
                "image with boxes: box {i} has the coordinate {v}; boxes are [xmin, ymin, xmax, ymax] in pixels"
            )));
        }
    }
    let mut canvas = Canvas {
        pixels,
        height: height as i64,
        width: width as i64,
        channels,
    };
    for (i, b) in boxes.iter().enumerate() {
        // Saturating casts: a corner far outside the image is only clipped.
        let [x0, y0, x1, y1] = b.map(|v| v.round() as i64);
        let (l, r) = (x0.min(x1), x0.max(x1));
        let (t, bottom) = (y0.min(y1), y0.max(y1));
        canvas.outline((l, t, r, bottom));
        if let Some(text) = labels.map(|l| l[i].as_str()).filter(|s| !s.is_empty()) {
            canvas.label((l, bottom), text);
        }
    }
    Ok(())
}

/// A `Summary.Value` holding the PNG of an image with `boxes` drawn on it.
pub fn image_with_boxes_value(
    tag: &str,
    mut pixels: Vec<u8>,
    shape: (usize, usize, usize),
    boxes: &[Box4],
    labels: Option<&[String]>,
) -> Result<summary::Value, MediaError> {
    draw_boxes(&mut pixels, shape, boxes, labels)?;
    image_value(tag, &pixels, shape.0, shape.1, shape.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mask(px: &[u8], w: usize, rgb: [u8; 3]) -> Vec<String> {
        px.chunks(3 * w)
            .map(|row| {
                row.chunks(3)
                    .map(|p| if p == rgb { '1' } else { '0' })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn outline_covers_the_pixels_torch_covers() {
        // What torch's writer (through Pillow) draws for the box (2, 2)-(6, 5) on 8 × 9.
        let want = [
            "000000000",
            "001111100",
            "001111100",
            "001101100",
            "001101100",
            "001111100",
            "001111100",
            "000000000",
        ];
        let mut px = vec![0u8; 8 * 9 * 3];
        draw_boxes(&mut px, (8, 9, 3), &[[2.0, 2.0, 6.0, 5.0]], None).unwrap();
        assert_eq!(mask(&px, 9, RED), want);
        // Corners given the other way round are the same box.
        let mut swapped = vec![0u8; 8 * 9 * 3];
        draw_boxes(&mut swapped, (8, 9, 3), &[[6.0, 5.0, 2.0, 2.0]], None).unwrap();
        assert_eq!(swapped, px);
    }

    #[test]
    fn label_is_black_text_on_a_red_band_above_the_bottom_edge() {
        let (h, w) = (40, 40);
        let mut px = vec![0u8; h * w * 3];
        let labels = ["A".to_string()];
        draw_boxes(&mut px, (h, w, 3), &[[5.0, 5.0, 30.0, 30.0]], Some(&labels)).unwrap();
        let red = mask(&px, w, RED);
        let black = mask(&px, w, BLACK);
        // The band spans rows 20..=30 (8 text rows and a margin each side) and columns 5..=13.
        for y in 20..=30 {
            for x in 5..=13 {
                let is_ink = black[y].as_bytes()[x] == b'1';
                assert!(
                    red[y].as_bytes()[x] == b'1' || is_ink,
                    "({x}, {y}) neither band nor ink"
                );
            }
        }
        // Ink ('A') only inside the band, and some of it.
        let ink: Vec<(usize, usize)> = (0..h)
            .flat_map(|y| (0..w).map(move |x| (x, y)))
            .filter(|&(x, y)| {
                black[y].as_bytes()[x] == b'1' && (20..=30).contains(&y) && (5..=13).contains(&x)
            })
            .collect();
        assert!(ink.len() > 10, "the glyph drew {} pixels", ink.len());
        // Above the band, inside the box, nothing was painted.
        assert!(px[(15 * w + 15) * 3..][..3] == [0, 0, 0]);
        assert!(red[15].as_bytes()[15] == b'0');
    }

    #[test]
    fn boxes_outside_the_image_are_clipped_and_rgba_stays_opaque() {
        let mut px = vec![0u8; 6 * 6 * 4];
        let far = [[-1e12, -5.0, 1e12, 100.0], [-20.0, -20.0, -10.0, -10.0]];
        let labels = ["left".to_string(), "é".to_string()];
        draw_boxes(&mut px, (6, 6, 4), &far, Some(&labels)).unwrap();
        // Every edge and both label bands lie outside the 6 × 6 image.
        assert!(px.chunks(4).all(|p| p == [0, 0, 0, 0]));
        let mut px = vec![0u8; 6 * 6 * 4];
        draw_boxes(&mut px, (6, 6, 4), &[[1.0, 1.0, 4.0, 4.0]], None).unwrap();
        assert_eq!(&px[(6 + 1) * 4..][..4], &[255, 0, 0, 255]);
    }

    #[test]
    fn bad_inputs_are_named() {
        let mut px = vec![0u8; 4 * 4 * 3];
        let two = [[0.0, 0.0, 1.0, 1.0]; 2];
        let err = draw_boxes(&mut px, (4, 4, 3), &two, Some(&["a".to_string()])).unwrap_err();
        assert!(err.to_string().contains("1 labels for 2 boxes"), "{err}");
        let err = draw_boxes(&mut px, (4, 4, 3), &[[0.0, f64::NAN, 1.0, 1.0]], None).unwrap_err();
        assert!(
            err.to_string().contains("box 0 has the coordinate NaN"),
            "{err}"
        );
        let err = draw_boxes(&mut [0u8; 16], (4, 4, 1), &[], None).unwrap_err();
        assert!(err.to_string().contains("1 channels"), "{err}");
        let err = draw_boxes(&mut px, (4, 5, 3), &[], None).unwrap_err();
        assert!(err.to_string().contains("48 bytes"), "{err}");
    }
}
