//! Every rank's system sample through the job's one collective (docs/contract/system-metrics.md
//! "Ranks", docs/contract/ranks.md "System metrics of every rank"): a rank's sample packed into
//! a fixed block of floats, and rank 0's names for the blocks it receives.
//!
//! Each rank fills only its own block of the summed vector (the others' are zero there), so
//! an absent value is NaN: the sum keeps it NaN and it is left out, never written as zero.

use super::tag::{gpu_tag, GPU_FIELDS, MACHINE, PROCESS};
use std::sync::{Arc, OnceLock};

/// The GPUs a rank's block has room for; a rank's further devices are left out.
pub const GPUS: usize = 4;
const HOST: usize = 0;
const PROC: usize = HOST + 1;
const MACH: usize = PROC + PROCESS.len();
const GPU0: usize = MACH + MACHINE.len();
/// A GPU's slots: its NVML index, then its values in the order of `GPU_FIELDS`.
const GPU_SLOT: usize = 1 + GPU_FIELDS.len();
/// Floats in one rank's block.
pub const SLOTS: usize = GPU0 + GPUS * GPU_SLOT;

/// Whether `tag` is another rank's (`system/rank<R>/...`), not rank 0's own.
pub fn is_rank_tag(tag: &str) -> bool {
    tag.strip_prefix("system/rank")
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
}

/// This machine, as a number every rank on it computes alike: a 48-bit hash (exact in an f64)
/// of the kernel's boot id, else of the host name. Ranks with the same id share the machine
/// tags' sources (`/proc/stat`, `/proc/meminfo`).
pub fn machine_id() -> f64 {
    static ID: OnceLock<f64> = OnceLock::new();
    *ID.get_or_init(|| {
        let name = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .ok()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(crate::host::hostname);
        // FNV-1a: stable across processes and builds, unlike std's hasher.
        let h = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        (h >> 16) as f64
    })
}

/// This rank's block from its newest sample (`values` as the sampler names them; None: no
/// sample yet): the machine's id, then every value or NaN.
pub fn encode(values: Option<&[(Arc<str>, f64)]>) -> [f64; SLOTS] {
    let mut block = [f64::NAN; SLOTS];
    block[HOST] = machine_id();
    let mut gpus: Vec<u32> = Vec::new();
    for (tag, v) in values.unwrap_or_default() {
        if let Some(i) = PROCESS.iter().position(|t| **t == **tag) {
            block[PROC + i] = *v;
        } else if let Some(i) = MACHINE.iter().position(|t| **t == **tag) {
            block[MACH + i] = *v;
        } else if let Some((index, field)) = parse_gpu(tag) {
            let g = match gpus.iter().position(|&n| n == index) {
                Some(g) => g,
                None if gpus.len() < GPUS => {
                    gpus.push(index);
                    block[GPU0 + (gpus.len() - 1) * GPU_SLOT] = f64::from(index);
                    gpus.len() - 1
                }
                None => continue,
            };
            block[GPU0 + g * GPU_SLOT + 1 + field] = *v;
        }
    }
    block
}

/// `system/gpu<N>/<field>`: (N, the field's position in `GPU_FIELDS`).
fn parse_gpu(tag: &str) -> Option<(u32, usize)> {
    let (n, field) = tag.strip_prefix("system/gpu")?.split_once('/')?;
    Some((
        n.parse().ok()?,
        GPU_FIELDS.iter().position(|f| *f == field)?,
    ))
}

