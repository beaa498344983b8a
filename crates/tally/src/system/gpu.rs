//! Each GPU through NVIDIA's NVML, loaded at run time (docs/contract/system-metrics.md "GPUs"):
//! no driver, no library or no device leaves the GPU tags out, with one note saying why.
//! Built only with the `nvml` feature; without it there is never a GPU to sample.

use std::sync::Arc;

/// Which GPUs a sampler reads.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Devices {
    /// Every GPU NVML lists (a logger's sampler).
    #[default]
    All,
    /// Only these, each an NVML index (`"1"`) or UUID (`"GPU-…"`): a rank's own devices
    /// (docs/contract/system-metrics.md "Ranks"). One NVML does not know is left out, and
    /// no note is said.
    Only(Vec<String>),
}

/// One GPU: its NVML index and its tags, named once, in the order of
/// [`super::tag::GPU_FIELDS`].
#[cfg_attr(not(feature = "nvml"), allow(dead_code))]
struct Device {
    index: u32,
    tags: [Arc<str>; 7],
}

#[cfg_attr(not(feature = "nvml"), allow(dead_code))]
impl Device {
    fn new(index: u32) -> Device {
        Device {
            index,
            tags: super::tag::GPU_FIELDS
                .map(|f| Arc::from(super::tag::gpu_tag("system/", index, f))),
        }
    }
}

/// The GPUs sampled, or none.
pub struct Gpus {
    #[cfg(feature = "nvml")]
    nvml: Option<nvml_wrapper::Nvml>,
    devices: Vec<Device>,
}

impl Gpus {
    /// Load NVML and list the GPUs `which` names, each named by its NVML index
    /// (docs/contract/system-metrics.md "GPUs"). Returns the note to say once when there is
    /// none (only for [`Devices::All`]).
    pub fn open(which: &Devices) -> (Gpus, Option<String>) {
        let quiet = |note: String| (*which == Devices::All).then_some(note);
        #[cfg(feature = "nvml")]
        {
            match nvml_wrapper::Nvml::init() {
                Ok(nvml) => {
                    let indices: Vec<u32> = match which {
                        Devices::All => (0..nvml.device_count().unwrap_or(0)).collect(),
                        Devices::Only(names) => names
                            .iter()
                            .filter_map(|n| match n.trim().parse::<u32>() {
                                Ok(i) => nvml.device_by_index(i).ok().map(|_| i),
                                Err(_) => nvml.device_by_uuid(n.trim()).ok()?.index().ok(),
                            })
                            .collect(),
                    };
                    let note = match indices.is_empty() {
                        true => quiet("NVML lists no GPU: no GPU tags".to_owned()),
                        false => None,
                    };
                    let devices = indices.into_iter().map(Device::new).collect();
                    (
                        Gpus {
                            nvml: Some(nvml),
                            devices,
                        },
                        note,
                    )
                }
                Err(e) => (
                    Gpus {
                        nvml: None,
                        devices: Vec::new(),
                    },
                    quiet(format!("no GPU metrics: NVML not loaded ({e})")),
                ),
            }
        }
        #[cfg(not(feature = "nvml"))]
        {
            (
                Gpus {
                    devices: Vec::new(),
                },
                quiet("no GPU metrics: this build has no NVML (feature `nvml`)".to_owned()),
            )
        }
    }

    /// Append each GPU's values to `out`; a value NVML does not give (power on some boards) is
    /// left out.
    pub fn sample(&self, out: &mut Vec<(Arc<str>, f64)>) {
        #[cfg(feature = "nvml")]
        if let Some(nvml) = &self.nvml {
            use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
            for Device { index, tags: t } in &self.devices {
                let Ok(d) = nvml.device_by_index(*index) else {
                    continue;
                };
                let mut put = |i: usize, v: Option<f64>| {
                    if let Some(v) = v {
                        out.push((t[i].clone(), v));
                    }
                };
                put(0, d.utilization_rates().ok().map(|u| f64::from(u.gpu)));
                let m = d.memory_info().ok();
                put(1, m.as_ref().map(|m| m.used as f64));
                put(2, m.as_ref().map(|m| m.total as f64));
                put(3, d.power_usage().ok().map(|mw| f64::from(mw) / 1000.0));
                put(4, d.temperature(TemperatureSensor::Gpu).ok().map(f64::from));
                put(5, d.clock_info(Clock::SM).ok().map(f64::from));
                put(6, d.clock_info(Clock::Memory).ok().map(f64::from));
            }
        }
        let _ = (&self.devices, out);
    }
}
