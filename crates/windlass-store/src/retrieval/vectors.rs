//! Embeddings at rest and their similarity: little-endian f32 blobs (SQLite;
//! Postgres without pgvector reads `real[]`), cosine similarity, top-k.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// The blob of `v`: 4 bytes per dimension, little-endian.
#[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
pub(crate) fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The vector of a blob; `None` when its length is not a whole number of
/// floats (a corrupt row, skipped).
#[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
pub(crate) fn from_blob(b: &[u8]) -> Option<Vec<f32>> {
    if !b.len().is_multiple_of(4) {
        return None;
    }
    Some(
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

/// Cosine similarity; `None` for different dimensions or a zero vector.
pub(crate) fn cosine(a: &[f32], b: &[f32]) -> Option<f32> {
    if a.len() != b.len() || a.is_empty() {
        return None;
    }
    let (mut dot, mut na, mut nb) = (0f32, 0f32, 0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    let norm = (na * nb).sqrt();
    (norm > 0.0 && norm.is_finite()).then(|| dot / norm)
}

/// Keeps the `k` most similar keys seen, with a bounded heap (memory stays
/// `k` however many chunks are scanned).
pub(crate) struct TopK {
    k: usize,
    heap: BinaryHeap<Entry>,
}

/// Ordered so the heap's top is the worst kept entry.
struct Entry(f32, i64);

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        // Lower similarity is "greater" (popped first); among equals the
        // later key goes first, so the earliest chunks are kept.
        other.0.total_cmp(&self.0).then(self.1.cmp(&other.1))
    }
}

impl TopK {
    pub(crate) fn new(k: usize) -> TopK {
        TopK {
            k,
            heap: BinaryHeap::with_capacity(k + 1),
        }
    }

    pub(crate) fn push(&mut self, key: i64, similarity: f32) {
        if self.k == 0 || !similarity.is_finite() {
            return;
        }
        self.heap.push(Entry(similarity, key));
        if self.heap.len() > self.k {
            self.heap.pop();
        }
    }

    /// The keys, most similar first.
    pub(crate) fn into_ranking(self) -> Vec<i64> {
        let mut v = self.heap.into_vec();
        v.sort();
        v.into_iter().map(|e| e.1).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_round_trip() {
        let v = vec![0.5f32, -1.25, 3.0e-8];
        assert_eq!(from_blob(&to_blob(&v)), Some(v));
        assert_eq!(from_blob(&[1, 2, 3]), None);
    }

    #[test]
    fn cosine_of_kinds() {
        assert_eq!(cosine(&[1.0, 0.0], &[2.0, 0.0]), Some(1.0));
        assert_eq!(cosine(&[1.0, 0.0], &[0.0, 1.0]), Some(0.0));
        assert_eq!(cosine(&[1.0], &[1.0, 0.0]), None);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), None);
    }

    #[test]
    fn top_k_keeps_the_best() {
        let mut t = TopK::new(2);
        for (k, s) in [(1, 0.1), (2, 0.9), (3, 0.5), (4, f32::NAN), (5, 0.9)] {
            t.push(k, s);
        }
        assert_eq!(t.into_ranking(), vec![2, 5]);
    }
}
