//! The paper's figures: each renders, is well-formed SVG with the expected elements, and
//! renders to the same bytes twice.

use drift::analysis::{ForgettingPoint, Ranked, TemporalScore};
use drift::matrix::Grid;
use drift::metrics::Direction;
use drift::report::figures::colors::{self, EMPTY, Rgb};
use drift::report::figures::heatmap::COLORBAR_STEPS;
use drift::report::figures::{
    Curve, CurveOptions, EffectsRow, HeatmapOptions, Panel, RankingOptions, SaliencyGrid, Scale,
    forgetting_curves, heatmap, panels, percentile, ranking, saliency_grid, temporal_effects,
    thinned,
};

fn labels(k: usize) -> Vec<String> {
    (0..k)
        .map(|n| format!("{}-H{}", 2000 + n / 2, n % 2 + 1))
        .collect()
}

/// A K×K grid with an upper-triangular drift pattern and a few empty cells.
fn grid(k: usize) -> Grid {
    let mut g = Grid::empty(k);
    for i in 0..k {
        for j in 0..k {
            if (i * 7 + j * 3) % 11 != 5 {
                g.set(
                    i,
                    j,
                    Some(0.9 - 0.01 * (j as f64 - i as f64).abs() + 0.001 * i as f64),
                );
            }
        }
    }
    g
}

/// Checks the SVG is one balanced `<svg>` element: every opening tag is closed or
/// self-closing, in nesting order.
fn assert_balanced(svg: &str) {
    assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(80)]);
    assert!(svg.trim_end().ends_with("</svg>"));
    let mut stack: Vec<String> = Vec::new();
    let mut rest = svg;
    while let Some(at) = rest.find('<') {
        let end = rest[at..].find('>').expect("unterminated tag") + at;
        let tag = &rest[at + 1..end];
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_alphanumeric())
            .collect();
        if tag.starts_with('/') {
            assert_eq!(
                stack.pop().as_deref(),
                Some(name.as_str()),
                "mismatched </{name}>"
            );
        } else if !tag.ends_with('/') && !tag.starts_with('?') && !tag.starts_with('!') {
            stack.push(name);
        }
        rest = &rest[end + 1..];
    }
    assert!(stack.is_empty(), "unclosed: {stack:?}");
}

/// With `DRIFT_FIGURE_DIR` set, writes `svg` there as `name.svg` for a look by eye.
fn dump(name: &str, svg: &str) {
    if let Some(dir) = std::env::var_os("DRIFT_FIGURE_DIR") {
        std::fs::write(std::path::Path::new(&dir).join(format!("{name}.svg")), svg).unwrap();
    }
}

fn count(svg: &str, needle: &str) -> usize {
    svg.matches(needle).count()
}

fn seq() -> Scale {
    Scale::Sequential { lo: 0.5, hi: 0.9 }
}

#[test]
fn heatmap_has_one_rect_per_cell_grey_empties_and_a_dashed_diagonal() {
    let k = 6;
    let g = grid(k);
    let empties = (0..k * k).filter(|n| g.get(n / k, n % k).is_none()).count();
    assert!(empties > 0);
    let svg = heatmap(&g, &labels(k), seq(), &HeatmapOptions::default()).unwrap();
    assert_balanced(&svg);
    // background + cells + matrix frame + colour-bar steps + colour-bar frame
    assert_eq!(count(&svg, "<rect"), 1 + k * k + 1 + COLORBAR_STEPS + 1);
    assert_eq!(count(&svg, &format!("fill=\"{}\"", EMPTY.hex())), empties);
    assert_eq!(count(&svg, "stroke-dasharray"), 1);
    assert!(svg.contains("trained through") && svg.contains("evaluated on"));
    assert!(svg.contains("font-family=\"Libertinus Serif\""));
    assert!(!svg.contains("sans-serif"));
}

#[test]
fn origin_is_lower_left() {
    // Only cell (0, 0) is filled: its rect is the lowest, leftmost one.
    let mut g = Grid::empty(2);
    g.set(0, 0, Some(1.0));
    let opts = HeatmapOptions::default();
    let svg = heatmap(&g, &labels(2), seq(), &opts).unwrap();
    let filled = svg
        .lines()
        .find(|l| l.contains("<rect") && l.contains(&colors::sequential(1.0).hex()))
        .unwrap();
    let y: i32 = attr(filled, "y");
    let greys: Vec<i32> = svg
        .lines()
        .filter(|l| l.contains(&EMPTY.hex()))
        .map(|l| attr(l, "y"))
        .collect();
    assert_eq!(greys.len(), 3);
    assert!(greys.iter().all(|&g| g <= y) && greys.iter().any(|&g| g < y));
}

