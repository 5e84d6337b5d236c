//! The leads phase: every finding of a campaign's records (grouped by class
//! and shape, `findings::distinct`) is taken to an end (`ending.rs`), one
//! line of `leads.jsonl` each as soon as it ends, so that a later part
//! resumes where this one stopped.
//!
//! Every rerun is one fresh worker (the cost of a rerun is mostly the
//! worker's start), in which the finding's program runs as many instances
//! as bound the rate it was seen at (`context::instances_to_bound`: about
//! 3 000 for one seen once in 1 024; the campaign's own launches for a hang
//! or an error, which a run shows as a whole), and no more.
//!
//! 1. Its first program runs alone in `--alone-runs` fresh workers, on the
//!    batch's own module. Shown again: it is shrunk alone (`alone`).
//! 2. Not shown: it runs after the programs its worker ran before it
//!    (`context::prefix`), in that order, in up to `--context-runs` fresh
//!    workers. Never shown: `closed`, with the bound on its rate from every
//!    rerun's instances.
//! 3. Shown with its context: the prefix is halved (`context::halves`, the
//!    later half first, a rerun a half) while a half brings it back, and
//!    the finding's own program is shrunk after what is kept (`context`):
//!    the programs kept are the context as they ran.
//!
//! A shrunk test is run `--rate-runs` times for its rate (on the batch's
//! own module where shrinking changed nothing) and written as spec YAML
//! and as a runtime-API program (`plain.rs`) under `findings/`. A finding
//! whose program and shrunk program a known fact of its class covers by
//! shape (`KnownFacts::explaining`: a hang by a hang fact, a violation or an
//! unmodeled state by a discrepancy, a launch error by a launch-error
//! fact) ends `known`, its shrunk test kept beside the fact's. Each lead has
//! `--lead-budget` seconds: the halving stops at two fifths of it and the
//! shrinking at seven tenths, with what they have (and say so), leaving the
//! rest for the rate.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gridcheck_spec::Litmus;
use gridcheck_spec::render::litmus_test_yaml;

use crate::args::Args;
use crate::batch::{BATCHES, Batch, CampaignProgram};
use crate::campaign::{Part, append_line, read_lines};
use crate::context::{halves, instances_to_bound, prefix, upper_bound_95};
use crate::ending::{Bound, Closed, Context, FirstOf, Known, LeadEnd, Runs, TestOut};
use crate::findings::{Class, ProgramRecord, distinct, shown_instances};
use crate::runner::{Restart, Runner};
use crate::shrink::shrink;
use crate::{compile, plain};

/// How each finding ended, one line each, appended as it ends.
pub const LEADS: &str = "leads.jsonl";

/// One finding's work.
struct Leads<'a> {
    a: &'a Args,
    runner: &'a mut Runner,
    records: &'a [ProgramRecord],
    /// Where the shrunk tests go (`OUT/findings`).
    findings: PathBuf,
    /// Where rebuilt batches go (`DIR/leads/<results folder>`).
    work: PathBuf,
    /// Programs run on the GPU.
    ran: usize,
    /// Launches of the lead in each rerun of the finding being ended.
    lead_launches: Option<u32>,
}

/// The most launches a rerun gives its lead.
const MAX_LEAD_LAUNCHES: u32 = 64;

/// Launches of a lead in a rerun: enough instances to bound a rate as high
/// as `seen` (instances that showed it, of those run), never fewer than the
/// campaign's; the campaign's where the class is a run's (a hang).
fn lead_launches(instances: u32, launches: u32, seen: Option<(u64, u64)>) -> u32 {
    let Some((shown, of)) = seen.filter(|&(s, o)| s > 0 && o > 0) else {
        return launches;
    };
    let n = instances_to_bound(shown as f64 / of as f64);
    let per = u64::from(instances.max(1));
    u32::try_from(n.div_ceil(per))
        .unwrap_or(u32::MAX)
        .clamp(launches, MAX_LEAD_LAUNCHES.max(launches))
}

