fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(200);
    let seed: u64 = std::env::args().nth(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let r = gridcheck_litgen::differential::run(n, seed, Default::default(), 2, |r| eprintln!("{} {:?} {:?}", r.programs, r.elapsed, r.classes));
    println!("{:?}\n{:?}\n{:?}", r.classes, r.both_failed, r.coverage);
    for f in &r.conflicts { println!("--- {}: {}\n{}", f.index, f.detail, f.yaml); }
}