fn attr(line: &str, name: &str) -> i32 {
    let key = format!(" {name}=\"");
    let at = line.find(&key).unwrap() + key.len();
    line[at..].split('"').next().unwrap().parse().unwrap()
}

#[test]
fn one_slice_and_forty_slices_render_with_thinned_labels() {
    let svg = heatmap(&grid(1), &labels(1), seq(), &HeatmapOptions::default()).unwrap();
    assert_balanced(&svg);
    assert_eq!(count(&svg, "<rect"), 1 + 1 + 1 + COLORBAR_STEPS + 1);
    assert_eq!(thinned(1), vec![0]);
    assert_eq!(thinned(12), (0..12).collect::<Vec<_>>());
    assert_eq!(thinned(13), vec![0, 2, 4, 6, 8, 10, 12]);
    assert_eq!(thinned(40), vec![0, 4, 8, 12, 16, 20, 24, 28, 32, 36]);
    let l = labels(40);
    let svg = heatmap(&grid(40), &l, seq(), &HeatmapOptions::default()).unwrap();
    dump("heatmap-40", &svg);
    assert_balanced(&svg);
    assert_eq!(count(&svg, "<rect"), 1 + 1600 + 1 + COLORBAR_STEPS + 1);
    // each shown label twice (rows and columns), the others never
    assert_eq!(count(&svg, &format!(">\n{}\n</text>", l[4])), 2);
    assert_eq!(count(&svg, &format!(">\n{}\n</text>", l[5])), 0);
    assert!(
        svg.contains("rotate(270"),
        "long column labels stand upright"
    );
}

#[test]
fn lower_is_better_reverses_the_map() {
    let s = seq();
    assert_eq!(s.color(0.9, Direction::HigherIsBetter), colors::VIRIDIS[10]);
    assert_eq!(s.color(0.9, Direction::LowerIsBetter), colors::VIRIDIS[0]);
    let d = Scale::Diverging { max_abs: 2.0 };
    assert_eq!(d.color(0.0, Direction::HigherIsBetter), colors::RDBU[5]);
    assert_eq!(d.color(5.0, Direction::HigherIsBetter), colors::RDBU[10]);
    assert_eq!(d.color(-2.0, Direction::LowerIsBetter), colors::RDBU[10]);
    let mut g = Grid::empty(2);
    g.set(0, 0, Some(0.5));
    g.set(1, 1, Some(0.9));
    let opts = HeatmapOptions {
        title: Some("MSE".into()),
        direction: Direction::LowerIsBetter,
        value_label: "mse".into(),
    };
    let svg = heatmap(&g, &labels(2), s, &opts).unwrap();
    assert_balanced(&svg);
    assert!(svg.contains(&format!("fill=\"{}\"", colors::VIRIDIS[10].hex())));
    assert!(svg.contains(">\nMSE\n</text>"));
}

#[test]
fn scale_helpers_on_known_values() {
    let v: Vec<f64> = (0..=100).map(f64::from).collect();
    assert_eq!(percentile(&v, 5.0), Some(5.0));
    assert_eq!(percentile(&[1.0, 2.0], 50.0), Some(1.5));
    assert_eq!(percentile(&[], 50.0), None);
    // numpy.percentile([1, 2, 3, 4], 95) == 3.85
    assert!((percentile(&[4.0, 1.0, 3.0, 2.0], 95.0).unwrap() - 3.85).abs() < 1e-12);
    let a = Grid::from_rows(&[vec![Some(1.0), None], vec![Some(3.0), Some(2.0)]]).unwrap();
    let b = Grid::from_rows(&[vec![Some(4.0), Some(5.0)], vec![None, None]]).unwrap();
    // values 1..5: p5 = 1.2, p95 = 4.8
    match Scale::shared_sequential(&[&a, &b]).unwrap() {
        Scale::Sequential { lo, hi } => {
            assert!((lo - 1.2).abs() < 1e-12 && (hi - 4.8).abs() < 1e-12)
        }
        other => panic!("{other:?}"),
    }
    let d = Grid::from_rows(&[vec![Some(-1.0), Some(0.5)], vec![Some(-0.25), None]]).unwrap();
    // |Δ| = 0.25, 0.5, 1: p99 = 0.5 + 0.98 * 0.5
    match Scale::shared_diverging(&[&d]).unwrap() {
        Scale::Diverging { max_abs } => assert!((max_abs - 0.99).abs() < 1e-12),
        other => panic!("{other:?}"),
    }
    assert_eq!(Scale::shared_sequential(&[&Grid::empty(3)]), None);
    let flat = Scale::Sequential { lo: 2.0, hi: 2.0 };
    let (lo, hi) = flat.range();
    assert!(lo < 2.0 && hi > 2.0);
    assert_eq!(
        colors::interpolate(&colors::VIRIDIS, 0.05),
        Rgb(0x46, 0x13, 0x65)
    );
    assert_eq!(colors::sequential(-1.0), colors::VIRIDIS[0]);
    assert_eq!(colors::diverging(f64::NAN), colors::RDBU[0]);
}