/// A far deadline: a rerun is bounded by its worker's timeouts, and the
/// lead's budget is checked between reruns.
fn no_deadline() -> Instant {
    Instant::now() + Duration::from_secs(24 * 3600)
}

impl Leads<'_> {
    /// `order` of `b` run `n` times, each in a fresh worker that is not
    /// restarted, the last program of `order` watched: how often it ran
    /// and showed `class` (stopping at the first when `stop`).
    fn reruns(&mut self, b: &Batch, order: &[usize], class: Class, n: usize, stop: bool) -> Runs {
        let Some(&lead) = order.last() else {
            return Runs::default();
        };
        let mut runs = Runs::default();
        for _ in 0..n {
            let (mut seen, mut ran) = (None, 0);
            self.runner.run(
                b,
                order,
                Restart::Never,
                no_deadline(),
                self.lead_launches,
                &mut |r: ProgramRecord| {
                    ran += usize::from(r.worker.is_some());
                    if r.index == lead && r.worker.is_some() {
                        seen = Some(r);
                    }
                },
            );
            self.ran += ran;
            let Some(r) = seen else { continue };
            runs.runs += 1;
            runs.instances += r.outcome.instances();
            if r.class == class {
                runs.shown += 1;
                if stop {
                    break;
                }
            }
        }
        runs
    }

    /// Ends one finding (the module docs).
    fn end(
        &mut self,
        gi: usize,
        class: Class,
        shape: &str,
        rs: &[&ProgramRecord],
    ) -> Result<LeadEnd, String> {
        let started = Instant::now();
        let budget = Duration::from_secs(self.a.lead_budget);
        let r = rs[0];
        let first = FirstOf {
            name: r.name.clone(),
            batch: r.batch.clone(),
            index: r.index,
            detail: r.detail.clone(),
        };
        let mut end = LeadEnd::open(class, shape, rs.len(), &first);
        let b = Batch::read(&self.a.dir.join(BATCHES).join(&r.batch))?;
        let l = b
            .litmus(r.index)
            .ok_or_else(|| format!("{}: program {} does not load", b.dir.display(), r.index))?;
        let seen = shown_instances(l, &b.programs[r.index].states, class, &r.outcome);
        self.lead_launches = Some(lead_launches(
            self.runner.instances,
            self.runner.launches,
            seen,
        ));
        end.alone = self.reruns(&b, &[r.index], class, self.a.alone_runs, true);
        end.confirmed_alone = end.alone.shown > 0;
        let context = if end.confirmed_alone {
            Vec::new()
        } else {
            match self.context(&b, r, class, &mut end, started + budget * 2 / 5)? {
                Some(c) => c,
                None => {
                    end.seconds = started.elapsed().as_secs_f64();
                    return Ok(end);
                }
            }
        };
        end.ended = if end.confirmed_alone {
            "alone"
        } else {
            "context"
        }
        .into();
        let mut order = context;
        order.push(r.index);
        let (test, shrunk) =
            self.reproduce(gi, class, (&b, &order), &end, started + budget * 7 / 10)?;
        end.test = Some(test);
        // A known fact of the finding's class whose shape covers it: a
        // hang by a hang, a violation or an unmodeled state by a
        // discrepancy, a launch error by a launch error; a finding of
        // another class in a program of a fact's shape is its own.
        if let Some(kind) = class.fact_kind()
            && let Some(k) = self.runner.known.explaining(kind, l, &shrunk)
        {
            end.ended = "known".into();
            end.known = Some(Known {
                fact: k.fact.clone(),
                test: k.test.clone(),
            });
        }
        end.seconds = started.elapsed().as_secs_f64();
        Ok(end)
    }

    /// A finding not shown alone, rerun with its context: the programs of
    /// the context it needs (`Some`, halved until `until`), or `None` with
    /// `end` closed.
    fn context(
        &mut self,
        b: &Batch,
        r: &ProgramRecord,
        class: Class,
        end: &mut LeadEnd,
        until: Instant,
    ) -> Result<Option<Vec<usize>>, String> {
        let pre = prefix(self.records, r);
        let mut order = pre.clone();
        order.push(r.index);
        let reruns = self.reruns(b, &order, class, self.a.context_runs, true);
        if reruns.shown == 0 || pre.is_empty() {
            let mut all = end.alone;
            all.add(reruns);
            if all.shown == 0 {
                end.ended = "closed".into();
                end.closed = Some(Closed {
                    prefix: pre.len(),
                    reruns,
                });
                end.bound = Some(Bound {
                    instances: all.instances,
                    runs: all.runs,
                    per_instance: upper_bound_95(all.instances),
                    per_run: upper_bound_95(all.runs as u64),
                });
                return Ok(None);
            }
            // Alone after all, in a later rerun: no context needed.
            end.confirmed_alone = true;
            end.alone = all;
            return Ok(Some(Vec::new()));
        }
        let runs = self.a.alone_runs.max(1);
        let reduced = halves(
            &pre,
            &mut |s| {
                let mut o = s.to_vec();
                o.push(r.index);
                self.reruns(b, &o, class, runs, true).shown > 0
            },
            &mut || Instant::now() >= until,
        );
        end.context = Some(Context {
            programs: reduced
                .kept
                .iter()
                .map(|&i| b.programs[i].name.clone())
                .collect(),
            prefix: pre.len(),
            reruns,
            tests: reduced.tests,
            minimal: reduced.minimal,
            spread: reduced.spread,
        });
        Ok(Some(reduced.kept))
    }

    /// One shrinking step of the finding's program (the last of `seq`):
    /// the candidates written with `seq` as one batch in `dir`, compiled,
    /// and each run in its place after the rest of `seq` in a fresh worker
    /// until one shows `class`: that one (its index in `cands`, the batch
    /// and the order that showed it), and how many ran.
    fn step(
        &mut self,
        dir: &Path,
        seq: &[CampaignProgram],
        cands: &[Litmus],
        class: Class,
        deadline: Instant,
    ) -> (Option<(usize, Batch, Vec<usize>)>, usize) {
        let stem = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let k = seq.len() - 1;
        let profile = seq[k].profile();
        let mut programs = seq.to_vec();
        let mut index = Vec::new();
        for (ci, c) in cands.iter().enumerate() {
            if let Some(p) = CampaignProgram::decided(profile, &format!("{stem}-c{ci}"), c) {
                programs.push(p);
                index.push(ci);
            }
        }
        let Ok(b) = compile::prepared(&self.a.root, dir, &programs, self.a.nvcc_timeout) else {
            return (None, 0);
        };
        let mut tried = 0;
        for (j, &ci) in index.iter().enumerate() {
            if Instant::now() >= deadline {
                break;
            }
            let mut order: Vec<usize> = (0..seq.len()).collect();
            order[k] = seq.len() + j;
            tried += 1;
            if self.reruns(&b, &order, class, 1, true).shown > 0 {
                return (Some((ci, b, order)), tried);
            }
        }
        (None, tried)
    }

    /// The test `order` of `b` (the context as it ran, the finding last)
    /// with the finding's program shrunk until `deadline`, renamed as the
    /// finding's test, its rate measured (on the batch of the last step
    /// that kept a candidate, or on `b` itself) and written: the test, and
    /// the finding's program shrunk.
    fn reproduce(
        &mut self,
        gi: usize,
        class: Class,
        (b, order): (&Batch, &[usize]),
        end: &LeadEnd,
        deadline: Instant,
    ) -> Result<(TestOut, Litmus), String> {
        let work = self.work.join(format!("g{gi:03}"));
        let mut seq: Vec<CampaignProgram> = order.iter().map(|&i| b.programs[i].clone()).collect();
        let n = seq.len();
        let k = n - 1;
        let (_, l) = seq[k].litmus()?;
        let profile = seq[k].profile();
        let mut step = 0;
        // The batch and order of the last candidate kept: the shrunk test,
        // compiled already.
        let mut kept: Option<(Batch, Vec<usize>)> = None;
        let s = shrink(&l, profile, deadline, &mut |cands| {
            step += 1;
            let dir = work.join(format!("g{gi:03}-k{k}-s{step:02}"));
            let (found, tried) = self.step(&dir, &seq, cands, class, deadline);
            let found = found.map(|(ci, b, order)| {
                kept = Some((b, order));
                ci
            });
            (found, tried)
        });
        let shrunk_to = s.litmus;
        for (k, p) in seq.iter_mut().enumerate() {
            let name = match n - 1 - k {
                0 => format!("campaign-{}-{gi:03}", class.name()),
                back => format!("campaign-{}-{gi:03}-context-{}", class.name(), n - back),
            };
            let l = if k == n - 1 {
                shrunk_to.clone()
            } else {
                p.litmus()?.1
            };
            if let Some(q) = CampaignProgram::decided(p.profile(), &name, &l) {
                *p = q;
            }
        }
        let rate = match &kept {
            Some((last, o)) => self.reruns(last, o, class, self.a.rate_runs, false),
            None => self.reruns(b, order, class, self.a.rate_runs, false),
        };
        let (yaml, plain) = self.write_test(gi, class, &seq, end, (s.steps, s.tries), rate)?;
        let test = TestOut {
            yaml,
            plain,
            shrink_steps: s.steps,
            shrink_tries: s.tries,
            out_of_time: s.out_of_time,
            rate,
        };
        Ok((test, shrunk_to))
    }

    /// Writes the test as spec YAML (context first) and as a plain
    /// program: their paths.
    fn write_test(
        &self,
        gi: usize,
        class: Class,
        seq: &[CampaignProgram],
        end: &LeadEnd,
        (steps, tries): (usize, usize),
        rate: Runs,
    ) -> Result<(String, String), String> {
        std::fs::create_dir_all(&self.findings)
            .map_err(|e| format!("cannot create {}: {e}", self.findings.display()))?;
        let base = self.findings.join(format!("{gi:03}-{}", class.name()));
        let lead = &seq[seq.len() - 1].name;
        let how = match &end.context {
            Some(c) => format!(
                "shown only after {} of the {} programs its worker ran before it (run first, in this order: {})",
                c.programs.len(),
                c.prefix,
                c.programs.join(", ")
            ),
            None => format!(
                "shown again alone ({} of {} runs)",
                end.alone.shown, end.alone.runs
            ),
        };
        let mut yaml = String::new();
        let mut tests = Vec::new();
        for p in seq {
            let (_, l) = p.litmus()?;
            let description = if p.name == *lead {
                format!(
                    "{} found by a random-program campaign ({} programs of this shape; first {}): {}; {how}; shrunk in {steps} steps of {tries} tries; the test shown in {} of {} runs",
                    class.name(),
                    end.programs,
                    end.first,
                    end.detail,
                    rate.shown,
                    rate.runs
                )
            } else {
                format!("The context of {lead}: run before it in the same process, in this order.")
            };
            yaml += &litmus_test_yaml(&p.name, &description, &l);
            tests.push((p.name.clone(), l));
        }
        let files = [
            (base.with_extension("yaml"), yaml),
            (base.with_extension("cu"), plain::program(&tests)),
        ];
        for (f, text) in &files {
            std::fs::write(f, text).map_err(|e| format!("cannot write {}: {e}", f.display()))?;
        }
        // Named from the results folder, where they travel with it.
        let [(y, _), (c, _)] = files.map(|(f, t)| {
            let rel = f
                .strip_prefix(&self.a.out)
                .map(Path::to_path_buf)
                .unwrap_or(f);
            (rel.display().to_string(), t)
        });
        Ok((y, c))
    }
}

