//! Hand-written SVG bar charts: horizontal bars with value labels, some
//! highlighted, optional error whiskers and an optional log scale. Used for
//! outcome histograms (highlighted: states satisfying the condition) and
//! benchmark figures (median with p10–p90 whiskers).

use std::fmt::Write as _;

use gridcheck_report::HardwareResult;
use gridcheck_spec::{Litmus, render_state};

use crate::text::html;

/// One bar.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    /// (low, high) drawn as a whisker over the bar.
    pub whisker: Option<(f64, f64)>,
    pub highlight: bool,
    /// The text after the bar (the count, `1.23 us`, ...).
    pub value_label: String,
}

/// A horizontal bar chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub title: String,
    /// What the bars measure (`instances`, `us`).
    pub axis: String,
    pub bars: Vec<Bar>,
    /// log10(1 + value) instead of value.
    pub log_scale: bool,
    /// Legend entries: (highlighted, text).
    pub legend: Vec<(bool, String)>,
}

const ROW: f64 = 24.0;
const BAR_W: f64 = 360.0;
const CHAR_W: f64 = 7.2;
const TOP: f64 = 34.0;
pub const HIGHLIGHT: &str = "#d9480f";
pub const PLAIN: &str = "#5c7cfa";

impl Chart {
    /// The largest value the axis must reach (bars and whiskers).
    fn max(&self) -> f64 {
        self.bars
            .iter()
            .map(|b| b.whisker.map_or(b.value, |(_, hi)| hi.max(b.value)))
            .fold(0.0, f64::max)
    }

    /// The x offset (from the bars' origin) of a value.
    pub fn scale(&self, v: f64) -> f64 {
        let max = self.max();
        if max <= 0.0 || v <= 0.0 {
            return 0.0;
        }
        let f = if self.log_scale {
            (1.0 + v).log10() / (1.0 + max).log10()
        } else {
            v / max
        };
        // A value above zero stays visible.
        (f.clamp(0.0, 1.0) * BAR_W).max(2.0)
    }
}

fn f1(x: f64) -> String {
    format!("{x:.1}")
}

/// A measured value with four significant digits: `2.083`, `155400`, `0.2235`.
pub fn sig(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = 3 - x.abs().log10().floor() as i32;
    if digits <= 0 {
        format!("{x:.0}")
    } else {
        format!("{x:.*}", digits as usize)
    }
}

/// The chart as one SVG element with no blank line (so Markdown keeps it as
/// one HTML block).
pub fn bar_chart(c: &Chart) -> String {
    let longest = c
        .bars
        .iter()
        .map(|b| b.label.chars().count())
        .max()
        .unwrap_or(0);
    let label_w = (longest as f64 * CHAR_W + 12.0).clamp(60.0, 720.0);
    let value_w = c
        .bars
        .iter()
        .map(|b| b.value_label.chars().count())
        .max()
        .unwrap_or(0) as f64
        * CHAR_W
        + 16.0;
    let width = (label_w + BAR_W + value_w + 10.0).max(c.title.chars().count() as f64 * 8.0 + 8.0);
    let legend_h = if c.legend.is_empty() { 0.0 } else { 22.0 };
    let height = TOP + ROW * c.bars.len().max(1) as f64 + 22.0 + legend_h;
    let x0 = label_w;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"gc-chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" style=\"max-width:100%;height:auto\" role=\"img\" aria-label=\"{t}\" font-family=\"monospace\" font-size=\"12\">",
        w = f1(width),
        h = f1(height),
        t = html(&c.title)
    );
    let _ = write!(s, "<title>{}</title>", html(&c.title));
    let _ = write!(
        s,
        "<text x=\"4\" y=\"18\" font-size=\"13\" font-weight=\"bold\" fill=\"currentColor\">{}</text>",
        html(&c.title)
    );
    if c.bars.is_empty() {
        let _ = write!(
            s,
            "<text x=\"4\" y=\"{}\" fill=\"currentColor\">no data</text>",
            f1(TOP + 16.0)
        );
    }
    for (i, b) in c.bars.iter().enumerate() {
        bar(&mut s, c, x0, i, b);
    }
    axis_and_legend(&mut s, c, x0);
    s.push_str("</svg>");
    s
}

