mod common;
use common::{K, litmus};

fn go(name: &str, ks: &[K<'_>]) {
    let l = litmus(
        "cdp2",
        "x: 0, y: 0, z: 0, w: 0",
        ks,
        "exists x == 1",
        "allowed",
    );
    let o = gridcheck_model::check(&l).unwrap();
    eprintln!(
        "{name}: {} execs {:?} {}",
        o.executions,
        o.elapsed,
        o.states.len()
    );
}

#[test]
fn scratch() {
    go(
        "4 stores",
        &[(
            "k",
            "host",
            &[
                ("t0", &["store x 1"]),
                ("t1", &["store y 1"]),
                ("t2", &["store z 1"]),
                ("t3", &["store w 1"]),
            ],
        )],
    );
    go(
        "4 empty",
        &[(
            "k",
            "host",
            &[("t0", &[]), ("t1", &[]), ("t2", &[]), ("t3", &[])],
        )],
    );
    go(
        "ff",
        &[
            (
                "p",
                "host",
                &[
                    ("t0", &["launch a fire-and-forget"]),
                    ("t1", &["launch b fire-and-forget"]),
                ],
            ),
            ("a", "device", &[("t0", &["store x 1"])]),
            ("b", "device", &[("t0", &["store y 1"])]),
        ],
    );
    go(
        "named",
        &[
            (
                "p",
                "host",
                &[("t0", &["launch a s1"]), ("t1", &["launch b s2"])],
            ),
            ("a", "device", &[("t0", &["store x 1"])]),
            ("b", "device", &[("t0", &["store y 1"])]),
        ],
    );
    go(
        "null",
        &[
            ("p", "host", &[("t0", &["launch a"]), ("t1", &["launch b"])]),
            ("a", "device", &[("t0", &["store x 1"])]),
            ("b", "device", &[("t0", &["store y 1"])]),
        ],
    );
}
