//! `cargo xtask campaign prepare|plain-toolchains`: the random-program
//! campaign's work where Rust is, before and after its parts on the GPU
//! machine (`lab/sessions/campaign.toml`).
//!
//! - `prepare [COUNT] [SEED]` (a release build): COUNT random programs
//!   (10 000) of seed SEED (2027) in `.gpu-bundle/fuzz`, every program of
//!   at most 3 operations in `.gpu-bundle/enum3`, and in
//!   `.gpu-bundle/old/<name>/` the programs of the H100 campaigns of
//!   2026-11-26 drawn again (the generator is deterministic), only the
//!   batches of their findings kept, with their records; then, where nvcc
//!   is found, every batch compiled here (`gridcheck campaign run
//!   --dry-run`: a cubin is kept by its key, the source, header,
//!   architecture and nvcc's version, so the GPU machine with the same
//!   nvcc compiles nothing), the cubins and keys packed into
//!   `.gpu-bundle/cubins.tar.xz` (a cubin is 30 times its size packed) and
//!   the cubins and sources removed (the campaign writes the same sources
//!   again there: the keys match). `cargo xtask gpu-bundle` follows.
//! - `plain-toolchains RES... [--bins DIR] [--arch ARCH]`: each finding's
//!   plain program of each results folder RES built by every installed
//!   toolchain (`.toolchains/`, `cargo xtask toolchain install`) into
//!   `DIR/<RES's name>/<finding>-nvcc-<release>` (`.gpu-bundle/plain`),
//!   where `gridcheck campaign plain RES` runs them beside its own build.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use serde_json::Value;

use crate::{Result, root};

const USAGE: &str = "usage: cargo xtask campaign prepare [COUNT] [SEED]
       cargo xtask campaign plain-toolchains RES... [--bins DIR] [--arch ARCH]";

/// The H100 campaigns of 2026-11-26 whose programs `prepare` draws again,
/// by their results folder's name, with the arguments that drew them.
const OLD: &str = "records/nvidia-h100-80gb-hbm3/campaigns/2026-11-26";
const OLD_RUNS: [(&str, &[&str]); 2] = [
    (
        "random-10000",
        &["--count", "10000", "--seed", "2026", "--batch", "200"],
    ),
    ("enumerated-3", ENUMERATED_3),
];
/// Every program of at most 3 operations, as `prepare` draws them now and
/// as the old campaign drew them.
const ENUMERATED_3: &[&str] = &["--count", "0", "--enumerate", "3", "--batch", "300"];
/// Seconds a toolchain's nvcc may take for one plain program.
const NVCC_TIMEOUT_S: u64 = 300;

pub fn run(args: &[String]) -> Result<()> {
    match args.first().map(String::as_str) {
        Some("prepare") => prepare(&args[1..]),
        Some("plain-toolchains") => plain_toolchains(&root(), &args[1..]),
        _ => Err(USAGE.into()),
    }
}

fn prepare(args: &[String]) -> Result<()> {
    let here = args.iter().any(|a| a == "--here");
    let words: Vec<&String> = args.iter().filter(|a| *a != "--here").collect();
    let number = |i: usize, default: u64| -> Result<u64> {
        words.get(i).map_or(Ok(default), |v| {
            v.parse()
                .map_err(|_| format!("`{v}` is not a number\n{USAGE}"))
        })
    };
    let (count, seed) = (number(0, 10_000)?, number(1, 2027)?);
    if words.len() > 2 {
        return Err(USAGE.into());
    }
    if !here {
        let mut again: Vec<String> = vec!["campaign".into(), "prepare".into()];
        again.extend(args.iter().cloned());
        return crate::rerun_release(&again);
    }
    let root = root();
    let bundle = root.join(".gpu-bundle");
    let (fuzz, enum3, old) = (
        bundle.join("fuzz"),
        bundle.join("enum3"),
        bundle.join("old"),
    );
    let (count, seed) = (count.to_string(), seed.to_string());
    draw(
        &["--count", &count, "--seed", &seed, "--batch", "200"],
        &fuzz,
    )?;
    draw(ENUMERATED_3, &enum3)?;
    let mut dirs = vec![fuzz, enum3];
    dirs.extend(draw_old(&root, &old)?);
    precompile(&root, &bundle, &dirs)?;
    for d in &dirs {
        println!("{:>8.1} MB  {}", size(d) as f64 / 1e6, d.display());
    }
    Ok(())
}