/// Bar `i`: its label, its bar, its whisker if it has one, its value.
fn bar(s: &mut String, c: &Chart, x0: f64, i: usize, b: &Bar) {
    let y = TOP + ROW * i as f64;
    let w = c.scale(b.value);
    let color = if b.highlight { HIGHLIGHT } else { PLAIN };
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"currentColor\">{}</text>",
        f1(x0 - 6.0),
        f1(y + 15.0),
        html(&b.label)
    );
    let _ = write!(
        s,
        "<rect class=\"gc-bar{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{color}\"><title>{}: {}</title></rect>",
        if b.highlight { " gc-hi" } else { "" },
        f1(x0),
        f1(y + 3.0),
        f1(w),
        f1(ROW - 6.0),
        html(&b.label),
        html(&b.value_label)
    );
    let mut text_x = x0 + w + 6.0;
    if let Some((lo, hi)) = b.whisker {
        let (a, z) = (x0 + c.scale(lo), x0 + c.scale(hi));
        let mid = y + ROW / 2.0;
        let _ = write!(
            s,
            "<path class=\"gc-whisker\" d=\"M{a} {mid}H{z}M{a} {t}V{u}M{z} {t}V{u}\" stroke=\"currentColor\" stroke-width=\"1.5\" fill=\"none\"/>",
            a = f1(a),
            z = f1(z),
            mid = f1(mid),
            t = f1(mid - 5.0),
            u = f1(mid + 5.0)
        );
        text_x = text_x.max(z + 6.0);
    }
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{}\" fill=\"currentColor\">{}</text>",
        f1(text_x),
        f1(y + 15.0),
        html(&b.value_label)
    );
}

/// The value axis with its label, and the legend if the chart has one.
fn axis_and_legend(s: &mut String, c: &Chart, x0: f64) {
    let axis_y = TOP + ROW * c.bars.len().max(1) as f64 + 2.0;
    let _ = write!(
        s,
        "<path d=\"M{x0} {y0}V{y1}H{x1}\" stroke=\"currentColor\" stroke-width=\"1\" fill=\"none\"/>",
        x0 = f1(x0),
        y0 = f1(TOP),
        y1 = f1(axis_y),
        x1 = f1(x0 + BAR_W)
    );
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{}\" fill=\"currentColor\">{}{}</text>",
        f1(x0),
        f1(axis_y + 14.0),
        html(&c.axis),
        if c.log_scale { " (log scale)" } else { "" }
    );
    if !c.legend.is_empty() {
        let ly = axis_y + 30.0;
        let mut lx = 4.0;
        for (hi, text) in &c.legend {
            let _ = write!(
                s,
                "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" fill=\"currentColor\">{}</text>",
                f1(lx),
                f1(ly - 10.0),
                if *hi { HIGHLIGHT } else { PLAIN },
                f1(lx + 16.0),
                f1(ly),
                html(text)
            );
            lx += 16.0 + text.chars().count() as f64 * CHAR_W + 18.0;
        }
    }
}

/// The outcome histogram of a hardware litmus result: one bar a final state,
/// most frequent first; states satisfying the condition highlighted; a state
/// the model cannot reach says so in its count label. A log scale is used
/// when some state is under a tenth of the most frequent one, so a rare
/// outcome stays visible.
pub fn histogram(litmus: &Litmus, hw: &HardwareResult, title: &str) -> String {
    let order = litmus.observables();
    let mut rows: Vec<_> = hw.rows.iter().collect();
    rows.sort_by(|a, b| b.count.cmp(&a.count).then(a.state.cmp(&b.state)));
    let max = rows.iter().map(|r| r.count).max().unwrap_or(0);
    let min = rows.iter().map(|r| r.count).min().unwrap_or(0);
    let bars = rows
        .iter()
        .map(|r| Bar {
            label: render_state(&order, &r.state),
            value: r.count as f64,
            whisker: None,
            highlight: r.satisfies,
            value_label: format!("{}{}", r.count, if r.modeled { "" } else { " (unmodeled)" }),
        })
        .collect();
    bar_chart(&Chart {
        title: title.to_string(),
        axis: format!("instances (of {})", hw.instances),
        bars,
        log_scale: min > 0 && min * 10 < max,
        legend: vec![
            (true, format!("satisfies: {}", litmus.condition)),
            (false, "does not".to_string()),
        ],
    })
}

#[cfg(test)]
mod tests {

    #[test]
    fn measured_values_keep_four_significant_digits() {
        assert_eq!(sig(2.082749968394637), "2.083");
        assert_eq!(sig(0.2234609), "0.2235");
        assert_eq!(sig(155393.2), "155393");
        assert_eq!(sig(10.458), "10.46");
        assert_eq!(sig(0.0), "0");
    }

    use super::*;

    fn bar(label: &str, v: f64, hi: bool) -> Bar {
        Bar {
            label: label.into(),
            value: v,
            whisker: None,
            highlight: hi,
            value_label: format!("{v}"),
        }
    }

    /// The `width` attributes of the bars, in order.
    fn widths(svg: &str) -> Vec<f64> {
        svg.split("<rect class=\"gc-bar")
            .skip(1)
            .map(|r| {
                let w = r.split("width=\"").nth(1).unwrap();
                w[..w.find('"').unwrap()].parse().unwrap()
            })
            .collect()
    }

