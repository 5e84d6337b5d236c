//! `gridcheck info ...`: the values the GPU machine's scripts used to
//! compute themselves, each from its one home in the code, one line on
//! standard output (exit 1 with the reason on standard error when there is
//! none, 2 on bad arguments):
//!
//! - `slug`: the first GPU's name as the records and tuned files name it
//!   (`gridcheck_report::slug`: `NVIDIA H200` is `nvidia-h200`);
//! - `arch`: its architecture (`sm_90`);
//! - `kernels-folder [RELEASE]`: a toolchain's kernels folder
//!   (`kernels-nvcc-13.5`; `kernels` without a release);
//! - `kernels-folder-release NAME`: the release whose folder `NAME` is;
//! - `nvcc-flags ARCH [--dlink]`: nvcc's flags for a litmus kernel, as
//!   `cargo xtask build` gives them (`gridcheck_toolchain::rdc_flags`, then
//!   the source and `-cubin -o OBJ`; with `--dlink`, the device link's,
//!   then the object and `-o CUBIN`).

use std::path::Path;
use std::process::ExitCode;

pub const HELP: &str = "gridcheck info slug                     the first GPU's slug (nvidia-h200)
gridcheck info arch                     its architecture (sm_90)
gridcheck info kernels-folder [RELEASE] a toolchain's kernels folder (kernels-nvcc-13.5)
gridcheck info kernels-folder-release NAME   the release of a kernels folder (exit 1: none)
gridcheck info nvcc-flags ARCH [--dlink]     nvcc's flags for a litmus kernel, as `cargo xtask
                                        build` gives them: `nvcc FLAGS SRC -cubin -o OBJ`, then
                                        `nvcc LINK-FLAGS OBJ -o CUBIN` (LINK-FLAGS: --dlink)
One line on standard output; exit 1 with the reason when there is no answer here.";

pub fn main(args: &[String], root: &Path) -> ExitCode {
    match answer(args, root) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err((code, why)) => {
            eprintln!("gridcheck info: {why}");
            ExitCode::from(code)
        }
    }
}

/// The answer to `args`, or the exit code and why there is none.
pub fn answer(args: &[String], root: &Path) -> Result<String, (u8, String)> {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let usage = || (2, format!("expected one of:\n{HELP}"));
    match words.as_slice() {
        ["slug"] => device().map(|d| gridcheck_report::slug(&d.name)),
        ["arch"] => device().map(|d| d.sm),
        ["kernels-folder"] => Ok(gridcheck_toolchain::kernels_folder(None)),
        ["kernels-folder", release] if gridcheck_toolchain::is_release(release) => {
            Ok(gridcheck_toolchain::kernels_folder(Some(release)))
        }
        ["kernels-folder", other] => Err((
            2,
            format!("kernels-folder `{other}`: expected a CUDA release such as 13.5"),
        )),
        ["kernels-folder-release", name] => gridcheck_toolchain::release_of_kernels_folder(name)
            .map(str::to_string)
            .ok_or_else(|| (1, format!("`{name}` is no toolchain's kernels folder"))),
        ["nvcc-flags", arch, rest @ ..] if valid_arch(arch) => match rest {
            [] => {
                let include = root.join(gridcheck_kernelgen::INCLUDE_DIR);
                Ok(gridcheck_toolchain::rdc_flags(arch, &include, &[]).join(" "))
            }
            ["--dlink"] => {
                let nvcc = gridcheck_toolchain::find_nvcc(root).map_err(|e| (1, e))?;
                Ok(nvcc.dlink_flags(arch).join(" "))
            }
            _ => Err(usage()),
        },
        ["nvcc-flags", arch, ..] => Err((
            2,
            format!("nvcc-flags `{arch}`: expected an architecture such as sm_90"),
        )),
        _ => Err(usage()),
    }
}

/// `sm_` and digits, with an optional feature suffix (`sm_90a`).
fn valid_arch(a: &str) -> bool {
    gridcheck_kernelgen::arch_number(a).is_some()
}

/// The first GPU, or why there is none (exit 1).
fn device() -> Result<gridcheck_gpu::DeviceInfo, (u8, String)> {
    gridcheck_gpu::probe().map_err(|e| (1, format!("no GPU: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(words: &[&str]) -> Result<String, (u8, String)> {
        let args: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        answer(&args, Path::new("/checkout"))
    }

    #[test]
    fn each_value_comes_from_its_home_and_bad_input_is_named() {
        assert_eq!(
            ask(&["kernels-folder", "13.5"]).unwrap(),
            "kernels-nvcc-13.5"
        );
        assert_eq!(ask(&["kernels-folder"]).unwrap(), "kernels");
        assert_eq!(
            ask(&["kernels-folder-release", "kernels-nvcc-13.1"]).unwrap(),
            "13.1"
        );
        // Not a toolchain's folder: no answer, exit 1 (a script skips it).
        for other in ["kernels", "fixtures", "kernels-nvcc-13.5.tar.xz"] {
            assert_eq!(ask(&["kernels-folder-release", other]).unwrap_err().0, 1);
        }
        assert_eq!(
            ask(&["nvcc-flags", "sm_90"]).unwrap(),
            "-arch=sm_90 -rdc=true -I/checkout/kernels/include"
        );
        let bad = ask(&["nvcc-flags", "ninety"]).unwrap_err();
        assert!(bad.0 == 2 && bad.1.contains("`ninety`"), "{bad:?}");
        assert_eq!(ask(&["kernels-folder", "x"]).unwrap_err().0, 2);
        assert_eq!(ask(&["nonsense"]).unwrap_err().0, 2);
    }
}