/// `cargo xtask fuzz gpu ARGS --out OUT`, in this (release) process.
fn draw(args: &[&str], out: &Path) -> Result<()> {
    let mut a: Vec<String> = std::iter::once("gpu")
        .chain(args.iter().copied())
        .map(String::from)
        .collect();
    a.extend(["--out".into(), out.display().to_string(), "--here".into()]);
    crate::fuzz::run(&a)
}

/// The old campaigns' programs drawn again into `to/<name>/`, each with
/// its records (`records.jsonl`) and only its findings' batches; the
/// folders.
fn draw_old(root: &Path, to: &Path) -> Result<Vec<PathBuf>> {
    if to.exists() {
        std::fs::remove_dir_all(to).map_err(|e| format!("cannot clear {}: {e}", to.display()))?;
    }
    std::fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
    let old = root.join(OLD);
    tar(
        root,
        &[
            "-xJf",
            &old.join("campaign-jsonl.tar.xz").display().to_string(),
            "-C",
            &to.display().to_string(),
        ],
    )?;
    let mut dirs = Vec::new();
    for (name, args) in OLD_RUNS {
        let dir = to.join(name);
        draw(args, &dir)?;
        let records = to.join(format!("{name}.jsonl"));
        std::fs::rename(&records, dir.join("records.jsonl"))
            .map_err(|e| format!("cannot move {}: {e}", records.display()))?;
        let keep = finding_batches(&old.join(name).join("findings.jsonl"))?;
        let removed = keep_batches(&dir, &keep)?;
        println!(
            "{name}: the {} batches of its findings kept ({removed} removed)",
            keep.len()
        );
        dirs.push(dir);
    }
    for e in std::fs::read_dir(to).into_iter().flatten().flatten() {
        if e.path().extension().is_some_and(|x| x == "jsonl") {
            let _ = std::fs::remove_file(e.path());
        }
    }
    Ok(dirs)
}

/// The batches (`b0000`) a findings file names, each line's `batch`.
fn finding_batches(findings: &Path) -> Result<BTreeSet<String>> {
    let text = std::fs::read_to_string(findings)
        .map_err(|e| format!("cannot read {}: {e}", findings.display()))?;
    let mut out = BTreeSet::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let at = format!("{}:{}", findings.display(), i + 1);
        let v: Value = serde_json::from_str(line).map_err(|e| format!("{at}: {e}"))?;
        let batch = v["batch"]
            .as_str()
            .ok_or_else(|| format!("{at}: no field `batch` (a string)"))?;
        out.insert(batch.to_string());
    }
    Ok(out)
}