#[test]
fn deviation_heatmap_is_zero_centred() {
    let g = grid(5);
    let dev = g.map(|i, j, v| Some(v - 0.88 + 0.002 * (i as f64 - j as f64)));
    let scale = Scale::shared_diverging(&[&dev]).unwrap();
    let opts = HeatmapOptions {
        value_label: "Δ accuracy".into(),
        ..Default::default()
    };
    let svg = heatmap(&dev, &labels(5), scale, &opts).unwrap();
    dump("deviation-5", &svg);
    assert_balanced(&svg);
    assert!(svg.contains("Δ accuracy"));
    assert_eq!(count(&svg, "stroke-dasharray"), 1);
}

#[test]
fn panels_share_one_colour_bar() {
    let (a, b, c) = (grid(3), grid(8), grid(40));
    let (la, lb, lc) = (labels(3), labels(8), labels(40));
    let scale = Scale::shared_sequential(&[&a, &b, &c]).unwrap();
    let ps = [
        Panel {
            title: "Yearbook",
            grid: &a,
            labels: &la,
        },
        Panel {
            title: "arXiv",
            grid: &b,
            labels: &lb,
        },
        Panel {
            title: "Amazon",
            grid: &c,
            labels: &lc,
        },
    ];
    let opts = HeatmapOptions {
        title: Some("cohort means".into()),
        ..Default::default()
    };
    let svg = panels(&ps, scale, &opts).unwrap();
    dump("panels", &svg);
    assert_balanced(&svg);
    assert_eq!(
        count(&svg, "<rect"),
        1 + (9 + 1) + (64 + 1) + (1600 + 1) + COLORBAR_STEPS + 1
    );
    assert_eq!(count(&svg, "stroke-dasharray"), 3);
    assert_eq!(count(&svg, ">\ntrained through\n"), 1);
    assert!(panels(&[], scale, &opts).is_err());
}

fn curves() -> Vec<Curve> {
    ["mlp-s", "mlp-l", "cnn-s", "resnet-s"]
        .iter()
        .enumerate()
        .map(|(n, name)| Curve {
            label: name.to_string(),
            points: (0..6)
                .map(|lag| ForgettingPoint {
                    lag,
                    mean: 0.9 - 0.02 * lag as f64 - 0.01 * n as f64,
                    std: (lag > 0).then_some(0.005),
                })
                .collect(),
        })
        .collect()
}

#[test]
fn forgetting_curves_per_model_and_family() {
    let models = curves();
    let opts = CurveOptions {
        title: Some("Forgetting".into()),
        y_label: "accuracy".into(),
        std_band: true,
    };
    let svg = forgetting_curves(&models, &opts).unwrap();
    dump("curves", &svg);
    assert_balanced(&svg);
    assert!(svg.contains("<polygon"));
    for m in &models {
        assert!(svg.contains(&format!(">\n{}\n</text>", m.label)));
    }
    // Without the std band option no band is drawn.
    let svg = forgetting_curves(&models, &CurveOptions::default()).unwrap();
    assert_balanced(&svg);
    assert!(!svg.contains("<polygon"));
    let from_grid = Curve::from_grid("g", &grid(4));
    assert_eq!(from_grid.points.len(), 4);
    // 24 lines: markers tell apart the ones that share a colour
    let many: Vec<Curve> = (0..24)
        .map(|n| Curve {
            label: format!("m{n}"),
            ..models[n % 4].clone()
        })
        .collect();
    assert_balanced(&forgetting_curves(&many, &CurveOptions::default()).unwrap());
    assert!(forgetting_curves(&[], &CurveOptions::default()).is_err());
}

