//! Where and on what a soak ran: the source tree (git, when the working directory is in a
//! repository), the GPUs `nvidia-smi` lists, software versions and `CUDA_VISIBLE_DEVICES`.
//! Each probe that cannot answer leaves its part empty or null: the context describes the run,
//! it never fails it.

use super::probe;
use serde_json::{Map, Value};
use std::path::Path;
use tally_schema::artifacts::{
    SoakContext, SoakEnvironment, SoakGpuDevice, SoakSoftware, SoakSource,
};

/// What `python` says when no `python3` is on PATH (the field is a required string).
pub const NO_PYTHON: &str = "unavailable";

/// Collect the context from the working directory `cwd`; `nvidia_smi` when it exists.
pub fn collect(cwd: &Path, nvidia_smi: Option<&Path>) -> SoakContext {
    let gpu_devices = nvidia_smi
        .and_then(|smi| {
            probe::output(
                smi,
                &[
                    "--query-gpu=index,uuid,name,driver_version",
                    "--format=csv,noheader",
                ],
                cwd,
                probe::CONTEXT_PROBE,
            )
        })
        .map(|t| parse_gpu_devices(&t))
        .unwrap_or_default();
    let mut software_extra = Map::new();
    // Every crate of the workspace carries the same version: this is tally's.
    software_extra.insert("tally".into(), Value::from(env!("CARGO_PKG_VERSION")));
    SoakContext {
        source: source(cwd),
        gpu_devices,
        software: SoakSoftware {
            python: output(
                "python3",
                &["-c", "import platform; print(platform.python_version())"],
                cwd,
            )
            .unwrap_or_else(|| NO_PYTHON.into()),
            torch: output(
                "python3",
                &["-c", "import torch; print(torch.__version__)"],
                cwd,
            ),
            extra: software_extra,
        },
        environment: SoakEnvironment {
            cuda_visible_devices: std::env::var("CUDA_VISIBLE_DEVICES").ok(),
            extra: Map::new(),
        },
        extra: Map::new(),
    }
}

/// A context that knows only the working directory.
pub fn bare(cwd: &Path) -> SoakContext {
    SoakContext {
        source: outside_git(cwd),
        gpu_devices: Vec::new(),
        software: SoakSoftware {
            python: NO_PYTHON.into(),
            torch: None,
            extra: Map::new(),
        },
        environment: SoakEnvironment {
            cuda_visible_devices: std::env::var("CUDA_VISIBLE_DEVICES").ok(),
            extra: Map::new(),
        },
        extra: Map::new(),
    }
}

fn outside_git(cwd: &Path) -> SoakSource {
    SoakSource {
        path: cwd.to_string_lossy().into_owned(),
        commit: None,
        branch: None,
        dirty_files: Vec::new(),
        extra: Map::new(),
    }
}

fn output(program: &str, args: &[&str], cwd: &Path) -> Option<String> {
    probe::output(program, args, cwd, probe::CONTEXT_PROBE)
}

/// The git facts of `cwd`: the repository's top level, HEAD, the branch (null when detached)
/// and the paths `git status` reports; outside a repository, `cwd` and nulls.
fn source(cwd: &Path) -> SoakSource {
    let git = |args: &[&str]| output("git", args, cwd);
    let Some(top) = git(&["rev-parse", "--show-toplevel"]) else {
        return outside_git(cwd);
    };
    let dirty_files = git(&["status", "--porcelain", "--untracked-files=no"])
        .map(|t| parse_porcelain(&t))
        .unwrap_or_default();
    SoakSource {
        path: top,
        commit: git(&["rev-parse", "HEAD"]),
        branch: git(&["symbolic-ref", "--short", "-q", "HEAD"]).filter(|b| !b.is_empty()),
        dirty_files,
        extra: Map::new(),
    }
}

/// The paths of `git status --porcelain` lines (`XY path`, or `XY old -> new` for renames).
pub fn parse_porcelain(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.get(3..))
        .map(|p| p.rsplit(" -> ").next().unwrap_or(p).to_owned())
        .collect()
}

/// `index, uuid, name, driver_version` CSV lines; lines that do not parse are left out.
pub fn parse_gpu_devices(text: &str) -> Vec<SoakGpuDevice> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').map(str::trim).collect();
            let [index, uuid, name, driver] = f.as_slice() else {
                return None;
            };
            Some(SoakGpuDevice {
                index: index.parse().ok()?,
                uuid: (*uuid).to_owned(),
                name: (*name).to_owned(),
                driver_version: (*driver).to_owned(),
                extra: Map::new(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porcelain_paths() {
        let t = " M crates/a.rs\nM  b.rs\nR  old.rs -> new.rs\n";
        assert_eq!(parse_porcelain(t), vec!["crates/a.rs", "b.rs", "new.rs"]);
    }

    #[test]
    fn gpu_device_lines() {
        let t =
            "0, GPU-1a2b, NVIDIA A100-SXM4-80GB, 550.54.15\n1, GPU-3c4d, NVIDIA H100, 550.54.15\n";
        let d = parse_gpu_devices(t);
        assert_eq!(d.len(), 2);
        assert_eq!(
            (
                d[1].index,
                d[1].uuid.as_str(),
                d[1].name.as_str(),
                d[1].driver_version.as_str()
            ),
            (1, "GPU-3c4d", "NVIDIA H100", "550.54.15")
        );
        assert!(parse_gpu_devices("garbage\n").is_empty());
    }
}