/// Rank 0's tags for the summed vector's blocks (`blocks`: world size × [`SLOTS`] floats,
/// rank r's at r × SLOTS), rank 0's own machine being `own` (its [`machine_id`]). Rank 0's
/// block is skipped: its own sampler writes the unprefixed tags. Rank r's process and GPUs go
/// under `system/rank<r>/`; a machine other than rank 0's is written once, under the lowest
/// rank on it, as `system/rank<r>/machine/...`.
pub fn decode(blocks: &[f64], own: f64) -> Vec<(Arc<str>, f64)> {
    let mut out = Vec::new();
    let mut machines = vec![own];
    for (rank, b) in blocks.chunks_exact(SLOTS).enumerate().skip(1) {
        let prefix = format!("system/rank{rank}/");
        let mut put = |tag: &str, v: f64| {
            if v.is_finite() {
                let name = format!("{prefix}{}", tag.strip_prefix("system/").unwrap_or(tag));
                out.push((Arc::from(name), v));
            }
        };
        for (i, tag) in PROCESS.iter().enumerate() {
            put(tag, b[PROC + i]);
        }
        if b[HOST].is_finite() && !machines.contains(&b[HOST]) {
            machines.push(b[HOST]);
            for (i, tag) in MACHINE.iter().enumerate() {
                put(tag, b[MACH + i]);
            }
        }
        for g in b[GPU0..].chunks_exact(GPU_SLOT) {
            let index = g[0];
            if !(index.is_finite() && index >= 0.0 && index <= f64::from(u32::MAX)) {
                continue;
            }
            for (field, v) in GPU_FIELDS.iter().zip(&g[1..]) {
                put(&gpu_tag("system/", index as u32, field), *v);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(tags: &[(&str, f64)]) -> Vec<(Arc<str>, f64)> {
        tags.iter().map(|(t, v)| (Arc::from(*t), *v)).collect()
    }

    /// The sum the collective makes: each rank's block in its place, zeros elsewhere.
    fn summed(blocks: &[[f64; SLOTS]]) -> Vec<f64> {
        let mut v = vec![0.0; SLOTS * blocks.len()];
        for (r, b) in blocks.iter().enumerate().skip(1) {
            v[r * SLOTS..(r + 1) * SLOTS].copy_from_slice(b);
        }
        v
    }

    fn names(values: &[(Arc<str>, f64)]) -> Vec<&str> {
        values.iter().map(|(t, _)| &**t).collect()
    }

    #[test]
    fn a_rank_on_rank_zeros_machine_has_its_process_and_gpus_but_no_machine_tags() {
        let s = sample(&[
            ("system/process/rss_bytes", 5e8),
            ("system/machine/cpu_percent", 30.0),
            ("system/gpu3/util_percent", 80.0),
            ("system/gpu3/power_watts", 210.5),
        ]);
        let got = decode(&summed(&[[0.0; SLOTS], encode(Some(&s))]), machine_id());
        assert_eq!(
            got,
            sample(&[
                ("system/rank1/process/rss_bytes", 5e8),
                ("system/rank1/gpu3/util_percent", 80.0),
                ("system/rank1/gpu3/power_watts", 210.5),
            ])
        );
    }

    #[test]
    fn another_machine_is_written_once_under_its_lowest_rank() {
        let s = sample(&[("system/machine/load_1m", 2.5)]);
        let mut other = encode(Some(&s));
        other[HOST] = 7.0;
        let mut third = other;
        third[MACH + 3] = 9.0;
        let got = decode(&summed(&[[0.0; SLOTS], other, third]), 1.0);
        assert_eq!(names(&got), ["system/rank1/machine/load_1m"]);
        assert_eq!(got[0].1, 2.5);
    }

    #[test]
    fn no_sample_writes_nothing_and_every_name_is_a_valid_user_tag() {
        assert!(decode(&summed(&[[0.0; SLOTS], encode(None)]), machine_id()).is_empty());
        let mut all: Vec<(&str, f64)> = PROCESS.iter().chain(&MACHINE).map(|t| (*t, 1.0)).collect();
        let gpus: Vec<String> = (0..5)
            .flat_map(|n| GPU_FIELDS.map(|f| gpu_tag("system/", n, f)))
            .collect();
        all.extend(gpus.iter().map(|t| (t.as_str(), 1.0)));
        let mut other = encode(Some(&sample(&all)));
        other[HOST] = 7.0;
        let got = decode(&summed(&[[0.0; SLOTS], other]), 1.0);
        // Four GPUs fit; the fifth is left out.
        assert_eq!(
            got.len(),
            PROCESS.len() + MACHINE.len() + GPUS * GPU_FIELDS.len()
        );
        for (tag, _) in &got {
            assert!(tag.starts_with("system/rank1/"), "{tag}");
            tally_schema::lookup::validate_user_tag(tag).unwrap();
            assert!(!tally_schema::lookup::in_canonical_group(tag), "{tag}");
        }
    }
}
