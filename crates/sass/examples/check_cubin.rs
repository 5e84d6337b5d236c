//! Checks one generated kernel's cubin by hand:
//! `cargo run -p gridcheck-sass --example check_cubin -- NVDISASM CUBIN SOURCE.cu`.

fn main() -> Result<(), String> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let [nvdisasm, cubin, source] = a.as_slice() else {
        return Err("usage: check_cubin NVDISASM CUBIN SOURCE.cu".into());
    };
    let funcs = gridcheck_sass::disassemble(nvdisasm.as_ref(), cubin.as_ref())?;
    let text = std::fs::read_to_string(source).map_err(|e| format!("{source}: {e}"))?;
    let file = source.rsplit('/').next().unwrap_or(source);
    for r in gridcheck_sass::check_generated(&text, file, &funcs)? {
        println!(
            "{} {}: {} ordered, {} violations, {} not checked",
            r.kernel,
            r.thread,
            r.verdict.ordered,
            r.verdict.violations.len(),
            r.verdict.not_checked.len()
        );
        for m in r.verdict.violations.iter().chain(&r.verdict.not_checked) {
            println!("  {m}");
        }
    }
    Ok(())
}
