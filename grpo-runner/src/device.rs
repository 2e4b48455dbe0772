//! Where the model runs and in which dtype its forward passes compute: the `model.device` and
//! `model.dtype` settings.
//!
//! - [`DeviceSpec`]: `cpu` (the default), `cuda:N` (`cuda` is `cuda:0`) or `metal`. CUDA and
//!   Metal need the binary built with the matching cargo feature (`--features cuda`,
//!   `--features metal`); without it, or without the hardware, [`DeviceSpec::open`] fails
//!   with an error naming the setting and the build command, before any work starts.
//! - [`ComputeDtype`]: `f32` (the default), `bf16` or `f16`. The trainable weights and the
//!   optimiser's moments stay f32 whatever is chosen (master weights); the forward pass casts
//!   the weights to the compute dtype once per pass (see [`crate::model`] for which parts run
//!   in which dtype).
//!
//! ```
//! use grpo_runner::device::{ComputeDtype, DeviceSpec};
//! let spec: DeviceSpec = "cuda".parse()?;
//! assert_eq!(spec, DeviceSpec::Cuda(0));
//! assert_eq!(spec.to_string(), "cuda:0");
//! assert!(DeviceSpec::Cpu.open()?.is_cpu());
//! assert_eq!("bf16".parse::<ComputeDtype>()?.dtype(), candle_core::DType::BF16);
//! # Ok::<(), grpo_runner::Error>(())
//! ```

use std::fmt;
use std::str::FromStr;

use candle_core::{DType, Device};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The device a run's tensors live on; written `cpu`, `cuda:N` (`cuda` = `cuda:0`) or `metal`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum DeviceSpec {
    /// The host CPU (candle's CPU backend).
    #[default]
    Cpu,
    /// The CUDA GPU of this ordinal (needs the `cuda` feature).
    Cuda(usize),
    /// The Metal GPU (needs the `metal` feature).
    Metal,
}

impl DeviceSpec {
    /// Opens the device. A device this build cannot use (CUDA or Metal without the feature,
    /// or without the hardware) is an [`Error::Settings`] on `model.device` that says how to
    /// build with the feature.
    pub fn open(self) -> Result<Device> {
        let unavailable = |feature: &str, e: candle_core::Error| {
            let how = format!(
                "build the binary with `--features {feature}` (`cargo build --release -p \
                 grpo-runner --features {feature}`)"
            );
            let message = match e {
                candle_core::Error::NotCompiledWithCudaSupport
                | candle_core::Error::NotCompiledWithMetalSupport => {
                    format!(
                        "`{self}` is not available: this binary was built without {feature} support; {how}"
                    )
                }
                other => format!(
                    "`{self}` could not be opened ({other}); check that the GPU is present and, \
                     if this binary lacks {feature} support, {how}"
                ),
            };
            Error::Settings {
                field: "model.device".into(),
                message,
            }
        };
        match self {
            DeviceSpec::Cpu => Ok(Device::Cpu),
            DeviceSpec::Cuda(ordinal) => {
                Device::new_cuda(ordinal).map_err(|e| unavailable("cuda", e))
            }
            DeviceSpec::Metal => Device::new_metal(0).map_err(|e| unavailable("metal", e)),
        }
    }
}

impl FromStr for DeviceSpec {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        let bad = || Error::Settings {
            field: "model.device".into(),
            message: format!(
                "unknown device `{text}` (expected `cpu`, `cuda`, `cuda:N` or `metal`)"
            ),
        };
        match text {
            "cpu" => Ok(DeviceSpec::Cpu),
            "cuda" => Ok(DeviceSpec::Cuda(0)),
            "metal" => Ok(DeviceSpec::Metal),
            _ => match text.strip_prefix("cuda:") {
                Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                    n.parse().map(DeviceSpec::Cuda).map_err(|_| bad())
                }
                _ => Err(bad()),
            },
        }
    }
}

impl fmt::Display for DeviceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceSpec::Cpu => f.write_str("cpu"),
            DeviceSpec::Cuda(n) => write!(f, "cuda:{n}"),
            DeviceSpec::Metal => f.write_str("metal"),
        }
    }
}

impl TryFrom<String> for DeviceSpec {
    type Error = String;