#[test]
fn rankings_draw_one_bar_per_model() {
    let future: Vec<Ranked> = [("cnn", 91.5), ("mlp", 88.0), ("vit", 80.25)]
        .iter()
        .enumerate()
        .map(|(n, (m, v))| Ranked {
            rank: n + 1,
            model: m.to_string(),
            value: *v,
            tied_with_next: false,
        })
        .collect();
    let svg = ranking(&future, &RankingOptions::default()).unwrap();
    assert_balanced(&svg);
    assert_eq!(count(&svg, "<rect"), 1 + 3);
    assert!(svg.contains(">\n1. cnn\n</text>"));
    let decay: Vec<Ranked> = [("a", -0.5), ("b", 1.25)]
        .iter()
        .enumerate()
        .map(|(n, (m, v))| Ranked {
            rank: n + 1,
            model: m.to_string(),
            value: *v,
            tied_with_next: false,
        })
        .collect();
    let opts = RankingOptions {
        title: Some("decay".into()),
        value_label: "decay".into(),
        ranges: vec![Some((-0.7, -0.3)), None],
    };
    let svg = ranking(&decay, &opts).unwrap();
    dump("ranking-decay", &svg);
    assert_balanced(&svg);
    assert!(svg.contains(">\n-0.50\n</text>"));
    // One whisker of three strokes (the range and its two caps) for the entry with one.
    assert_eq!(count(&svg, "stroke=\"#282828\""), 3, "{svg}");
    assert!(ranking(&[], &opts).is_err());
    let short = RankingOptions {
        ranges: vec![None],
        ..opts.clone()
    };
    assert!(ranking(&decay, &short).is_err());
}

#[test]
fn renders_are_byte_identical() {
    let g = grid(40);
    let l = labels(40);
    let opts = HeatmapOptions {
        title: Some("cnn-s".into()),
        ..Default::default()
    };
    let a = heatmap(&g, &l, seq(), &opts).unwrap();
    let b = heatmap(&g, &l, seq(), &opts).unwrap();
    assert_eq!(a, b);
    let c = curves();
    let o = CurveOptions {
        std_band: true,
        ..Default::default()
    };
    assert_eq!(
        forgetting_curves(&c, &o).unwrap(),
        forgetting_curves(&c, &o).unwrap()
    );
    let r = vec![Ranked {
        rank: 1,
        model: "x".into(),
        value: 1.0,
        tied_with_next: false,
    }];
    let ro = RankingOptions::default();
    assert_eq!(ranking(&r, &ro).unwrap(), ranking(&r, &ro).unwrap());
}

#[test]
fn wrong_label_count_is_an_error() {
    let e = heatmap(&grid(3), &labels(2), seq(), &HeatmapOptions::default()).unwrap_err();
    assert!(
        e.to_string().contains("2 slice labels for a 3x3 matrix"),
        "{e}"
    );
}

fn score(v: f64, p: f64) -> TemporalScore {
    TemporalScore {
        score: Some(v),
        p_value: Some(p),
        n: 10,
        min: Some(v - 0.01),
        max: Some(v + 0.02),
    }
}

