//! Reciprocal rank fusion of the keyword and embedding rankings, and the
//! score a hit reports.
//!
//! A chunk at rank `r` (from 1) of a ranking with weight `w` earns
//! `w / (K + r)`; its fused score is the sum over the rankings it appears
//! in, divided by what first place in every ranking would earn. So a score
//! is in 0..=1: 1 means first in every ranking used, about 0.5 first in one
//! of two equally weighted rankings and absent from the other. Ties keep
//! the order of the first ranking (keyword) so results are deterministic.

use std::collections::HashMap;

use windlass_protocol::HybridSearch;

/// RRF's damping constant (the value of the original paper, used widely).
pub(crate) const K: f64 = 60.0;

/// How many chunks each ranking contributes to the fusion.
pub(crate) const CANDIDATES: usize = 100;

/// The fused top `limit` of `rankings` (chunk keys, best first, each with
/// its weight), with scores, dropping those below `threshold`.
pub(crate) fn fuse(
    rankings: &[(&[i64], f64)],
    limit: usize,
    threshold: Option<f64>,
) -> Vec<(i64, f64)> {
    let best: f64 = rankings.iter().map(|(_, w)| w / (K + 1.0)).sum();
    if best <= 0.0 {
        return Vec::new();
    }
    let mut scores: HashMap<i64, (f64, usize)> = HashMap::new();
    let mut order = 0usize;
    for (ranking, weight) in rankings {
        for (rank, key) in ranking.iter().enumerate() {
            let entry = scores.entry(*key).or_insert_with(|| {
                order += 1;
                (0.0, order)
            });
            entry.0 += weight / (K + rank as f64 + 1.0);
        }
    }
    let mut fused: Vec<(i64, f64, usize)> = scores
        .into_iter()
        .map(|(k, (s, o))| (k, s / best, o))
        .collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
    fused
        .into_iter()
        .filter(|(_, s, _)| threshold.is_none_or(|t| *s >= t))
        .take(limit)
        .map(|(k, s, _)| (k, s))
        .collect()
}

/// The (keyword, embedding) weights: the request's, or equal. Negative or
/// non-finite weights count as zero.
pub(crate) fn weights(requested: Option<HybridSearch>) -> (f64, f64) {
    let clean = |w: f64| if w.is_finite() && w > 0.0 { w } else { 0.0 };
    match requested {
        Some(h) => (clean(h.text_weight), clean(h.embedding_weight)),
        None => (1.0, 1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_everywhere_scores_one() {
        let kw = [1, 2, 3];
        let vec = [1, 3, 2];
        let out = fuse(&[(&kw, 1.0), (&vec, 1.0)], 10, None);
        assert_eq!(out[0], (1, 1.0));
        assert_eq!(out.len(), 3);
        assert!(out.windows(2).all(|w| w[0].1 >= w[1].1));
    }

    #[test]
    fn one_sided_hits_score_about_half_and_threshold_cuts() {
        let kw = [7];
        let vec = [8];
        let out = fuse(&[(&kw, 1.0), (&vec, 1.0)], 10, None);
        assert_eq!(out.len(), 2);
        assert!((out[0].1 - 0.5).abs() < 1e-9);
        assert_eq!(out[0].0, 7, "ties keep keyword order");
        assert!(fuse(&[(&kw, 1.0), (&vec, 1.0)], 10, Some(0.6)).is_empty());
    }

    #[test]
    fn weights_shift_the_order_and_limit_applies() {
        let kw = [1, 2];
        let vec = [2, 1];
        let out = fuse(&[(&kw, 0.2), (&vec, 0.8)], 1, None);
        assert_eq!(out, vec![(2, out[0].1)]);
        assert_eq!(weights(None), (1.0, 1.0));
        let h = HybridSearch {
            embedding_weight: f64::NAN,
            text_weight: 2.0,
        };
        assert_eq!(weights(Some(h)), (2.0, 0.0));
        assert!(fuse(&[(&kw, 0.0)], 5, None).is_empty());
    }

    #[test]
    fn single_ranking_scores_decay_slowly() {
        let kw: Vec<i64> = (0..5).collect();
        let out = fuse(&[(&kw, 1.0)], 5, None);
        assert_eq!(out[0].1, 1.0);
        assert!((out[1].1 - 61.0 / 62.0).abs() < 1e-12);
    }
}