/// Removes the batches of `dir` not in `keep`; how many.
fn keep_batches(dir: &Path, keep: &BTreeSet<String>) -> Result<usize> {
    let batches = dir.join(gridcheck_campaign::BATCHES);
    let mut removed = 0;
    let entries = std::fs::read_dir(&batches)
        .map_err(|e| format!("cannot read {}: {e}", batches.display()))?;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if e.path().is_dir() && !keep.contains(&name) {
            std::fs::remove_dir_all(e.path())
                .map_err(|err| format!("cannot remove {}: {err}", e.path().display()))?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Every batch of `dirs` compiled here, where nvcc is found, the cubins
/// packed into `bundle/cubins.tar.xz` and, with the sources, removed.
fn precompile(root: &Path, bundle: &Path, dirs: &[PathBuf]) -> Result<()> {
    if let Err(e) = gridcheck_toolchain::find_nvcc(root) {
        let why = e.lines().next().unwrap_or_default();
        println!("not compiled here ({why}): the GPU machine compiles the batches");
        return Ok(());
    }
    let scratch = std::env::temp_dir().join(format!("gridcheck-prepare-{}", std::process::id()));
    for d in dirs {
        let args: Vec<String> = [
            "run",
            &d.display().to_string(),
            "--root",
            &root.display().to_string(),
        ]
        .into_iter()
        .map(String::from)
        .chain([
            "--out".into(),
            scratch.display().to_string(),
            "--dry-run".into(),
        ])
        .collect();
        if gridcheck_campaign::main(&args, root) != ExitCode::SUCCESS {
            return Err(format!(
                "the batches of {} did not all compile (above)",
                d.display()
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    let mut packed = Vec::new();
    let mut removed = Vec::new();
    for d in dirs {
        for f in files(d) {
            match f.file_name().and_then(|n| n.to_str()) {
                Some("batch.cubin") => {
                    packed.push(f.clone());
                    removed.push(f);
                }
                Some("batch.key") => packed.push(f),
                Some("batch.cu") => removed.push(f),
                _ => {}
            }
        }
    }
    let list = bundle.join("cubins.list");
    let names: Vec<String> = packed
        .iter()
        .map(|p| p.strip_prefix(root).unwrap_or(p).display().to_string())
        .collect();
    std::fs::write(&list, names.join("\n") + "\n")
        .map_err(|e| format!("cannot write {}: {e}", list.display()))?;
    let pack = bundle.join("cubins.tar.xz");
    tar(
        root,
        &[
            "-cJf",
            &pack.display().to_string(),
            "-T",
            &list.display().to_string(),
        ],
    )?;
    let _ = std::fs::remove_file(&list);
    for f in &removed {
        std::fs::remove_file(f).map_err(|e| format!("cannot remove {}: {e}", f.display()))?;
    }
    println!("{} files packed into {}", packed.len(), pack.display());
    Ok(())
}

/// `tar ARGS` in `dir`.
fn tar(dir: &Path, args: &[&str]) -> Result<()> {
    let st = crate::status(Command::new("tar").current_dir(dir).args(args))?;
    if st.success() {
        Ok(())
    } else {
        Err(format!("tar {} failed ({st})", args.join(" ")))
    }
}

/// Every file under `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The bytes of the files under `dir`.
fn size(dir: &Path) -> u64 {
    files(dir)
        .iter()
        .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
        .sum()
}

/// `plain-toolchains RES... [--bins DIR] [--arch ARCH]` in the checkout
/// `root`.
fn plain_toolchains(root: &Path, args: &[String]) -> Result<()> {
    let (mut results, mut bins, mut arch) = (
        Vec::new(),
        root.join(".gpu-bundle/plain"),
        "sm_90".to_string(),
    );
    let mut it = args.iter();
    while let Some(x) = it.next() {
        let mut val = || {
            it.next()
                .ok_or_else(|| format!("{x} needs a value\n{USAGE}"))
        };
        match x.as_str() {
            "--bins" => bins = val()?.into(),
            "--arch" => arch = val()?.clone(),
            s if s.starts_with('-') => return Err(format!("unknown argument `{s}`\n{USAGE}")),
            s => results.push(PathBuf::from(s)),
        }
    }
    if results.is_empty() {
        return Err(format!("no results folder named\n{USAGE}"));
    }
    let (toolchains, unusable) = gridcheck_toolchain::installed(root);
    for u in &unusable {
        println!("left out: {u}");
    }
    if toolchains.is_empty() {
        return Err(format!(
            "no toolchain installed in {} (cargo xtask toolchain install 13.5)",
            root.join(gridcheck_toolchain::TOOLCHAINS_DIR).display()
        ));
    }
    let mut failed = Vec::new();
    let mut built = 0;
    for res in &results {
        for cu in gridcheck_campaign::plain_findings(res)? {
            let finding = cu
                .file_stem()
                .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
            for t in &toolchains {
                let exe = gridcheck_campaign::plain_binary(&bins, res, &finding, Some(&t.name))?;
                match gridcheck_campaign::build_plain(&t.nvcc, &cu, &exe, &arch, NVCC_TIMEOUT_S) {
                    Ok(()) => built += 1,
                    Err(e) => failed.push(format!("{finding}: nvcc {}: {e}", t.name)),
                }
            }
        }
    }
    println!("{built} plain programs built into {}", bins.display());
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} builds failed:\n{}",
            failed.len(),
            failed.join("\n")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "gridcheck-xtask-campaign-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn only_the_findings_batches_are_kept() {
        let d = scratch("keep");
        let findings = d.join("findings.jsonl");
        std::fs::write(&findings, "{\"batch\": \"b0001\", \"class\": \"hang\"}\n\n{\"batch\": \"b0003\"}\n{\"batch\": \"b0001\"}\n").unwrap();
        let keep = finding_batches(&findings).unwrap();
        assert_eq!(
            keep.iter().map(String::as_str).collect::<Vec<_>>(),
            ["b0001", "b0003"]
        );
        for b in ["b0000", "b0001", "b0002", "b0003"] {
            std::fs::create_dir_all(d.join("batches").join(b)).unwrap();
        }
        assert_eq!(keep_batches(&d, &keep).unwrap(), 2);
        let left: BTreeSet<String> = std::fs::read_dir(d.join("batches"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left, keep);
        // A line without its batch is named by file and line.
        std::fs::write(&findings, "{\"batch\": \"b0001\"}\n{\"batch\": 3}\n").unwrap();
        let e = finding_batches(&findings).unwrap_err();
        assert!(e.contains("findings.jsonl:2: no field `batch`"), "{e}");
        std::fs::write(&findings, "{\"batch\"\n").unwrap();
        assert!(
            finding_batches(&findings)
                .unwrap_err()
                .contains("findings.jsonl:1: ")
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    /// A stand-in toolchain in `.toolchains/<release>`: an nvcc that says
    /// its version and "builds" by copying the source, unless it holds
    /// `#error`; its arguments kept in `nvcc.args`.
    fn stand_in_toolchain(root: &Path, release: &str) {
        let cu13 = root.join(format!(
            ".toolchains/{release}/lib/python3.12/site-packages/nvidia/cu13"
        ));
        std::fs::create_dir_all(cu13.join("bin")).unwrap();
        std::fs::create_dir_all(cu13.join("lib")).unwrap();
        std::fs::write(cu13.join("lib/libcudadevrt.a"), "").unwrap();
        let nvcc = cu13.join("bin/nvcc");
        std::fs::write(
            &nvcc,
            format!(
                "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'release {release}, V{release}.1'; exit 0; fi\n\
                 echo \"$@\" >> {args}\nout=; src=\n\
                 while [ $# -gt 0 ]; do case \"$1\" in -o) out=$2; shift;; *.cu) src=$1;; esac; shift; done\n\
                 grep -q '#error' \"$src\" && {{ echo 'error: no' >&2; exit 1; }}\ncp \"$src\" \"$out\"\n",
                args = root.join("nvcc.args").display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&nvcc, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn every_toolchain_builds_every_findings_plain_program_beside_the_others() {
        let root = scratch("toolchains");
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let res = root.join("res/fuzz");
        std::fs::create_dir_all(res.join("findings")).unwrap();
        std::fs::write(res.join("findings/000-hang.cu"), "int main() {}\n").unwrap();
        std::fs::write(res.join("findings/000-hang.yaml"), "not a program\n").unwrap();
        let r = res.display().to_string();
        let e = plain_toolchains(&root, &words(&[&r])).unwrap_err();
        assert!(
            e.contains("no toolchain installed") && e.contains("toolchain install"),
            "{e}"
        );
        stand_in_toolchain(&root, "13.1");
        stand_in_toolchain(&root, "13.5");
        plain_toolchains(&root, &words(&[&r])).unwrap();
        let bins = root.join(".gpu-bundle/plain/fuzz");
        for release in ["13.1", "13.5"] {
            assert!(
                bins.join(format!("000-hang-nvcc-{release}")).is_file(),
                "{release}"
            );
        }
        assert_eq!(
            std::fs::read_dir(&bins).unwrap().count(),
            2,
            "the .yaml is no program"
        );
        let args = std::fs::read_to_string(root.join("nvcc.args")).unwrap();
        assert!(
            args.lines()
                .all(|l| l.starts_with("-arch=sm_90 -rdc=true ") && l.contains("-lcudadevrt")),
            "{args}"
        );
        // A build that fails is named, the others still built.
        std::fs::write(res.join("findings/001-bad.cu"), "#error no\n").unwrap();
        let e = plain_toolchains(
            &root,
            &words(&[&r, "--bins", &root.join("b").display().to_string()]),
        )
        .unwrap_err();
        assert!(
            e.starts_with("2 builds failed") && e.contains("001-bad: nvcc 13.1"),
            "{e}"
        );
        assert!(root.join("b/fuzz/000-hang-nvcc-13.5").is_file());
        assert!(plain_toolchains(&root, &words(&[])).is_err());
        assert!(
            plain_toolchains(&root, &words(&[&r, "--frob"]))
                .unwrap_err()
                .contains("`--frob`")
        );
        let _ = std::fs::remove_dir_all(&root);
    }
}
