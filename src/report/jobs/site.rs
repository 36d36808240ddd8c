//! The gallery's jobs: its index, its explorer and one page per study
//! ([`crate::report::site`]).

use super::hashed::Hashed;
use super::job::OutputJob;
use crate::report::site;
use crate::report::study::LoadedStudy;

/// The gallery's pages ([`site`]): the index and the explorer, made from every study's
/// inputs, and one page per study, made from its own; `tables` holds each study's tables
/// as HTML.
pub fn site_jobs(
    studies: &[LoadedStudy],
    tables: Vec<Vec<String>>,
    hashed: &Hashed,
) -> Vec<OutputJob> {
    let studies = std::sync::Arc::new(studies.to_vec());
    let mut jobs = Vec::new();
    for (at, (study, tables)) in studies.iter().zip(tables).enumerate() {
        let pages = std::sync::Arc::clone(&studies);
        jobs.push(OutputJob::new(
            format!("{}/{}", site::DIR, site::study_file(&study.spec.name)),
            hashed.with_models([at]),
            move || Ok(site::study_page(&pages, at, &tables).into_bytes()),
        ));
    }
    let pages = std::sync::Arc::clone(&studies);
    jobs.push(OutputJob::new(
        format!("{}/index.html", site::DIR),
        hashed.all(),
        move || Ok(site::index_page(&pages).into_bytes()),
    ));
    jobs.push(OutputJob::new(
        format!("{}/{}", site::DIR, site::explorer::FILE),
        hashed.all(),
        move || Ok(site::explorer::page(&studies).into_bytes()),
    ));
    jobs
}
