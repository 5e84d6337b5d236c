//! Summary statistics of a figure's samples.

/// Median, 10th and 90th percentiles, min and max of the samples (the
/// baseline schema's).
pub use gridcheck_report::baseline::Summary;

/// The `q`-quantile (0..=1) of sorted samples, by linear interpolation
/// between the closest ranks (numpy's default): rank `q * (n - 1)`.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let frac = pos - lo as f64;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * frac)
}

/// Summarises samples; `None` when there are none or one is not finite.
pub fn summarize(samples: &[f64]) -> Option<Summary> {
    if samples.is_empty() || samples.iter().any(|s| !s.is_finite()) {
        return None;
    }
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    Some(Summary {
        median: quantile_sorted(&s, 0.5)?,
        p10: quantile_sorted(&s, 0.1)?,
        p90: quantile_sorted(&s, 0.9)?,
        min: s[0],
        max: s[s.len() - 1],
        n: s.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate() {
        let s = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile_sorted(&s, 0.5), Some(2.5));
        assert_eq!(quantile_sorted(&s, 0.0), Some(1.0));
        assert_eq!(quantile_sorted(&s, 1.0), Some(4.0));
        assert!((quantile_sorted(&s, 0.1).unwrap() - 1.3).abs() < 1e-12);
        assert_eq!(quantile_sorted(&[], 0.5), None);
        assert_eq!(quantile_sorted(&s, 1.5), None);
    }

    #[test]
    fn summary_of_unsorted_samples() {
        let samples: Vec<f64> = (1..=11).rev().map(f64::from).collect();
        let s = summarize(&samples).unwrap();
        assert_eq!((s.median, s.min, s.max, s.n), (6.0, 1.0, 11.0, 11));
        assert!((s.p10 - 2.0).abs() < 1e-12 && (s.p90 - 10.0).abs() < 1e-12);
        assert_eq!(summarize(&[3.0]).unwrap().p90, 3.0);
        assert!(summarize(&[]).is_none());
        assert!(summarize(&[1.0, f64::NAN]).is_none());
    }
}