/// The leads phase (the module docs) over `records`: ends the findings
/// not ended in `leads.jsonl` yet, while `--leads-budget` allows.
pub fn run(a: &Args, runner: &mut Runner, records: &[ProgramRecord]) -> Result<(), String> {
    std::fs::create_dir_all(&a.out)
        .map_err(|e| format!("cannot create {}: {e}", a.out.display()))?;
    let file = a.out.join(LEADS);
    let ended: BTreeSet<(Class, String)> = read_lines::<LeadEnd>(&file)?
        .into_iter()
        .map(|e| (e.class, e.shape))
        .collect();
    let groups = distinct(records);
    let todo: Vec<(usize, &(Class, String), &Vec<&ProgramRecord>)> = groups
        .iter()
        .enumerate()
        .filter(|(_, (k, _))| !ended.contains(k))
        .map(|(i, (k, v))| (i, k, v))
        .collect();
    let compile_s = compile_batches(a, todo.iter().map(|t| t.2[0].batch.as_str()))?;
    let started = Instant::now();
    let mut leads = Leads {
        a,
        runner,
        records,
        findings: a.out.join("findings"),
        work: work_dir(a),
        ran: 0,
        lead_launches: None,
    };
    println!("leads: {} findings, {} to end", groups.len(), todo.len());
    for (n, (gi, (class, shape), rs)) in todo.iter().enumerate() {
        let left = Duration::from_secs(a.leads_budget).saturating_sub(started.elapsed());
        if left < Duration::from_secs(a.lead_budget) {
            println!(
                "leads: {} left for the next part (--leads-budget)",
                todo.len() - n
            );
            break;
        }
        let end = leads.end(*gi, *class, shape, rs)?;
        println!(
            "  {gi:03} {:<12} {:<8} {shape} ({:.0} s)",
            class.name(),
            end.ended,
            end.seconds
        );
        append_line(&file, &end)?;
    }
    let part = Part {
        phase: "leads".into(),
        device: leads.runner.device.clone(),
        compile_s,
        gpu_s: started.elapsed().as_secs_f64(),
        programs_run: leads.ran,
    };
    append_line(&a.out.join(crate::campaign::PARTS), &part)
}