#[test]
fn temporal_effects_fill_the_significant_dots() {
    let titles = ["det. cons.", "det. anchor", "adapt. cons.", "adapt. anchor"];
    let none = TemporalScore {
        score: None,
        p_value: None,
        n: 0,
        min: None,
        max: None,
    };
    let rows = vec![
        EffectsRow {
            model: "cnn_s".into(),
            scores: vec![
                score(-0.02, 0.01),
                score(-0.05, 0.002),
                score(0.01, 0.3),
                score(0.03, 0.04),
            ],
        },
        EffectsRow {
            model: "mlp_s".into(),
            scores: vec![score(-0.01, 0.2), none, score(0.0, 1.0), score(0.02, 0.01)],
        },
    ];
    let svg = temporal_effects(&titles, &rows, 100.0, "mean difference, accuracy ×100").unwrap();
    dump("temporal-effects", &svg);
    assert_balanced(&svg);
    // Two circles (fill, outline) per present score; 4 of the 7 are significant.
    assert_eq!(count(&svg, "<circle"), 2 * 7);
    let blue = colors::TAB10[0].hex();
    let filled = svg
        .lines()
        .filter(|l| l.starts_with("<circle") && l.contains(&format!("fill=\"{blue}\"")))
        .count();
    assert_eq!(filled, 4, "{svg}");
    // Every dot and bar lies inside its panel's frame, the outermost ones too.
    let frames: Vec<(i32, i32)> = svg
        .lines()
        .filter(|l| l.starts_with("<rect") && l.contains("fill=\"none\""))
        .map(|l| (attr(l, "x"), attr(l, "x") + attr(l, "width")))
        .collect();
    assert_eq!(frames.len(), 4);
    let mut xs: Vec<(i32, i32)> = svg
        .lines()
        .filter(|l| l.starts_with("<circle"))
        .map(|l| (attr(l, "cx") - attr(l, "r"), attr(l, "cx") + attr(l, "r")))
        .collect();
    xs.extend(
        svg.lines()
            .filter(|l| l.contains("stroke-width=\"2\" points="))
            .map(|l| {
                let points = l.split("points=\"").nth(1).unwrap();
                let points = points.split('"').next().unwrap();
                let x: Vec<i32> = points
                    .split_whitespace()
                    .map(|p| p.split(',').next().unwrap().parse().unwrap())
                    .collect();
                (x[0], x[1])
            }),
    );
    for (a, b) in xs {
        assert!(
            frames.iter().any(|(l, r)| *l < a && b < *r),
            "{a}..{b} is outside every panel {frames:?}"
        );
    }
    // On the ×100 scale the values span -6 to 5: ticks at -5, 0, 5 in each of 4 panels.
    assert_eq!(count(&svg, ">\n-5\n</text>"), 4, "{svg}");
    assert_eq!(count(&svg, ">\n5\n</text>"), 4, "{svg}");
    assert_eq!(
        temporal_effects(&titles, &rows, 100.0, "x").unwrap(),
        svg.replace("mean difference, accuracy ×100", "x")
    );
    let short = vec![EffectsRow {
        model: "x".into(),
        scores: vec![score(0.1, 0.5)],
    }];
    let e = temporal_effects(&titles, &short, 1.0, "x").unwrap_err();
    assert!(e.to_string().contains("one score per panel"), "{e}");
}

#[test]
fn saliency_grid_draws_one_rect_per_map_pixel() {
    let map: Vec<Vec<f64>> = (0..4)
        .map(|y| (0..4).map(|x| (x * y) as f64 / 9.0).collect())
        .collect();
    let grid = SaliencyGrid {
        rows: vec!["cnn_s".into(), "mlp_s".into()],
        columns: vec![
            "through 1940s, on 2010s".into(),
            "through 1990s, on 2010s".into(),
        ],
        maps: vec![
            vec![Some(&map[..]), Some(&map[..])],
            vec![Some(&map[..]), None],
        ],
        value_label: "saliency".into(),
    };
    let svg = saliency_grid(&grid).unwrap();
    dump("saliency", &svg);
    assert_balanced(&svg);
    // background, 3 maps of 16 pixels, 1 grey missing map, 4 frames, the colour bar.
    assert_eq!(
        count(&svg, "<rect"),
        1 + 3 * 16 + 1 + 4 + COLORBAR_STEPS + 1
    );
    assert!(svg.contains(&format!("fill=\"{}\"", EMPTY.hex())));
    assert!(svg.contains(&format!("fill=\"{}\"", colors::sequential(1.0).hex())));
    assert_eq!(saliency_grid(&grid).unwrap(), svg);

    let bad: Vec<Vec<f64>> = vec![vec![1.5; 4]; 4];
    let e = saliency_grid(&SaliencyGrid {
        maps: vec![vec![Some(&bad[..]), None], vec![None, None]],
        ..grid.clone()
    })
    .unwrap_err();
    assert!(e.to_string().contains("outside [0, 1]"), "{e}");
    let small: Vec<Vec<f64>> = vec![vec![0.5; 2]; 2];
    let e = saliency_grid(&SaliencyGrid {
        maps: vec![vec![Some(&map[..]), Some(&small[..])], vec![None, None]],
        ..grid.clone()
    })
    .unwrap_err();
    assert!(e.to_string().contains("different sizes"), "{e}");
}

