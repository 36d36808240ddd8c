//! The table of a study's label-free detectors, read from its analysis
//! ([`crate::analysis::StudyAnalysis::detectors`]): how well each tracks the true drop.

use crate::analysis::StudyAnalysis;
use crate::detectors::{DetectorKind, detector_named};
use crate::table::{Column, Format, Table};
use crate::{Error, Result};

/// Decimals of a Spearman correlation.
const RHO_DECIMALS: usize = 2;
/// Models whose seeds' spread the printed table shows; a study with more prints each
/// model's mean alone (and no `measures`), so the table fits the page. The CSV keeps all.
const SPREAD_MODELS: usize = 4;

/// The detectors ranked by how well they track the true drop, `None` for a study without
/// detectors: `rank`, `detector`, `kind`, `measures`; per trained model (by key) its
/// Spearman correlation with the true drop as `mean ± sd` over `[min, max]` of its seeds;
/// `mean` over the models (the ranking), and `MAE` of the accuracy estimates (accuracy
/// ×100, mean over seeds, then models).
pub fn detectors_table(study: &StudyAnalysis) -> Result<Option<Table>> {
    let (Some(ranked), Some(mut models)) = (&study.detectors, study.detector_models()) else {
        return Ok(None);
    };
    models.sort_by(|a, b| a.0.model.cmp(&b.0.model));
    let known = |name: &str| {
        detector_named(name)
            .ok_or_else(|| Error::Invalid(format!("table detectors: unknown detector {name}")))
    };
    let mut kind = Vec::new();
    let mut about = Vec::new();
    for r in ranked {
        let d = known(r.detector)?;
        kind.push(
            match d.kind {
                DetectorKind::Representation => "representation",
                DetectorKind::Output => "output",
                DetectorKind::Estimate => "estimate",
            }
            .to_string(),
        );
        about.push(d.about.to_string());
    }
    let mut rank = 0;
    let mut columns = vec![
        Column::ints(
            "rank",
            ranked
                .iter()
                .map(|r| {
                    r.spearman.map(|_| {
                        rank += 1;
                        rank
                    })
                })
                .collect(),
        ),
        Column::text(
            "detector",
            ranked.iter().map(|r| r.detector.into()).collect(),
        ),
        Column::text("kind", kind),
        Column::text("measures", about),
    ];
    let spread = models.len() <= SPREAD_MODELS;
    let measures = if spread { Format::Text } else { Format::Hidden };
    let mut formats = vec![Format::Integer, Format::Text, Format::Text, measures];
    for (m, d) in &models {
        let of = |f: &dyn Fn(&crate::analysis::DetectorBacktest) -> Option<f64>| {
            ranked
                .iter()
                .map(|r| d.detector(r.detector).and_then(f))
                .collect::<Vec<_>>()
        };
        let extreme = |b: &crate::analysis::DetectorBacktest, max: bool| {
            b.spearman
                .iter()
                .flatten()
                .copied()
                .reduce(if max { f64::max } else { f64::min })
        };
        let name = &m.model;
        columns.push(Column::floats(name, of(&|b| b.spearman_mean)));
        columns.push(Column::floats(
            &format!("{name} sd"),
            of(&|b| b.spearman_std),
        ));
        columns.push(Column::floats(
            &format!("{name} min"),
            of(&|b| extreme(b, false)),
        ));
        columns.push(Column::floats(
            &format!("{name} max"),
            of(&|b| extreme(b, true)),
        ));
        formats.push(if spread {
            Format::Spread {
                decimals: RHO_DECIMALS,
                sd: format!("{name} sd"),
                min: format!("{name} min"),
                max: format!("{name} max"),
            }
        } else {
            Format::Fixed(RHO_DECIMALS)
        });
        formats.extend([Format::Hidden, Format::Hidden, Format::Hidden]);
    }
    columns.push(Column::floats(
        "mean",
        ranked.iter().map(|r| r.spearman).collect(),
    ));
    columns.push(Column::floats(
        "MAE",
        ranked.iter().map(|r| r.mae.map(|v| v * 100.0)).collect(),
    ));
    formats.extend([Format::Fixed(RHO_DECIMALS), Format::Fixed(2)]);
    let seeds: Vec<usize> = models.iter().map(|(_, d)| d.seeds.len()).collect();
    let (fewest, most) = (
        seeds.iter().min().copied().unwrap_or(0),
        seeds.iter().max().copied().unwrap_or(0),
    );
    let seeds = if fewest == most {
        format!("{most}")
    } else {
        format!("{fewest} to {most}")
    };
    let per_model = if spread {
        format!("mean ± sd over {seeds} seeds, their range below")
    } else {
        format!(
            "the mean over {seeds} seeds (the table's CSV has each model's sd and range, \
             and what each detector measures)"
        )
    };
    let table = Table::from_columns(
        "detectors",
        &format!(
            "Label-free drift detectors against the true drop M[i][i] − M[i][j] ({}) of \
             every cell after the diagonal: per model, Spearman's ρ between the detector \
             (oriented so that larger means more shift) and the drop, {per_model}; mean: \
             over the models, which ranks the detectors; MAE: the accuracy estimates' mean \
             absolute error against the true accuracy (accuracy ×100). Every row of the \
             matrix, collapsed checkpoints included.",
            study.metric.name()
        ),
        columns,
        formats,
    )?;
    let mut widths = vec!["auto", "auto", "auto"];
    if spread {
        widths.push("1fr");
    }
    widths.extend(models.iter().map(|_| "auto"));
    widths.extend(["auto", "auto"]);
    let table = table.with_typst_widths(&widths)?;
    Ok(Some(if spread {
        table
    } else {
        // Ten models' names across would not fit: upright, over narrow numbers.
        table.with_typst_upright_names_after(3)
    }))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::analysis::{SeedDetectors, StudyModel};
    use crate::detectors::DetectorMatrices;
    use crate::matrix::{DriftMatrix, Grid};
    use crate::metrics::Metric;

    fn upper(a: f64, b: f64, c: f64) -> Vec<Vec<Option<f64>>> {
        vec![
            vec![None, Some(a), Some(b)],
            vec![None, None, Some(c)],
            vec![None, None, None],
        ]
    }

    fn matrix(seeds: &[u64]) -> DriftMatrix {
        let mut m = DriftMatrix::new(vec!["a".into(), "b".into(), "c".into()], Metric::Accuracy);
        for &seed in seeds {
            // Drops 0.1, 0.3 (row 0) and 0.2 (row 1).
            let rows = [[0.9, 0.8, 0.6], [0.9, 0.9, 0.7], [0.9, 0.9, 0.9]];
            let grid = Grid::from_rows(&rows.map(|r| r.map(Some).to_vec())).unwrap();
            m.add_seed(seed, grid).unwrap();
        }
        m
    }

    #[test]
    fn detectors_rank_by_their_correlation_with_the_drop_and_need_every_trained_model() {
        let (m, base) = (matrix(&[0, 1]), matrix(&[0]));
        // ks tracks the drops exactly (rho 1), mmd backwards (rho -1); atc misses the true
        // accuracy by 0.1 in every cell.
        let file = DetectorMatrices {
            schema: crate::detectors::SCHEMA,
            slices: vec!["a".into(), "b".into(), "c".into()],
            sample_rows: 1,
            permutations: 1,
            detectors: BTreeMap::from([
                ("mmd".to_string(), upper(3.0, 1.0, 2.0)),
                ("ks".to_string(), upper(1.0, 3.0, 2.0)),
                ("atc".to_string(), upper(0.9, 0.7, 0.8)),
            ]),
            accuracy: Some(upper(0.8, 0.6, 0.7)),
            id_priors: None,
            estimated_priors: None,
        };
        let files = [&file, &file];
        let model = |detectors| StudyModel {
            model: "m",
            key: "m",
            family: "f",
            matrix: &m,
            baseline: false,
            detectors,
        };
        let baseline = StudyModel {
            model: "majority",
            key: "majority",
            family: "baseline",
            matrix: &base,
            baseline: true,
            detectors: None,
        };
        let runs = SeedDetectors {
            matrix: &m,
            detectors: &files,
        };
        let study = StudyAnalysis::new(&[model(Some(runs)), baseline]).unwrap();
        let table = detectors_table(&study).unwrap().unwrap();
        let csv = table.csv();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[0],
            "rank,detector,kind,measures,m,m sd,m min,m max,mean,MAE"
        );
        // ks (1) first; atc (estimated accuracy, oriented: lower = more shift) tracks the
        // drop as well, then mmd (-1); MAE 0.1 = 10 points.
        assert!(lines[1].starts_with("1,ks,representation,"), "{csv}");
        assert!(lines[2].starts_with("2,atc,estimate,"), "{csv}");
        assert!(lines[2].contains(",1,0,1,1,1,10.0000"), "{csv}");
        assert!(
            table
                .typst()
                .contains(r#""1.00 ± 0.00\n[1.00, 1.00]", "1.00", "10.00""#),
            "{}",
            table.typst()
        );
        assert!(lines[3].starts_with("3,mmd,"), "{csv}");
        assert!(table.caption.contains("over 2 seeds"));
        let without = StudyAnalysis::new(&[model(None), baseline]).unwrap();
        assert_eq!(detectors_table(&without).unwrap(), None);
    }
}
