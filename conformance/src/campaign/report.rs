//! A campaign's findings: grouped by class and shape, one program of each
//! group shrunk on the GPU (each step's candidates rebuilt as one batch,
//! compiled and run like the others, the first that keeps the class taken,
//! the worker stopped there), and written out: `findings.jsonl` (one line a
//! distinct finding), `findings/NN-<class>.yaml` (a ready-to-paste test),
//! `summary.txt`.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use gridcheck_spec::render::{litmus_spec_yaml, litmus_test_yaml};
use gridcheck_spec::{Litmus, Profile};
use serde::Serialize;

use super::findings::{Class, ProgramRecord, distinct};
use super::run::{Batch, RunCfg, class_counts, run_batch};
use super::shrink::shrink;
use super::{Args, CampaignProgram, compile, write_batch};

/// One line of `findings.jsonl`.
#[derive(Debug, Serialize)]
struct Finding<'a> {
    class: Class,
    shape: &'a str,
    programs: usize,
    first: &'a str,
    batch: &'a str,
    index: usize,
    detail: &'a str,
    known_hang: Option<&'a str>,
    yaml: String,
    /// Whether the program showed the finding again when run alone (its
    /// own batch, up to [`CONFIRM_RUNS`] times): a finding that does not
    /// may depend on the programs run before it in its batch.
    confirmed_alone: bool,
    /// How many of those runs it took (or were made).
    confirm_runs: usize,
    shrink_steps: usize,
    shrink_tries: usize,
}

/// Runs of a finding's program alone that try to show it again.
const CONFIRM_RUNS: usize = 3;

/// The profile of a program's spec document (its one rule's).
fn profile(p: &CampaignProgram) -> Option<Profile> {
    let file = std::path::PathBuf::from("p.yaml");
    gridcheck_spec::load_sources(&[(file, p.yaml.clone())], None)
        .ok()
        .and_then(|s| s.rules.first().map(|r| r.profile))
}

/// Runs one step's shrinking candidates on the GPU as one batch (in `dir`,
/// each candidate's states from the axiomatic model), stopping at the first
/// of `class`: its index, and how many candidates ran.
fn first_of_class(
    cfg: &mut RunCfg,
    cands: &[Litmus],
    profile: Profile,
    dir: &std::path::Path,
    class: Class,
) -> (Option<usize>, usize) {
    let a = cfg.args;
    // Candidate i of the batch is cands[index[i]].
    let mut index = Vec::new();
    let mut programs = Vec::new();
    let stem = dir
        .file_name()
        .map(|n| n.to_string_lossy().replace('_', "-"))
        .unwrap_or_default();
    for (ci, c) in cands.iter().enumerate() {
        let Ok(o) = gridcheck_axiom::check(c) else {
            continue;
        };
        let mut c = c.clone();
        c.expect = o.verdict;
        let name = format!("{stem}-c{ci}");
        programs.push(CampaignProgram {
            yaml: litmus_spec_yaml(profile, &name, &c),
            name,
            states: o.states.into_iter().collect(),
            oracle: "axiom".into(),
        });
        index.push(ci);
    }
    let ready = write_batch(dir, &programs).and_then(|()| {
        let nvcc = gridcheck_toolchain::find_nvcc(&a.root)?;
        compile::batch(
            &nvcc,
            &a.root.join(gridcheck_kernelgen::INCLUDE_DIR),
            dir,
            a.nvcc_timeout,
        )?;
        Batch::read(dir)
    });
    let Ok(b) = ready else { return (None, 0) };
    let (mut found, mut ran) = (None, 0);
    cfg.stop_at = Some(class);
    run_batch(cfg, &b, &mut |r| {
        if r.class != Class::NotRun {
            ran += 1;
        }
        if r.class == class {
            found = found.or(Some(r.index));
        }
    });
    (found.map(|i| index[i]), ran)
}

