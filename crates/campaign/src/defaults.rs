//! What a campaign takes from the GPU it runs on when the command line does
//! not say: the results folder, `records/<gpu slug>/campaigns/<UTC
//! date>/<the programs folder's name>` ([`results_dir`]: the slug as
//! `gridcheck info slug` and the records name a GPU, `gridcheck_report::slug`;
//! the date as the records write it, `gridcheck_store::utc_date`), and the
//! testing environment of `--tuning auto` ([`tuning`]: the GPU's tuned file,
//! else its architecture's, by the harness's own rule,
//! `Tuning::for_device`; `--tuning none`: the built-in one).

use std::path::{Path, PathBuf};

use gridcheck_report::Tuning;

/// The GPU a campaign runs on, as far as its defaults need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gpu {
    /// The device's name (`NVIDIA H200`).
    pub name: String,
    /// Its architecture (`sm_90`).
    pub sm: String,
}

/// The first GPU, or why there is none.
pub fn probe() -> Result<Gpu, String> {
    gridcheck_gpu::probe()
        .map(|d| Gpu {
            name: d.name,
            sm: d.sm,
        })
        .map_err(|e| format!("no GPU: {e}"))
}

/// `--tuning VALUE`: a file, the GPU's (`auto`), or the built-in one
/// (`none`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TuningChoice {
    File(PathBuf),
    Auto,
    None,
}

impl TuningChoice {
    pub fn parse(v: &str) -> TuningChoice {
        match v {
            "auto" => TuningChoice::Auto,
            "none" => TuningChoice::None,
            f => TuningChoice::File(f.into()),
        }
    }
}

/// The environment `choice` names in the checkout `root`, and the tuned
/// file it came from (`None`: the built-in one); `gpu` is asked only for
/// `auto`, whose GPU without a file of its own or of its architecture
/// gets the built-in one.
pub fn tuning(
    root: &Path,
    choice: &TuningChoice,
    gpu: impl FnOnce() -> Result<Gpu, String>,
) -> Result<(Option<PathBuf>, Tuning), String> {
    match choice {
        TuningChoice::None => Ok((None, Tuning::default())),
        TuningChoice::File(f) => Ok((Some(f.clone()), Tuning::load(f)?)),
        TuningChoice::Auto => {
            let g = gpu().map_err(|e| format!("--tuning auto: {e}"))?;
            Ok(match Tuning::for_device(root, &g.name, &g.sm)? {
                Some((f, t)) => (Some(f), t),
                None => (None, Tuning::default()),
            })
        }
    }
}

/// The results folder of the programs of `programs` run on the GPU named
/// `gpu_name` on the UTC day of `unix_secs`, in the checkout `root`.
pub fn results_dir(
    root: &Path,
    gpu_name: &str,
    unix_secs: u64,
    programs: &Path,
) -> Result<PathBuf, String> {
    let name = programs.file_name().ok_or_else(|| {
        format!(
            "`{}` has no name to call its results folder by: give --out",
            programs.display()
        )
    })?;
    Ok(root
        .join("records")
        .join(gridcheck_report::slug(gpu_name))
        .join("campaigns")
        .join(gridcheck_store::utc_date(unix_secs))
        .join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h200() -> Result<Gpu, String> {
        Ok(Gpu {
            name: "NVIDIA H200".into(),
            sm: "sm_90".into(),
        })
    }

    #[test]
    fn the_results_folder_is_the_gpus_the_days_and_the_programs() {
        let r = results_dir(
            Path::new("/c"),
            "NVIDIA H200",
            1_795_305_600,
            Path::new(".gpu-bundle/fuzz/"),
        );
        assert_eq!(
            r.unwrap(),
            Path::new("/c/records/nvidia-h200/campaigns/2026-11-22/fuzz")
        );
        // The last second of a day is still that day.
        let r = results_dir(
            Path::new("/c"),
            "NVIDIA H100 80GB HBM3",
            1_795_305_599,
            Path::new("enum3"),
        );
        assert_eq!(
            r.unwrap(),
            Path::new("/c/records/nvidia-h100-80gb-hbm3/campaigns/2026-11-21/enum3")
        );
        let e = results_dir(Path::new("/c"), "x", 0, Path::new("..")).unwrap_err();
        assert!(e.contains("`..`") && e.contains("--out"), "{e}");
    }

    #[test]
    fn auto_is_the_gpus_file_else_its_architectures_else_built_in() {
        let root = gridcheck_toolchain::checkout_root(env!("CARGO_MANIFEST_DIR"));
        let dir = root.join("conformance/tuning");
        let (f, t) = tuning(&root, &TuningChoice::Auto, h200).unwrap();
        assert_eq!(f.as_deref(), Some(dir.join("nvidia-h200.toml").as_path()));
        assert_eq!(t, Tuning::load(&dir.join("nvidia-h200.toml")).unwrap());
        let other = || {
            Ok(Gpu {
                name: "NVIDIA GH200 480GB".into(),
                sm: "sm_90".into(),
            })
        };
        let (f, _) = tuning(&root, &TuningChoice::Auto, other).unwrap();
        assert_eq!(f.as_deref(), Some(dir.join("sm_90.toml").as_path()));
        let blackwell = || {
            Ok(Gpu {
                name: "NVIDIA B200".into(),
                sm: "sm_100".into(),
            })
        };
        assert_eq!(
            tuning(&root, &TuningChoice::Auto, blackwell).unwrap(),
            (None, Tuning::default())
        );
        // `none` and a file ask nothing of the GPU.
        let no_gpu = || -> Result<Gpu, String> { Err("no GPU: none here".into()) };
        assert_eq!(
            tuning(&root, &TuningChoice::None, no_gpu).unwrap(),
            (None, Tuning::default())
        );
        let file = TuningChoice::parse(&dir.join("sm_90.toml").display().to_string());
        assert!(tuning(&root, &file, no_gpu).unwrap().0.is_some());
        let e = tuning(&root, &TuningChoice::Auto, no_gpu).unwrap_err();
        assert_eq!(e, "--tuning auto: no GPU: none here");
        let e = tuning(&root, &TuningChoice::parse("/nonexistent.toml"), no_gpu).unwrap_err();
        assert!(e.contains("/nonexistent.toml"), "{e}");
    }
}