/// Every figure prints its smallest text at 7 pt or more at the paper's scale, and the
/// measure is the SVG's smallest font size times that scale.
#[test]
fn figures_print_no_text_under_seven_points() {
    use drift::report::figures::{MIN_TEXT_PT, PT_PER_PX, printed_width, smallest_text_pt};
    let svg = heatmap(&grid(40), &labels(40), seq(), &HeatmapOptions::default()).unwrap();
    let smallest = smallest_text_pt(&svg).unwrap();
    assert!(smallest >= MIN_TEXT_PT, "{smallest}");
    let px: f64 = svg
        .split("font-size=\"")
        .skip(1)
        .map(|s| s.split('"').next().unwrap().parse::<f64>().unwrap())
        .fold(f64::INFINITY, f64::min);
    assert_eq!(smallest, px * PT_PER_PX);
    let width = printed_width(&svg).unwrap();
    assert!(
        width <= 482.0 / 2.0,
        "a heatmap fits two in a row: {width} pt"
    );
    let small = "<svg width=\"100\" height=\"10\"><text font-size=\"9\">x</text></svg>";
    assert_eq!(smallest_text_pt(small), Some(9.0 * PT_PER_PX));
    assert_eq!(printed_width(small).unwrap(), 100.0 * PT_PER_PX);
}

#[test]
fn a_training_history_has_one_line_per_cutoff_in_each_panel() {
    use drift::report::figures::{MIN_TEXT_PT, smallest_text_pt, training_history};
    let run = drift::artifacts::load_run(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/history-run/smoke-single/mlp_s/seed-0"
    )))
    .unwrap();
    let history = run.history.unwrap();
    let svg = training_history(&history).unwrap();
    dump("training-history", &svg);
    assert_balanced(&svg);
    // Two panels of one line per cutoff, and each cutoff's key in the legend.
    // (Black polylines are the axes' ticks.)
    assert_eq!(count(&svg, r#"stroke-width="2""#), 3 * history.len());
    for c in &history {
        assert!(svg.contains(&format!("\n{}\n", c.cutoff)), "{}", c.cutoff);
    }
    assert!(smallest_text_pt(&svg).unwrap() >= MIN_TEXT_PT);
    assert_eq!(svg, training_history(&history).unwrap());
    let empty: Vec<_> = history
        .iter()
        .map(|c| drift::artifacts::CutoffHistory {
            cutoff: c.cutoff.clone(),
            epochs: Vec::new(),
        })
        .collect();
    assert!(training_history(&empty).is_err());
}

#[test]
fn strength_curves_draw_a_bar_per_point_and_a_marker_per_kind() {
    use drift::report::figures::{StrengthLine, StrengthPanel, StrengthPoint, strength_curves};
    let line = |label: &str, slope: f64| StrengthLine {
        label: label.into(),
        points: [0.0, 0.25, 0.5, 1.0]
            .iter()
            .map(|&s| StrengthPoint {
                strength: s,
                mean: slope * s,
                min: slope * s - 1.0,
                max: slope * s + 1.5,
            })
            .collect(),
    };
    let panel = |title: &str| StrengthPanel {
        title: title.into(),
        lines: vec![
            line("covariate drift", 4.0),
            line("label drift", -0.5),
            line("concept drift", 20.0),
        ],
    };
    let panels = [panel("mlp_s"), panel("cnn_s")];
    let svg = strength_curves(&panels, "row-matched decay, balanced accuracy ×100").unwrap();
    dump("strength", &svg);
    assert_balanced(&svg);
    for text in [
        "mlp_s",
        "cnn_s",
        "covariate drift",
        "label drift",
        "concept drift",
        "drift strength",
    ] {
        assert!(svg.contains(&format!(">\n{text}\n</text>")), "{text}");
    }
    // One marker per point and one in the legend for each kind: circles (the first kind),
    // squares (the second) and triangles (the third).
    assert_eq!(count(&svg, "<circle"), 2 * 4 + 1);
    assert_eq!(count(&svg, "<polygon"), 2 * 4 + 1);
    assert_eq!(
        svg,
        strength_curves(&panels, "row-matched decay, balanced accuracy ×100").unwrap()
    );
    let smallest = drift::report::figures::smallest_text_pt(&svg).unwrap();
    assert!(
        smallest >= drift::report::figures::MIN_TEXT_PT,
        "{smallest}"
    );
    // Nothing above strength 0 is no sweep.
    let flat = StrengthPanel {
        title: "x".into(),
        lines: vec![StrengthLine {
            label: "none".into(),
            points: vec![StrengthPoint {
                strength: 0.0,
                mean: 0.0,
                min: 0.0,
                max: 0.0,
            }],
        }],
    };
    assert!(strength_curves(&[flat], "decay").is_err());
}
