//! The command line of the check, shared by `gridcheck-check` (the
//! binary a bundle carries to GPU machines without Rust) and `cargo xtask
//! check`. Exit status: 0 no finding, 1 findings, 2 an error (a file that
//! could not be checked, bad arguments).

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::report::Options;
use crate::run::check;
use crate::{output, pair};

const USAGE: &str = "usage: gridcheck-check [options] PATH...
  PATH                 cubins, fatbins, executables, shared libraries, objects, PTX; directories are walked
  --format text|json|sarif   (default text)
  --trace FILE         a launch trace (JSON lines of kernels/trace/'s interposer): pairs each PDL launch
                       with the previous kernel in its stream
  --produced FILE      TOML: [[kernel]] name = \"k\" produced = [1]: the parameters the previous kernel writes
  --no-table           findings and counts only (text)
  --cache DIR          keep each cubin's result by its content hash (cargo xtask check: target/check-cache)
  --jobs N             nvdisasm runs at once (default: the cores)
  --pack N             cubins (of one architecture) one nvdisasm run reads (default 32; 1: each cubin's file
                       as it is, every kernel: the reference the packing is compared with)
  --all-kernels        disassemble every kernel, not only those whose code holds a PDL opcode
                       (the default with --trace)
  --nvdisasm PATH      the disassembler (default: the checkout's newest .toolchains/<release>, then PATH)
  --time               print the wall time to standard error
exit status: 0 no finding, 1 findings, 2 an error";

/// The newest installed toolchain's nvdisasm, then one on the PATH; and
/// cuobjdump beside it.
pub fn find_tools(root: &Path) -> (Option<PathBuf>, Option<PathBuf>) {
    let (all, _) = gridcheck_toolchain::installed(root);
    let from_toolchain = all
        .iter()
        .rev()
        .find_map(|t| t.nvdisasm.clone().map(|d| (d, t.cuobjdump.clone())));
    if let Some((d, c)) = from_toolchain {
        return (Some(d), c);
    }
    let on_path = |name: &str| {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    };
    (on_path("nvdisasm"), on_path("cuobjdump"))
}

fn value<'a>(args: &'a [String], k: &mut usize, flag: &str) -> Result<&'a str, String> {
    *k += 1;
    args.get(*k)
        .map(String::as_str)
        .ok_or_else(|| format!("{flag} needs a value\n\n{USAGE}"))
}

/// Runs the command: `root` is the checkout whose `.toolchains/` may hold
/// nvdisasm, `cache` the default cache directory.
pub fn run(args: &[String], root: &Path, cache: Option<PathBuf>) -> Result<u8, String> {
    let mut format = "text".to_string();
    let mut table = true;
    let mut time = false;
    let mut paths = Vec::new();
    let mut opts = Options {
        jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
        ..Options::default()
    };
    opts.tools.cache = cache;
    let mut nvdisasm = None;
    let mut k = 0;
    while k < args.len() {
        let a = args[k].as_str();
        match a {
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(0);
            }
            "--format" => format = value(args, &mut k, a)?.to_string(),
            "--no-table" => table = false,
            "--all-kernels" => opts.tools.all_kernels = true,
            "--pack" => {
                opts.tools.pack = value(args, &mut k, a)?
                    .parse()
                    .map_err(|_| format!("--pack needs a number\n\n{USAGE}"))?;
            }
            "--time" => time = true,
            "--cache" => opts.tools.cache = Some(PathBuf::from(value(args, &mut k, a)?)),
            "--nvdisasm" => nvdisasm = Some(PathBuf::from(value(args, &mut k, a)?)),
            "--jobs" => {
                opts.jobs = value(args, &mut k, a)?
                    .parse()
                    .map_err(|_| format!("--jobs needs a number\n\n{USAGE}"))?;
            }
            "--trace" => {
                let f = value(args, &mut k, a)?;
                let text = std::fs::read_to_string(f).map_err(|e| format!("{f}: {e}"))?;
                opts.trace = Some((pair::read_trace(&text, f)?, f.to_string()));
            }
            "--produced" => {
                let f = value(args, &mut k, a)?;
                let text = std::fs::read_to_string(f).map_err(|e| format!("{f}: {e}"))?;
                opts.produced = Some((pair::read_produced(&text, f)?, f.to_string()));
            }
            s if s.starts_with("--") => return Err(format!("unknown option `{s}`\n\n{USAGE}")),
            p => paths.push(PathBuf::from(p)),
        }
        k += 1;
    }
    if !matches!(format.as_str(), "text" | "json" | "sarif") {
        return Err(format!("--format is text, json or sarif, not `{format}`"));
    }
    if paths.is_empty() {
        return Err(USAGE.to_string());
    }
    let (found, cuobjdump) = find_tools(root);
    opts.tools.nvdisasm = nvdisasm.or(found);
    opts.tools.cuobjdump = opts
        .tools
        .nvdisasm
        .as_ref()
        .and_then(|d| d.parent())
        .map(|b| b.join("cuobjdump"))
        .filter(|c| c.is_file())
        .or(cuobjdump);
    opts.tools.tmp = std::env::temp_dir();
    let start = Instant::now();
    let report = check(&paths, &opts);
    let out = match format.as_str() {
        "json" => output::json(&report),
        "sarif" => output::sarif(&report),
        _ => output::text(&report, table),
    };
    println!("{}", out.trim_end());
    if time {
        eprintln!("time: {:.1} s", start.elapsed().as_secs_f64());
    }
    Ok(report.exit_code())
}
