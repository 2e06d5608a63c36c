//! Percentiles and medians.

use serde::Serialize;

/// Summary of a sample of values (milliseconds unless said otherwise).
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub(crate) struct Dist {
    pub n: usize,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
}

impl Dist {
    pub(crate) fn of(values: impl IntoIterator<Item = f64>) -> Dist {
        let mut v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return Dist {
                n: 0,
                p50: f64::NAN,
                p90: f64::NAN,
                p99: f64::NAN,
                mean: f64::NAN,
                min: f64::NAN,
                max: f64::NAN,
            };
        }
        v.sort_by(|a, b| a.total_cmp(b));
        Dist {
            n: v.len(),
            p50: percentile(&v, 50.0),
            p90: percentile(&v, 90.0),
            p99: percentile(&v, 99.0),
            mean: v.iter().sum::<f64>() / v.len() as f64,
            min: v[0],
            max: v[v.len() - 1],
        }
    }
}

/// Nearest-rank percentile of sorted values.
pub(crate) fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Median (mean of the two middle values for an even count).
pub(crate) fn median(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 50.0);
        assert_eq!(percentile(&v, 99.0), 99.0);
        assert_eq!(percentile(&v, 100.0), 100.0);
        assert_eq!(percentile(&[7.0], 99.0), 7.0);
        assert!(percentile(&[], 50.0).is_nan());
    }

    #[test]
    fn dist_and_median() {
        let d = Dist::of([3.0, 1.0, 2.0, f64::NAN]);
        assert_eq!((d.n, d.p50, d.min, d.max), (3, 2.0, 1.0, 3.0));
        assert_eq!(median([4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(std::iter::empty()).is_nan());
    }
}
