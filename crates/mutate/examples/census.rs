//! Every candidate of the spec judged by both oracles, with timing: the
//! census `cargo run --release -p gridcheck-mutate --example census` prints.

use std::time::Instant;

fn main() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec");
    let spec = gridcheck_spec::load_dir(&root, None).expect("the spec loads");
    let (cands, rejected) = gridcheck_mutate::candidates(&spec);
    for r in &rejected {
        println!("REJECTED {} : {}", r.name, r.reason);
    }
    let mut kept = 0;
    for c in &cands {
        let t = Instant::now();
        match gridcheck_mutate::judge(c) {
            Ok(gridcheck_mutate::Judgement::Mutant(v)) => {
                kept += 1;
                println!(
                    "MUTANT {} [{}] {} kill={} {:.2}s",
                    c.name,
                    c.site,
                    v.agreement,
                    v.kill_states.len(),
                    t.elapsed().as_secs_f64()
                )
            }
            Ok(gridcheck_mutate::Judgement::NotAMutant(why)) => println!(
                "DROPPED {} [{}] {} {:.2}s",
                c.name,
                c.site,
                why,
                t.elapsed().as_secs_f64()
            ),
            Err(e) => println!("ERROR {}: {e}", c.name),
        }
    }
    println!(
        "{} candidates, {} rejected by the loader, {kept} mutants",
        cands.len(),
        rejected.len()
    );
}