    fn try_from(text: String) -> std::result::Result<Self, String> {
        text.parse().map_err(settings_message)
    }
}

impl From<DeviceSpec> for String {
    fn from(spec: DeviceSpec) -> String {
        spec.to_string()
    }
}

/// The dtype forward passes compute in; written `f32`, `bf16` or `f16`. The weights
/// themselves stay f32.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum ComputeDtype {
    /// 32-bit floats: the reference numerics.
    #[default]
    F32,
    /// bfloat16: f32's range, 8 bits of mantissa.
    Bf16,
    /// IEEE half: 11 bits of mantissa, range to 65504.
    F16,
}

impl ComputeDtype {
    /// The candle dtype.
    pub fn dtype(self) -> DType {
        match self {
            ComputeDtype::F32 => DType::F32,
            ComputeDtype::Bf16 => DType::BF16,
            ComputeDtype::F16 => DType::F16,
        }
    }
}

impl FromStr for ComputeDtype {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        match text {
            "f32" => Ok(ComputeDtype::F32),
            "bf16" => Ok(ComputeDtype::Bf16),
            "f16" => Ok(ComputeDtype::F16),
            _ => Err(Error::Settings {
                field: "model.dtype".into(),
                message: format!("unknown dtype `{text}` (expected `f32`, `bf16` or `f16`)"),
            }),
        }
    }
}

impl fmt::Display for ComputeDtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ComputeDtype::F32 => "f32",
            ComputeDtype::Bf16 => "bf16",
            ComputeDtype::F16 => "f16",
        })
    }
}

impl TryFrom<String> for ComputeDtype {
    type Error = String;

    fn try_from(text: String) -> std::result::Result<Self, String> {
        text.parse().map_err(settings_message)
    }
}

impl From<ComputeDtype> for String {
    fn from(dtype: ComputeDtype) -> String {
        dtype.to_string()
    }
}

/// The message of a settings error alone: inside a config file, the TOML error already
/// names the field.
fn settings_message(e: Error) -> String {
    match e {
        Error::Settings { message, .. } => message,
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_parse_and_print_back() {
        for (text, spec, shown) in [
            ("cpu", DeviceSpec::Cpu, "cpu"),
            ("cuda", DeviceSpec::Cuda(0), "cuda:0"),
            ("cuda:0", DeviceSpec::Cuda(0), "cuda:0"),
            ("cuda:3", DeviceSpec::Cuda(3), "cuda:3"),
            ("metal", DeviceSpec::Metal, "metal"),
        ] {
            assert_eq!(text.parse::<DeviceSpec>().unwrap(), spec, "{text}");
            assert_eq!(spec.to_string(), shown);
            assert_eq!(shown.parse::<DeviceSpec>().unwrap(), spec);
        }
        for text in ["", "gpu", "cuda:", "cuda:x", "cuda:-1", "CPU", "cuda:+1"] {
            let err = text.parse::<DeviceSpec>().unwrap_err();
            assert!(
                matches!(&err, Error::Settings { field, .. } if field == "model.device"),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn dtypes_parse_and_print_back() {
        for d in [ComputeDtype::F32, ComputeDtype::Bf16, ComputeDtype::F16] {
            assert_eq!(d.to_string().parse::<ComputeDtype>().unwrap(), d);
        }
        assert_eq!(ComputeDtype::default().dtype(), DType::F32);
        let err = "f64".parse::<ComputeDtype>().unwrap_err().to_string();
        assert!(err.contains("model.dtype") && err.contains("bf16"), "{err}");
    }

    /// Without the feature, candle's CUDA and Metal constructors exist and fail at run time;
    /// the error names the setting and the feature to build with.
    #[test]
    #[cfg(not(feature = "cuda"))]
    fn cuda_without_the_feature_says_how_to_build() {
        let err = DeviceSpec::Cuda(0).open().unwrap_err().to_string();
        assert!(err.contains("model.device"), "{err}");
        assert!(err.contains("--features cuda"), "{err}");
    }

    #[test]
    #[cfg(not(feature = "metal"))]
    fn metal_without_the_feature_says_how_to_build() {
        let err = DeviceSpec::Metal.open().unwrap_err().to_string();
        assert!(err.contains("model.device"), "{err}");
        assert!(err.contains("--features metal"), "{err}");
    }
}
