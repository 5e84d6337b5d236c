use std::time::Instant;
use gridcheck_litgen::{GenConfig, strategy, differential::runner};
use proptest::strategy::{Strategy, ValueTree};
fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(40);
    let strat = strategy(GenConfig::default());
    let mut rng = runner(1);
    for i in 0..n {
        let p = strat.new_tree(&mut rng).unwrap().current();
        let l = p.litmus().unwrap();
        let t = Instant::now();
        let a = gridcheck_axiom::check(&l);
        let ta = t.elapsed();
        let t = Instant::now();
        let m = if l.thread_count() <= 4 { Some(gridcheck_model::check(&l)) } else { None };
        let tm = t.elapsed();
        println!("{i} threads {} axiom {:?} {:?} loom {:?} {:?}", l.thread_count(), ta, a.as_ref().map(|o| o.candidates).map_err(|e| e.message.clone()), tm, m.map(|r| r.map(|o| o.executions).map_err(|e| e.message.chars().take(60).collect::<String>())));
        if ta.as_secs() > 2 || tm.as_secs() > 2 || std::env::var("SHOW").map(|v| v == i.to_string()).unwrap_or(false) { println!("{}", p.yaml("slow")); }
    }
}
