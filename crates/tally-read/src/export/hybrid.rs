//! Parquet's RLE/bit-packed hybrid, in which dictionary pages' codes and RLE runs are written.

/// `v` as an unsigned LEB128 varint, as the hybrid writes its run headers.
pub(super) fn push_uleb128(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Parquet's RLE/bit-packed hybrid of `codes` at `width` bits: a run of 8 or more equal codes
/// as one RLE run, the rest bit-packed in groups of 8 (the last group padded with zeros; a
/// reader stops at the page's value count).
pub(super) fn encode_hybrid(codes: &[u32], width: u32, out: &mut Vec<u8>) {
    let value_bytes = width.div_ceil(8) as usize;
    let mut packed_from = 0;
    let mut i = 0;
    while i < codes.len() {
        // Codes unlike the next are runs of one, never RLE: eight are skipped at once.
        while codes.len() - i > 8 && no_two_alike(&codes[i..i + 9]) {
            i += 8;
        }
        let v = codes[i];
        let mut j = i + 1;
        while j < codes.len() && codes[j] == v {
            j += 1;
        }
        // A bit-packed run holds a multiple of 8 codes: the run's first codes may complete it.
        let fill = (8 - (i - packed_from) % 8) % 8;
        if j - i >= fill + 8 {
            bit_pack(&codes[packed_from..i + fill], width, out);
            push_uleb128(out, ((j - i - fill) as u64) << 1);
            out.extend_from_slice(&v.to_le_bytes()[..value_bytes]);
            packed_from = j;
        }
        i = j;
    }
    bit_pack(&codes[packed_from..], width, out);
}

/// Whether no code of `w` (nine codes) equals the one after it; branch-free, so it vectorises.
fn no_two_alike(w: &[u32]) -> bool {
    w[..8]
        .iter()
        .zip(&w[1..9])
        .fold(true, |all, (a, b)| all & (a != b))
}

fn bit_pack(codes: &[u32], width: u32, out: &mut Vec<u8>) {
    if codes.is_empty() {
        return;
    }
    let groups = codes.len().div_ceil(8);
    push_uleb128(out, ((groups as u64) << 1) | 1);
    let whole = codes.chunks_exact(8);
    let rest = whole.remainder();
    if width <= 16 {
        // Eight codes of at most 16 bits take `width` bytes: written in place, through a u64
        // when they fit one (cheaper shifts than a u128's).
        let w = width as usize;
        let at = out.len();
        out.resize(at + whole.len() * w, 0);
        let groups = out[at..].chunks_exact_mut(w).zip(whole);
        if width <= 8 {
            for (dst, group) in groups {
                let acc = (0..8).fold(0u64, |a, k| a | u64::from(group[k]) << (k * w));
                dst.copy_from_slice(&acc.to_le_bytes()[..w]);
            }
        } else {
            for (dst, group) in groups {
                let acc = (0..8).fold(0u128, |a, k| a | u128::from(group[k]) << (k * w));
                dst.copy_from_slice(&acc.to_le_bytes()[..w]);
            }
        }
    } else {
        bit_pack_groups(&codes[..codes.len() - rest.len()], width, out);
    }
    if !rest.is_empty() {
        let mut last = [0u32; 8];
        last[..rest.len()].copy_from_slice(rest);
        bit_pack_groups(&last, width, out);
    }
}

/// Whole groups of eight codes, bit-packed at any width up to 32.
fn bit_pack_groups(codes: &[u32], width: u32, out: &mut Vec<u8>) {
    let mut acc: u64 = 0;
    let mut bits = 0;
    for &c in codes {
        acc |= u64::from(c) << bits;
        bits += width;
        while bits >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            bits -= 8;
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes the hybrid as the format defines it, independently of the encoder's choices.
    fn decode(mut data: &[u8], width: u32, n: usize) -> Vec<u32> {
        let uleb = |d: &mut &[u8]| {
            let (mut v, mut shift) = (0u64, 0);
            loop {
                let b = d[0];
                *d = &d[1..];
                v |= u64::from(b & 0x7f) << shift;
                shift += 7;
                if b < 0x80 {
                    return v;
                }
            }
        };
        let mut out = Vec::new();
        while out.len() < n {
            let header = uleb(&mut data);
            if header & 1 == 0 {
                let bytes = width.div_ceil(8) as usize;
                let mut le = [0u8; 4];
                le[..bytes].copy_from_slice(&data[..bytes]);
                data = &data[bytes..];
                out.extend(std::iter::repeat_n(
                    u32::from_le_bytes(le),
                    (header >> 1) as usize,
                ));
            } else {
                let count = (header >> 1) as usize * 8;
                let mut bit = 0usize;
                for _ in 0..count {
                    let mut v = 0u32;
                    for b in 0..width as usize {
                        let at = bit + b;
                        v |= u32::from((data[at / 8] >> (at % 8)) & 1) << b;
                    }
                    bit += width as usize;
                    out.push(v);
                }
                data = &data[count * width as usize / 8..];
            }
        }
        assert!(data.is_empty(), "{} bytes left over", data.len());
        out.truncate(n);
        out
    }

    #[test]
    fn hybrid_round_trips_runs_cycles_and_wide_codes() {
        let mut cases: Vec<(Vec<u32>, u32)> = vec![
            (vec![0; 1], 1),
            (vec![0; 1000], 1),
            ((0..1000).map(|i| i % 10).collect(), 4),
            ((0..1003).map(|i| (i / 13) % 7).collect(), 3),
            ((0..777).map(|i| (i * 7919) % 300).collect(), 9),
            (
                (0..100)
                    .map(|i| if (5..=90).contains(&i) { 2 } else { 1 })
                    .collect(),
                2,
            ),
            (vec![70_000; 20], 17),
            ((0..203).map(|i| (i * 40_503) % 131_072).collect(), 17),
            ((0..77).map(|i| 65_535 - (i * 997) % 65_536).collect(), 16),
            ((0..1000).map(|i| u32::MAX - i % 3).collect(), 32),
        ];
        cases.push((
            (0..64)
                .map(|i| if i % 17 < 9 { 3 } else { i % 4 })
                .collect(),
            2,
        ));
        for (codes, width) in cases {
            let mut out = Vec::new();
            encode_hybrid(&codes, width, &mut out);
            assert_eq!(decode(&out, width, codes.len()), codes, "width {width}");
        }
    }

    #[test]
    fn long_runs_are_rle_runs() {
        let codes = vec![5u32; 100_000];
        let mut out = Vec::new();
        encode_hybrid(&codes, 3, &mut out);
        assert!(out.len() < 8, "{} bytes for one repeated code", out.len());
    }
}