/// Where the rebuilt batches of this results folder's leads go: beside the
/// campaign's batches (they are build outputs), one folder a results
/// folder, so that two runs of the leads over the same programs (two GPUs,
/// or an old campaign's records) keep theirs apart.
fn work_dir(a: &Args) -> PathBuf {
    let out = std::path::absolute(&a.out).unwrap_or_else(|_| a.out.clone());
    let name: String = out
        .to_string_lossy()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    a.dir.join("leads").join(name.trim_matches('_'))
}

/// Compiles the campaign's batches that hold the given findings (they may
/// come from another machine's run): the seconds it took.
fn compile_batches<'a>(a: &Args, names: impl Iterator<Item = &'a str>) -> Result<f64, String> {
    let dirs: BTreeSet<PathBuf> = names.map(|n| a.dir.join(BATCHES).join(n)).collect();
    if dirs.is_empty() || !compile::needed() {
        return Ok(0.0);
    }
    let dirs: Vec<PathBuf> = dirs.into_iter().collect();
    let nvcc = gridcheck_toolchain::find_nvcc(&a.root)?;
    let include = a.root.join(gridcheck_kernelgen::INCLUDE_DIR);
    let (done, s) = compile::all(&nvcc, &include, &dirs, a.jobs, a.nvcc_timeout);
    for (d, r) in dirs.iter().zip(done) {
        r.map_err(|e| format!("{}: {e}", d.display()))?;
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rerun_gives_its_lead_the_instances_that_bound_the_rate_it_was_seen_at() {
        // Seen once in 1 024: about 3 000 instances, 6 launches of 512.
        assert_eq!(lead_launches(512, 2, Some((1, 1024))), 6);
        // Seen 3 times: about 1 000, never fewer than the campaign's 2.
        assert_eq!(lead_launches(512, 2, Some((3, 1024))), 2);
        // A hang or an error (a run's), or nothing counted: the campaign's.
        assert_eq!(lead_launches(512, 2, None), 2);
        assert_eq!(lead_launches(512, 2, Some((0, 1024))), 2);
        // Seen once in a million: capped.
        assert_eq!(lead_launches(512, 2, Some((1, 1 << 20))), MAX_LEAD_LAUNCHES);
    }
}