/// Writes the findings and the summary; `Ok(true)` when there are none and
/// every program ran.
pub fn write(
    a: &Args,
    records: &[ProgramRecord],
    compile_s: f64,
    gpu_s: f64,
) -> Result<bool, String> {
    let groups = distinct(records);
    let dir = a.out.join("findings");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let shrink_end = Instant::now() + Duration::from_secs(a.shrink);
    let per_group = Duration::from_secs(a.shrink) / groups.len().max(1) as u32;
    let mut lines = String::new();
    let mut listing = String::new();
    // Shrinking candidates run whatever hangs they meet.
    let uncapped = Args {
        hang_cap: usize::MAX,
        ..a.clone()
    };
    let mut cfg = RunCfg {
        stop_at: None,
        args: &uncapped,
        deadline: shrink_end + Duration::from_secs(a.timeout),
        hangs: Default::default(),
    };
    for (gi, ((class, shape), rs)) in groups.iter().enumerate() {
        let r = rs[0];
        let batch_dir = a.dir.join(super::BATCHES).join(&r.batch);
        let prog = super::read_batch(&batch_dir)?
            .into_iter()
            .nth(r.index)
            .ok_or_else(|| format!("{}: no program {}", batch_dir.display(), r.index))?;
        let (_, l) = prog.litmus()?;
        let prof = profile(&prog).unwrap_or(Profile::Cdp2);
        let deadline = (Instant::now() + per_group).min(shrink_end);
        // Candidates are built beside the batches, not in the results.
        let work = a.dir.join("shrink").join(format!("g{gi:03}"));
        // First, the program alone (its own batch, a few copies), so that
        // a finding that needs its batch's earlier programs says so.
        let again = vec![l.clone(); CONFIRM_RUNS];
        let (hit, runs) = first_of_class(&mut cfg, &again, prof, &work.join("confirm"), *class);
        let confirmed = hit.is_some();
        let confirm_runs = hit.map_or(runs, |i| i + 1);
        let mut step = 0;
        let shrink_deadline = if confirmed { deadline } else { Instant::now() };
        let s = shrink(&l, prof, shrink_deadline, &mut |cands| {
            step += 1;
            first_of_class(
                &mut cfg,
                cands,
                prof,
                &work.join(format!("g{gi:03}_s{step:02}")),
                *class,
            )
        });
        let name = format!("campaign-{}-{gi:03}", class_name(*class));
        let alone = if confirmed {
            format!("shown again alone (run {confirm_runs} of {CONFIRM_RUNS})")
        } else if confirm_runs == 0 {
            "not run again alone: the shrinking budget (--shrink) was spent".to_string()
        } else {
            format!(
                "NOT shown again alone in {confirm_runs} runs (it may depend on the programs run \
                 before it in its batch; not shrunk)"
            )
        };
        let description = format!(
            "{} found by a random-program campaign ({} programs of this shape; first {}): {}; {alone}; shrunk in {} steps of {} tries",
            class_name(*class),
            rs.len(),
            r.name,
            r.detail,
            s.steps,
            s.tries
        );
        let yaml_file = dir.join(format!("{gi:03}-{}.yaml", class_name(*class)));
        std::fs::write(&yaml_file, litmus_test_yaml(&name, &description, &s.litmus))
            .map_err(|e| format!("cannot write {}: {e}", yaml_file.display()))?;
        let f = Finding {
            class: *class,
            shape,
            programs: rs.len(),
            first: &r.name,
            batch: &r.batch,
            index: r.index,
            detail: &r.detail,
            known_hang: r.known_hang.as_deref(),
            yaml: yaml_file.display().to_string(),
            confirmed_alone: confirmed,
            confirm_runs,
            shrink_steps: s.steps,
            shrink_tries: s.tries,
        };
        lines += &serde_json::to_string(&f).map_err(|e| e.to_string())?;
        lines.push('\n');
        let _ = writeln!(
            listing,
            "  {:<12} {:>5}  {shape}\n               {}\n               {alone}\n               {}",
            class_name(*class),
            rs.len(),
            r.detail,
            yaml_file.display()
        );
    }
    let fj = a.out.join("findings.jsonl");
    std::fs::write(&fj, lines).map_err(|e| format!("cannot write {}: {e}", fj.display()))?;
    let ran = summary(a, records, compile_s, gpu_s, groups.len(), &listing)?;
    Ok(groups.is_empty() && ran == records.len())
}

/// Writes and prints `summary.txt`: the counts by class, the rates and the
/// distinct findings' `listing`; returns how many programs ran.
fn summary(
    a: &Args,
    records: &[ProgramRecord],
    compile_s: f64,
    gpu_s: f64,
    distinct: usize,
    listing: &str,
) -> Result<usize, String> {
    let counts = class_counts(records);
    let ran = records.iter().filter(|r| r.class != Class::NotRun).count();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "campaign {}: {} programs, {ran} run on the GPU",
        a.dir.display(),
        records.len()
    );
    let _ = writeln!(
        s,
        "compile {compile_s:.1} s; GPU runs {gpu_s:.1} s: {:.0} programs per GPU-minute",
        ran as f64 / (gpu_s / 60.0).max(1e-9)
    );
    let builtin = gridcheck_report::Tuning::default();
    let _ = writeln!(
        s,
        "budget: {} instances x {} launches a program; delays up to {} cycles, stress over {} words",
        a.instances,
        a.launches,
        a.max_delay.unwrap_or(builtin.max_delay_cycles),
        a.stress_words.unwrap_or(builtin.stress_words)
    );
    for (c, n) in &counts {
        let _ = writeln!(s, "  {:<12} {n}", class_name(*c));
    }
    let _ = writeln!(
        s,
        "{} distinct finding(s) (class, programs, shape; first program's detail; shrunk test):\n{listing}",
        distinct
    );
    let sf = a.out.join("summary.txt");
    std::fs::write(&sf, &s).map_err(|e| format!("cannot write {}: {e}", sf.display()))?;
    print!("{s}");
    Ok(ran)
}

fn class_name(c: Class) -> &'static str {
    match c {
        Class::Pass => "pass",
        Class::Violation => "violation",
        Class::Unmodeled => "unmodeled",
        Class::Hang => "hang",
        Class::LaunchError => "launch-error",
        Class::NotRun => "not-run",
    }
}
