//! Where training's randomness comes from: the per-cutoff training seed and the batch
//! order of each epoch. Plain functions without libtorch, so the checkpoint id and the
//! tests derive them as training does.

/// The per-cutoff training seed of the reference: the first 4 bytes (big-endian) of
/// `sha256("{seed}:{model}:{cutoff}")`, where `cutoff` is the cutoff slice's label.
pub fn training_seed(seed: u64, model: &str, cutoff: &str) -> u32 {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(format!("{seed}:{model}:{cutoff}").as_bytes());
    u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]])
}

/// The order training visits `rows` in epoch `epoch` (from 1): the rows sorted, then
/// shuffled by the ChaCha20 stream `drift-batches-v1:{training_seed}:{epoch}`. Batches
/// are consecutive chunks of it.
pub fn epoch_order(rows: &[usize], training_seed: u32, epoch: u64) -> Vec<usize> {
    let mut order = rows.to_vec();
    order.sort_unstable();
    let mut rng = crate::slices::stream(
        "drift-batches-v1",
        u64::from(training_seed),
        &epoch.to_string(),
    );
    crate::slices::shuffle(&mut rng, &mut order);
    order
}
