//! The skeleton of a program the campaign groups findings by: the one
//! vocabulary of `gridcheck_shape` ([`Shape`]), re-exported; and, for the
//! campaign's tests, a program built from a few YAML lines.

pub use gridcheck_shape::Shape;

#[cfg(test)]
pub(crate) mod tests {
    use gridcheck_spec::Litmus;

    /// A program of two kernels: a host kernel whose threads are `threads`
    /// (YAML lines) and a device kernel `k1` loading x.
    pub fn litmus(threads: &str, cond: &str, expect: &str) -> Litmus {
        let yaml = format!(
            "rules:\n  - id: cdp2.t.r\n    source: {{ seed: s.txt, section: \"1\" }}\n    quote: q\n    profile: cdp2\n    tests: [t]\ntests:\n  - name: t\n    kind: litmus\n    memory: {{ x: 0 }}\n    kernels:\n      - kernel: k0\n        launch: host\n        threads:\n{threads}      - kernel: k1\n        launch: device\n        threads:\n          t0: [load r0 x]\n    condition: {cond}\n    expect: {expect}\n"
        );
        gridcheck_spec::render::load_litmus(&yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"))
    }
}
