//! Resolving a config in layers on the TOML tree: preset, file, `--set` overrides.

use std::path::Path;

use grpo_core::{Algorithm, Conventions};
use serde::Serialize;

use super::{AlgorithmSection, Preset, TrainConfig};
use crate::error::{Error, Result};

impl TrainConfig {
    /// Resolves a preset, an optional TOML file and `key=value` overrides into a validated
    /// config (see the module docs).
    pub fn resolve(preset: Preset, file: Option<&Path>, overrides: &[String]) -> Result<Self> {
        let mut layers: Vec<(String, toml::Table)> = Vec::new();
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
                path: path.to_path_buf(),
                source,
            })?;
            let table: toml::Table = toml::from_str(&text).map_err(|e| Error::Settings {
                field: path.display().to_string(),
                message: e.to_string(),
            })?;
            layers.push((path.display().to_string(), table));
        }
        for item in overrides {
            layers.push((format!("--set {item}"), set_table(item)?));
        }
        // A layer may change the preset itself.
        let mut preset = preset;
        for (_, layer) in &layers {
            if let Some(toml::Value::String(name)) = layer.get("preset") {
                preset = name.parse()?;
            }
        }
        let mut tree = to_table(&Self::preset(preset))?;
        for (origin, layer) in layers {
            if let Some(toml::Value::Table(algorithm)) = layer.get("algorithm") {
                let name = match algorithm.get("name") {
                    Some(name) => Some(name.clone().try_into().map_err(|e: toml::de::Error| {
                        Error::Settings {
                            field: "algorithm.name".into(),
                            message: format!("{origin}: {e}"),
                        }
                    })?),
                    None => None,
                };
                let conventions = match algorithm.get("conventions") {
                    Some(value) => Some(parse_conventions(value, &origin)?),
                    None => None,
                };
                if name.is_some() || conventions.is_some() {
                    reset_algorithm(&mut tree, name, conventions)?;
                }
            }
            merge(&mut tree, layer);
        }
        let config: TrainConfig =
            toml::Value::Table(tree)
                .try_into()
                .map_err(|e: toml::de::Error| Error::Settings {
                    field: "config".into(),
                    message: e.to_string(),
                })?;
        config.validate()?;
        Ok(config)
    }
}

/// Applies a layer's `algorithm.name` (the preset replaces the section) and
/// `algorithm.conventions` (the options it decides are set) to the tree, before the layer's
/// other keys. A new preset keeps the conventions chosen so far unless the layer names others.
fn reset_algorithm(
    tree: &mut toml::Table,
    name: Option<Algorithm>,
    conventions: Option<Conventions>,
) -> Result<()> {
    let mut section = match name {
        Some(name) => {
            let max_len = tree
                .get("sampling")
                .and_then(|s| s.get("max_new_tokens"))
                .and_then(toml::Value::as_integer)
                .unwrap_or(1024)
                .max(1) as usize;
            let mut section = AlgorithmSection::preset(name, max_len);
            // Only the conventions of the replaced section are kept.
            section.conventions = tree
                .get("algorithm")
                .and_then(|a| a.get("conventions"))
                .and_then(toml::Value::as_str)
                .and_then(|text| text.parse().ok())
                .unwrap_or_default();
            section
        }
        None => {
            let current = tree.get("algorithm").cloned().ok_or(Error::Settings {
                field: "algorithm".into(),
                message: "missing".into(),
            })?;
            current
                .try_into()
                .map_err(|e: toml::de::Error| Error::Settings {
                    field: "algorithm".into(),
                    message: e.to_string(),
                })?
        }
    };
    section.apply_conventions(conventions.unwrap_or(section.conventions));
    tree.insert("algorithm".into(), toml::Value::Table(to_table(&section)?));
    Ok(())
}

/// Reads `algorithm.conventions` from a layer, naming the field and the layer on error.
fn parse_conventions(value: &toml::Value, origin: &str) -> Result<Conventions> {
    let bad = |shown: String| Error::Settings {
        field: "algorithm.conventions".into(),
        message: format!(
            "{origin}: unknown conventions {shown} (expected `grpo-rs`, `verl` or `trl`)"
        ),
    };
    match value.as_str() {
        Some(text) => text.parse().map_err(|_| bad(format!("`{text}`"))),
        None => Err(bad(value.to_string())),
    }
}

/// Parses `a.b.c=value` into a nested table; the value is read as TOML (`3`, `0.5`, `true`,
/// `"text"`, `[1, 2]`) and, when that fails, taken as a plain string.
fn set_table(item: &str) -> Result<toml::Table> {
    let Some((key, value)) = item.split_once('=') else {
        return Err(Error::Settings {
            field: item.into(),
            message: "expected key=value".into(),
        });
    };
    let key = key.trim();
    if key.is_empty() || key.split('.').any(str::is_empty) {
        return Err(Error::Settings {
            field: key.into(),
            message: "empty key segment".into(),
        });
    }
    let value = value.trim();
    let parsed = toml::from_str::<toml::Table>(&format!("v = {value}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(value.to_string()));
    let mut nested = parsed;
    for part in key.split('.').rev() {
        let mut table = toml::Table::new();
        table.insert(part.to_string(), nested);
        nested = toml::Value::Table(table);
    }
    match nested {
        toml::Value::Table(table) => Ok(table),
        _ => Err(Error::Settings {
            field: key.into(),
            message: "expected key=value".into(),
        }),
    }
}

/// Merges `layer` into `base`: tables recursively, anything else replaces.
fn merge(base: &mut toml::Table, layer: toml::Table) {
    for (key, value) in layer {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(l)) => merge(b, l),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

fn to_table<T: Serialize>(value: &T) -> Result<toml::Table> {
    toml::Table::try_from(value).map_err(|e| Error::Settings {
        field: "config".into(),
        message: e.to_string(),
    })
}
