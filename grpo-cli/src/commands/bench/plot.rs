//! `bench.png`: throughput (left) and p50/p99 latency (right) against concurrency, a
//! colour per target.

use std::path::Path;

use serde_json::Value;

/// A named line of points in one colour.
type Line = (String, plotters::style::RGBAColor, Vec<(f64, f64)>);

pub fn draw(path: &Path, report: &Value) -> anyhow::Result<()> {
    use plotters::prelude::*;
    let targets = report["targets"].as_array().cloned().unwrap_or_default();
    let series = |t: &Value, f: &dyn Fn(&Value) -> f64| -> Vec<(f64, f64)> {
        t["levels"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|l| (l["concurrency"].as_f64().unwrap_or(0.0), f(l)))
            .collect()
    };
    let colours = [BLUE, RED, GREEN, MAGENTA, CYAN, BLACK];
    let mut throughput: Vec<Line> = Vec::new();
    let mut latency: Vec<Line> = Vec::new();
    for (i, t) in targets.iter().enumerate() {
        let colour = colours[i % colours.len()];
        let name = t["name"].as_str().unwrap_or("").to_owned();
        throughput.push((
            format!("{name} req/s"),
            colour.to_rgba(),
            series(t, &|l| l["throughput_rps"].as_f64().unwrap_or(0.0)),
        ));
        latency.push((
            format!("{name} p50"),
            colour.to_rgba(),
            series(t, &|l| l["latency_ms"]["p50"].as_f64().unwrap_or(0.0)),
        ));
        latency.push((
            format!("{name} p99"),
            colour.mix(0.5),
            series(t, &|l| l["latency_ms"]["p99"].as_f64().unwrap_or(0.0)),
        ));
    }
    let max_x = throughput
        .iter()
        .flat_map(|(_, _, s)| s.iter().map(|p| p.0))
        .fold(1.0, f64::max)
        * 1.05;
    let labels = grpo_runner::run::plot::font_available();
    let root = BitMapBackend::new(path, (1000, 450)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))?;
    let (left, right) = root.split_horizontally(500);
    let panels = [
        (&left, "throughput (requests/s)", throughput),
        (&right, "latency (ms)", latency),
    ];
    for (area, title, lines) in panels {
        let top = lines
            .iter()
            .flat_map(|(_, _, s)| s.iter().map(|p| p.1))
            .fold(1.0, f64::max)
            * 1.1;
        let mut builder = ChartBuilder::on(area);
        builder.margin(15);
        if labels {
            builder
                .caption(title, ("sans-serif", 18))
                .x_label_area_size(35)
                .y_label_area_size(55);
        }
        let mut chart = builder
            .build_cartesian_2d(0.0..max_x, 0.0..top)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let mut mesh = chart.configure_mesh();
        if labels {
            mesh.x_desc("concurrency");
        } else {
            mesh.disable_x_mesh()
                .disable_y_mesh()
                .x_labels(0)
                .y_labels(0);
        }
        mesh.draw().map_err(|e| anyhow::anyhow!("{e}"))?;
        for (name, colour, points) in &lines {
            let drawn = chart
                .draw_series(LineSeries::new(
                    points.iter().copied(),
                    colour.stroke_width(2),
                ))
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            if labels {
                let c = *colour;
                drawn
                    .label(name.as_str())
                    .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], c));
            }
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 4, colour.filled())))
                .map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        if labels {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()
                .map_err(|e| anyhow::anyhow!("{e}"))?;
        }
    }
    root.present().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(())
}
