//! `plot.png`: mean training reward per step and held-out accuracy per evaluation.
//!
//! Both series share a 0–1 axis (the default rewards are accuracy 1 + format 0.1, so the
//! reward may peak at 1.1; the axis stretches to fit). Text needs a TrueType font: the first
//! of a few common system fonts is used, and without one the plot is drawn without labels.

use std::path::Path;
use std::sync::OnceLock;

use plotters::prelude::*;

use crate::error::{Error, Result};
use crate::run::records::{EvalRecord, StepRecord};

const FONT_CANDIDATES: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
    "C:\\Windows\\Fonts\\arial.ttf",
];

/// Registers a system font with plotters once; whether one was found.
pub fn font_available() -> bool {
    static FONT: OnceLock<bool> = OnceLock::new();
    *FONT.get_or_init(|| {
        for path in FONT_CANDIDATES {
            if let Ok(bytes) = std::fs::read(path) {
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok() {
                    return true;
                }
            }
        }
        false
    })
}

fn plot_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(e.to_string()),
    }
}

/// Draws the plot to `path` (PNG, 900 × 500).
pub fn draw(path: &Path, steps: &[StepRecord], evals: &[EvalRecord]) -> Result<()> {
    let err = |e: &dyn std::fmt::Display| plot_err(path, e);
    let max_step = steps
        .iter()
        .map(|s| s.step)
        .chain(evals.iter().map(|e| e.step))
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let top = steps
        .iter()
        .map(|s| s.reward_mean)
        .fold(1.0f64, f64::max)
        .min(10.0)
        * 1.05;
    let bottom = steps
        .iter()
        .map(|s| s.reward_mean)
        .fold(0.0f64, f64::min)
        .max(-10.0);
    let labels = font_available();
    let root = BitMapBackend::new(path, (900, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut builder = ChartBuilder::on(&root);
    builder.margin(20);
    if labels {
        builder
            .caption(
                "GRPO: mean reward (blue) and held-out greedy accuracy (red)",
                ("sans-serif", 20),
            )
            .x_label_area_size(40)
            .y_label_area_size(50);
    }
    let mut chart = builder
        .build_cartesian_2d(0f64..max_step, bottom..top)
        .map_err(|e| err(&e))?;
    if labels {
        chart
            .configure_mesh()
            .x_desc("GRPO step")
            .y_desc("reward / accuracy")
            .draw()
            .map_err(|e| err(&e))?;
    } else {
        for i in 0..=10 {
            let y = bottom + (top - bottom) * f64::from(i) / 10.0;
            chart
                .draw_series(LineSeries::new(
                    [(0.0, y), (max_step, y)],
                    RGBColor(225, 225, 225),
                ))
                .map_err(|e| err(&e))?;
        }
    }
    chart
        .draw_series(LineSeries::new(
            steps.iter().map(|s| (s.step as f64, s.reward_mean)),
            BLUE.stroke_width(2),
        ))
        .map_err(|e| err(&e))?;
    chart
        .draw_series(LineSeries::new(
            evals.iter().map(|e| (e.step as f64, e.accuracy)),
            RED.stroke_width(2),
        ))
        .map_err(|e| err(&e))?;
    chart
        .draw_series(
            evals
                .iter()
                .map(|e| Circle::new((e.step as f64, e.accuracy), 4, RED.filled())),
        )
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_a_png_from_records() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plot.png");
        let evals: Vec<EvalRecord> = (0..3)
            .map(|i| EvalRecord {
                step: i * 5,
                accuracy: 0.2 * i as f64,
                correct: 0,
                problems: 200,
                format_rate: 1.0,
                completion_len_mean: 12.0,
                seconds: 0.1,
                faults: 0,
            })
            .collect();
        draw(&path, &[], &evals).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
    }
}
