//! How rare an outcome may be that `k` of `n` instances showed: the exact
//! one-sided upper confidence bound on its rate (Clopper-Pearson). The
//! bound `p` is where seeing at most `k` in `n` instances has probability
//! `1 - confidence`: `P(X <= k | n, p) = 1 - confidence`, the
//! `confidence` quantile of Beta(k + 1, n - k). With `k = 0` it is
//! `1 - (1 - confidence)^(1/n)` (at 95 %, about 3/n, the rule of three);
//! with `k = n`, 1. An escalation that never provoked an outcome records
//! this bound.
//!
//! And whether two rates differ beyond sampling: the pooled two-proportion
//! z ([`two_proportion_z`]) and the `|z|` a rate change must reach,
//! [`RATE_Z`] (`report diff` and the spread use both).

/// The z a rate change must reach (two-sided).
pub const RATE_Z: f64 = 4.0;

/// The two-proportion z of `x1/n1` against `x2/n2` (pooled), `None` when
/// both rates are 0 or both 1.
pub fn two_proportion_z(x1: u64, n1: u64, x2: u64, n2: u64) -> Option<f64> {
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let (x1, n1, x2, n2) = (x1 as f64, n1 as f64, x2 as f64, n2 as f64);
    let p = (x1 + x2) / (n1 + n2);
    if p <= 0.0 || p >= 1.0 {
        return None;
    }
    Some((x2 / n2 - x1 / n1) / (p * (1.0 - p) * (1.0 / n1 + 1.0 / n2)).sqrt())
}

/// The one-sided 95 % upper bound on a rate from `k` observations in `n`
/// instances; `None` when `n` is 0 or `k > n` (nothing to bound).
pub fn rate_upper_95(k: u64, n: u64) -> Option<f64> {
    rate_upper(k, n, 0.95)
}

/// The one-sided upper bound at `confidence` (in (0, 1)) on a rate from
/// `k` observations in `n` instances; `None` when `n` is 0, `k > n` or the
/// confidence is not in (0, 1).
pub fn rate_upper(k: u64, n: u64, confidence: f64) -> Option<f64> {
    if n == 0 || k > n || !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let alpha = 1.0 - confidence;
    if k == n {
        return Some(1.0);
    }
    if k == 0 {
        // -expm1(ln(alpha) / n): exact, and accurate for large n.
        return Some(-(alpha.ln() / n as f64).exp_m1());
    }
    // P(X <= k) falls as p grows: bisect between the observed rate and 1.
    let (mut lo, mut hi) = (k as f64 / n as f64, 1.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if binomial_cdf(k, n, mid) > alpha {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= f64::EPSILON * hi {
            break;
        }
    }
    Some(0.5 * (lo + hi))
}

/// `P(X <= k)` for X binomial(n, p), 0 <= k < n: the regularized
/// incomplete beta `I_{1-p}(n - k, k + 1)`.
fn binomial_cdf(k: u64, n: u64, p: f64) -> f64 {
    incomplete_beta((n - k) as f64, (k + 1) as f64, 1.0 - p)
}

/// The regularized incomplete beta `I_x(a, b)` (Numerical Recipes 6.4: the
/// continued fraction, on the side where it converges fast).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (-x).ln_1p();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * continued_fraction(a, b, x) / a
    } else {
        1.0 - ln_front.exp() * continued_fraction(b, a, 1.0 - x) / b
    }
}

/// The continued fraction of the incomplete beta (modified Lentz).
fn continued_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    // Converges in O(sqrt(max(a, b))) terms; instance counts stay far
    // below 10^12.
    for m in 1..1_000_000u32 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let step = |num: f64, c: &mut f64, d: &mut f64| {
            *d = 1.0 + num * *d;
            if d.abs() < TINY {
                *d = TINY;
            }
            *c = 1.0 + num / *c;
            if c.abs() < TINY {
                *c = TINY;
            }
            *d = 1.0 / *d;
            *d * *c
        };
        h *= step(m * (b - m) * x / ((qam + m2) * (a + m2)), &mut c, &mut d);
        let del = step(
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
            &mut c,
            &mut d,
        );
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// `ln Γ(x)` for x > 0 (Lanczos, g = 7, n = 9: about 15 digits).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 - x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + G + 0.5;
    let sum = C[1..]
        .iter()
        .enumerate()
        .fold(C[0], |s, (i, c)| s + c / (x + i as f64 + 1.0));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64) -> bool {
        (got - want).abs() <= 1e-9 * want.max(1e-12)
    }

    /// Against the exact binomial sums (bisected to machine precision,
    /// independently of this code) and the published one-sided 95 %
    /// Clopper-Pearson bounds (1 of 10: 0.3942; 50 of 100: 0.5864).
    #[test]
    fn known_values() {
        let cases: [(u64, u64, f64); 11] = [
            (0, 1, 0.95),
            (0, 10, 0.258_865_550_893_052_3),
            (1, 10, 0.394_163_302_436_504_9),
            (5, 10, 0.777_558_898_991_870_9),
            (9, 10, 0.994_883_803_108_176_4),
            (2, 30, 0.195_326_043_654_926_06),
            (50, 100, 0.586_378_285_369_088_2),
            (3, 1000, 0.007_735_244_718_479_473),
            (100, 100_000, 0.001_180_685_969_178_641_3),
            (7, 264_192, 4.976_668_792_295_098e-5),
            (0, 528_384, 5.669_595_940_168_889e-6),
        ];
        for (k, n, want) in cases {
            let got = rate_upper_95(k, n).unwrap();
            assert!(close(got, want), "{k} of {n}: {got}, want {want}");
        }
    }

    #[test]
    fn zero_observed_is_the_closed_form_and_the_edges_are_handled() {
        for n in [1, 7, 64, 264_192, 1 << 40] {
            let want = 1.0 - 0.05f64.powf(1.0 / n as f64);
            let got = rate_upper_95(0, n).unwrap();
            assert!(
                (got - want).abs() <= 1e-12 * want.max(1e-12) + 1e-16,
                "{n}: {got} {want}"
            );
        }
        // Three in n, about: the rule of three.
        assert!((rate_upper_95(0, 1_000_000).unwrap() * 1e6 - 2.9957).abs() < 1e-3);
        assert_eq!(rate_upper_95(4, 4), Some(1.0));
        assert_eq!(rate_upper_95(0, 0), None);
        assert_eq!(rate_upper_95(5, 4), None);
        assert_eq!(rate_upper(1, 10, 1.0), None);
        // A higher confidence, a higher bound; more instances, a lower one.
        assert!(rate_upper(1, 10, 0.99).unwrap() > rate_upper_95(1, 10).unwrap());
        assert!(rate_upper_95(1, 100).unwrap() < rate_upper_95(1, 10).unwrap());
    }

    #[test]
    fn the_gamma_function() {
        assert!(ln_gamma(1.0).abs() < 1e-14);
        assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-13);
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-13);
        assert!((ln_gamma(100.0) - 359.134_205_369_575_4).abs() < 1e-9);
    }
}
