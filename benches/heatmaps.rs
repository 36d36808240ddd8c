//! Rendering speed of the paper's heatmaps: 24 models x 40x40 drift matrices of seeded
//! random values (about 5 % empty cells), shared 5-95 % scale, rendered to SVG strings by
//! drift (plotters) and, in the same run, by the equivalent matplotlib script
//! `benches/heatmaps.py` (Agg, `pcolormesh` cells, colour bar, dashed diagonal, thinned
//! labels, text kept as text) on the same data. Prints seconds per heatmap for both and the
//! ratio matplotlib / drift.
//!
//! `cargo bench --bench heatmaps`. The python comes from `DRIFT_MATPLOTLIB_PYTHON`, else
//! from `scripts/figures-peer` (pinned matplotlib venv, installed on first use); without
//! one the matplotlib half is skipped with the reason.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use common::{Rng, peer_python};
use drift::matrix::Grid;
use drift::report::figures::{HeatmapOptions, Scale, heatmap};

const MODELS: usize = 24;
const K: usize = 40;
const ROUNDS: usize = 3;

fn main() {
    let mut rng = Rng(20260);
    let grids: Vec<Grid> = (0..MODELS)
        .map(|_| {
            let mut g = Grid::empty(K);
            for i in 0..K {
                for j in 0..K {
                    if rng.next() >= 0.05 {
                        let lag = j as f64 - i as f64;
                        g.set(i, j, Some(0.9 - 0.004 * lag.abs() + 0.05 * rng.next()));
                    }
                }
            }
            g
        })
        .collect();
    let labels: Vec<String> = (0..K)
        .map(|n| format!("{}-H{}", 2000 + n / 2, n % 2 + 1))
        .collect();
    let refs: Vec<&Grid> = grids.iter().collect();
    let scale = Scale::shared_sequential(&refs).expect("filled cells");
    let Scale::Sequential { lo, hi } = scale else {
        unreachable!()
    };

    let render_all = || {
        let mut bytes = 0;
        for (n, g) in grids.iter().enumerate() {
            let opts = HeatmapOptions {
                title: Some(format!("model-{n:02}")),
                value_label: "accuracy".into(),
                ..Default::default()
            };
            bytes += heatmap(g, &labels, scale, &opts).expect("renders").len();
        }
        bytes
    };
    render_all(); // warm-up: font registration, caches
    let mut best = f64::INFINITY;
    let mut bytes = 0;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        bytes = render_all();
        best = best.min(start.elapsed().as_secs_f64());
    }
    let drift_per = best / MODELS as f64;
    println!(
        "drift (plotters):  {:.6} s per heatmap (best of {ROUNDS} rounds of {MODELS}, {} KiB SVG each)",
        drift_per,
        bytes / MODELS / 1024
    );

    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("grids.json");
    let cells: Vec<Vec<Vec<Option<f64>>>> = grids
        .iter()
        .map(|g| g.rows().map(<[Option<f64>]>::to_vec).collect())
        .collect();
    let json = serde_json::json!({ "labels": labels, "lo": lo, "hi": hi, "grids": cells, "rounds": ROUNDS });
    std::fs::write(&data, json.to_string()).expect("writes grids");

    let figures_peer = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/figures-peer");
    let python = match peer_python("DRIFT_MATPLOTLIB_PYTHON", figures_peer, &[]) {
        Ok(p) => p,
        Err(why) => {
            println!("matplotlib: skipped ({why})");
            return;
        }
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/heatmaps.py");
    let out = Command::new(&python)
        .arg(&script)
        .arg(&data)
        .output()
        .expect("runs python");
    if !out.status.success() {
        println!(
            "matplotlib: failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    print!("{stdout}");
    let per = stdout
        .lines()
        .find_map(|l| l.strip_prefix("seconds_per_heatmap "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .expect("heatmaps.py prints seconds_per_heatmap");
    println!("matplotlib:        {per:.6} s per heatmap");
    println!("ratio matplotlib / drift: {:.1}x", per / drift_per);
}
