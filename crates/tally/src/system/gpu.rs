//! Each GPU through NVIDIA's NVML, loaded at run time (docs/contract/system-metrics.md "GPUs"):
//! no driver, no library or no device leaves the GPU tags out, with one note saying why.
//! Built only with the `nvml` feature; without it there is never a GPU to sample.

use std::sync::Arc;

/// One GPU's tags, named once.
#[cfg_attr(not(feature = "nvml"), allow(dead_code))]
struct Tags {
    util: Arc<str>,
    mem_used: Arc<str>,
    mem_total: Arc<str>,
    power: Arc<str>,
    temp: Arc<str>,
    sm_clock: Arc<str>,
    mem_clock: Arc<str>,
}

#[cfg_attr(not(feature = "nvml"), allow(dead_code))]
impl Tags {
    fn new(index: u32) -> Tags {
        let t = |name: &str| Arc::from(format!("system/gpu{index}/{name}"));
        Tags {
            util: t("util_percent"),
            mem_used: t("memory_used_bytes"),
            mem_total: t("memory_total_bytes"),
            power: t("power_watts"),
            temp: t("temperature_celsius"),
            sm_clock: t("sm_clock_mhz"),
            mem_clock: t("memory_clock_mhz"),
        }
    }
}

/// The machine's GPUs, or none.
pub struct Gpus {
    #[cfg(feature = "nvml")]
    nvml: Option<nvml_wrapper::Nvml>,
    tags: Vec<Tags>,
}

impl Gpus {
    /// Load NVML and list the GPUs: every device NVML lists, named by its NVML index
    /// (docs/contract/system-metrics.md "GPUs"). Returns the note to say once when there is
    /// none.
    pub fn open() -> (Gpus, Option<String>) {
        #[cfg(feature = "nvml")]
        {
            match nvml_wrapper::Nvml::init() {
                Ok(nvml) => {
                    let n = nvml.device_count().unwrap_or(0);
                    let note = (n == 0).then(|| "NVML lists no GPU: no GPU tags".to_owned());
                    let tags = (0..n).map(Tags::new).collect();
                    (
                        Gpus {
                            nvml: Some(nvml),
                            tags,
                        },
                        note,
                    )
                }
                Err(e) => (
                    Gpus {
                        nvml: None,
                        tags: Vec::new(),
                    },
                    Some(format!("no GPU metrics: NVML not loaded ({e})")),
                ),
            }
        }
        #[cfg(not(feature = "nvml"))]
        {
            (
                Gpus { tags: Vec::new() },
                Some("no GPU metrics: this build has no NVML (feature `nvml`)".to_owned()),
            )
        }
    }

    /// Append each GPU's values to `out`; a value NVML does not give (power on some boards) is
    /// left out.
    pub fn sample(&self, out: &mut Vec<(Arc<str>, f64)>) {
        #[cfg(feature = "nvml")]
        if let Some(nvml) = &self.nvml {
            use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
            for (i, t) in self.tags.iter().enumerate() {
                let Ok(d) = nvml.device_by_index(i as u32) else {
                    continue;
                };
                if let Ok(u) = d.utilization_rates() {
                    out.push((t.util.clone(), f64::from(u.gpu)));
                }
                if let Ok(m) = d.memory_info() {
                    out.push((t.mem_used.clone(), m.used as f64));
                    out.push((t.mem_total.clone(), m.total as f64));
                }
                if let Ok(mw) = d.power_usage() {
                    out.push((t.power.clone(), f64::from(mw) / 1000.0));
                }
                if let Ok(c) = d.temperature(TemperatureSensor::Gpu) {
                    out.push((t.temp.clone(), f64::from(c)));
                }
                if let Ok(c) = d.clock_info(Clock::SM) {
                    out.push((t.sm_clock.clone(), f64::from(c)));
                }
                if let Ok(c) = d.clock_info(Clock::Memory) {
                    out.push((t.mem_clock.clone(), f64::from(c)));
                }
            }
        }
        let _ = (&self.tags, out);
    }
}
