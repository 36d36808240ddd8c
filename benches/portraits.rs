//! Generation speed of the synthetic sources on one core: 100k `synthetic-portraits`
//! images (100 years x 1000 rows) and, for comparison, 100k `synthetic-text` rows, each
//! timed over a few repetitions (best and median). No libtorch needed:
//! `cargo bench --bench portraits`.

use std::path::Path;
use std::time::Instant;

use drift::data::{self, Inputs};
use drift::data::{DataOptions, DataSpec};

const REPEATS: usize = 5;

fn time(source: &str, extra: &[(&str, serde_json::Value)]) {
    let mut options: DataOptions = [
        ("start", 1905.into()),
        ("end", 2004.into()),
        ("rows_per_year", 1000.into()),
    ]
    .into_iter()
    .chain(extra.iter().cloned())
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    options.retain(|_, v| !v.is_null());
    let spec = DataSpec::Source(source.into());
    let mut seconds = Vec::new();
    let mut rows = 0;
    for _ in 0..REPEATS {
        let start = Instant::now();
        let data = data::load(&spec, &options, Path::new(".")).expect("generates");
        seconds.push(start.elapsed().as_secs_f64());
        rows = data.rows();
        let values = match &data.inputs {
            Inputs::Images { pixels, .. } => pixels.len(),
            Inputs::Tokens { states, .. } => states.len(),
            _ => 0,
        };
        std::hint::black_box(values);
    }
    seconds.sort_by(f64::total_cmp);
    let (best, median) = (seconds[0], seconds[REPEATS / 2]);
    println!(
        "{source:<20} {rows} rows: best {best:.3} s, median {median:.3} s ({:.0} rows/s at best)",
        rows as f64 / best
    );
}

fn main() {
    println!("one thread, {REPEATS} repetitions, including the data set check");
    time("synthetic-portraits", &[]);
    time("synthetic-text", &[("task", "multi-label".into())]);
}
