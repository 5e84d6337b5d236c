//! `cargo run --release --example fuzz -- N SEED THREADS`: a quick run of the differential test.
fn main() {
    let arg = |i: usize, d: u64| {
        std::env::args()
            .nth(i)
            .and_then(|s| s.parse().ok())
            .unwrap_or(d)
    };
    let cfg = gridcheck_litgen::GenConfig {
        max_threads: arg(3, 3) as usize,
        ..Default::default()
    };
    std::panic::set_hook(Box::new(|_| {}));
    let r = gridcheck_litgen::differential::run(arg(1, 200), arg(2, 1), cfg, 2, |r| {
        eprintln!("{} {:?} {:?}", r.programs, r.elapsed, r.classes)
    });
    println!("{:?}\n{:?}\n{:?}", r.classes, r.both_failed, r.coverage);
    for f in &r.conflicts {
        println!("--- {}: {}\n{}", f.index, f.detail, f.yaml);
    }
}