    #[test]
    fn bars_are_proportional_and_highlighted() {
        let c = Chart {
            title: "t <x>".into(),
            axis: "instances".into(),
            bars: vec![
                bar("a=1", 100.0, true),
                bar("a=0", 50.0, false),
                bar("z", 0.0, false),
            ],
            log_scale: false,
            legend: vec![(true, "hit".into())],
        };
        let s = bar_chart(&c);
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
        assert!(!s.contains("\n\n"));
        assert_eq!(widths(&s), vec![360.0, 180.0, 0.0]);
        let tiny = Chart {
            bars: vec![bar("a", 10000.0, false), bar("b", 1.0, false)],
            ..c.clone()
        };
        assert_eq!(
            widths(&bar_chart(&tiny))[1],
            2.0,
            "a value above zero stays visible"
        );
        assert_eq!(s.matches("gc-bar gc-hi").count(), 1);
        assert_eq!(s.matches(HIGHLIGHT).count(), 2, "one bar and the legend");
        assert!(s.contains("t &lt;x&gt;"), "{s}");
        assert!(!s.contains("log scale"));
    }

    #[test]
    fn log_scale_shows_rare_states() {
        let c = Chart {
            title: "t".into(),
            axis: "n".into(),
            bars: vec![bar("a", 9999.0, false), bar("b", 9.0, true)],
            log_scale: true,
            legend: vec![],
        };
        let w = widths(&bar_chart(&c));
        assert_eq!(w[0], 360.0);
        // log10(10)/log10(10000) = 1/4 of the axis, where linear would give 0.3 px.
        assert_eq!(w[1], 90.0);
        assert!(bar_chart(&c).contains("(log scale)"));
    }

    #[test]
    fn whiskers_span_low_to_high() {
        let mut b = bar("median", 2.0, false);
        b.whisker = Some((1.0, 4.0));
        let c = Chart {
            title: "t".into(),
            axis: "us".into(),
            bars: vec![b],
            log_scale: false,
            legend: vec![],
        };
        let s = bar_chart(&c);
        let x0: f64 = s.split("<rect class=\"gc-bar\" x=\"").nth(1).unwrap()[..]
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        // The axis reaches the whisker's top (4.0): the bar is half of it,
        // the whisker runs from a quarter to the end.
        assert_eq!(widths(&s), vec![180.0]);
        let d = s.split("class=\"gc-whisker\" d=\"").nth(1).unwrap();
        let d = &d[..d.find('"').unwrap()];
        assert!(
            d.starts_with(&format!("M{:.1} ", x0 + 90.0))
                && d.contains(&format!("H{:.1}", x0 + 360.0)),
            "{d}"
        );
    }

    fn litmus() -> Litmus {
        let yaml = "rules:
  - id: cdp2.a.b
    source: { seed: s, section: s }
    quote: q
    profile: cdp2
    tests: [t]
tests:
  - name: t
    kind: litmus
    memory: { x: 0 }
    kernels:
      - kernel: k
        launch: host
        threads:
          t0: [load r0 x]
    condition: exists k.t0.r0 == 1
    expect: forbidden
";
        let spec = gridcheck_spec::load_sources(&[("a.yaml".into(), yaml.into())], None).unwrap();
        match &spec.tests[0].body {
            gridcheck_spec::TestBody::Litmus(l) => l.clone(),
            _ => unreachable!(),
        }
    }

    #[test]
    fn histogram_highlights_the_condition_most_frequent_first() {
        let l = litmus();
        let st = |v: u32| -> gridcheck_spec::State {
            [("k.t0.r0".to_string(), v), ("x".to_string(), 0)].into()
        };
        let counts = [(st(0), 5u64), (st(1), 995u64)].into_iter().collect();
        let modeled = [st(0)].into_iter().collect();
        let hw = HardwareResult::classify(&l, &counts, &modeled).unwrap();
        let s = histogram(&l, &hw, "t on gpu");
        let first = s.find("k.t0.r0=1; x=0").unwrap();
        let second = s.find("k.t0.r0=0; x=0").unwrap();
        assert!(first < second, "most frequent first: {s}");
        assert_eq!(s.matches("gc-bar gc-hi").count(), 1);
        assert!(s.contains(">995 (unmodeled)<"), "{s}");
        assert!(s.contains("satisfies: exists k.t0.r0 == 1"), "{s}");
        // 5 of 1000 is under a tenth: log scale, and the rare bar is visible.
        assert!(s.contains("(log scale)"));
        assert!(widths(&s)[1] > 60.0, "{:?}", widths(&s));
    }

    #[test]
    fn no_bars_says_no_data() {
        let c = Chart {
            title: "t".into(),
            axis: "n".into(),
            bars: vec![],
            log_scale: false,
            legend: vec![],
        };
        assert!(bar_chart(&c).contains("no data"));
    }
}
