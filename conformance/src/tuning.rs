//! The testing environment of a run (one `gridcheck_report::Tuning`): the
//! built-in one, else the GPU's tuned file (`conformance/tuning/<gpu>.toml`,
//! else its architecture's, `conformance/tuning/sm_90.toml`, or `--tuning
//! FILE`), with the fields given as flags winning, and the file used
//! recorded. Fields are merged by name, never copied one by one: a new
//! incantation is a field of the environment type and a row of the flag
//! table (`flags.rs`). The environment chosen ([`Tuned`]) travels whole in
//! every GPU job (`job.rs`).

use std::path::{Path, PathBuf};

use gridcheck_gpu::DeviceInfo;
use gridcheck_report::Tuning;
use serde_json::{Map, Value};

/// What the command line says of the environment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TuningFlags {
    /// The fields given as flags, by name.
    pub fields: Map<String, Value>,
    /// `--tuning FILE|none`.
    pub source: TuningSource,
}

/// Where the environment's values come from, under the flags.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum TuningSource {
    /// The GPU's tuned file when there is one, else the built-in values.
    #[default]
    Device,
    /// `--tuning FILE`.
    File(PathBuf),
    /// `--tuning none`: the built-in values.
    None,
}

/// The environment a run uses, and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Tuned {
    pub tuning: Tuning,
    /// For the summary: the file and the flags given, or the built-in one.
    pub from: String,
    /// The tuned file used, relative to the root when under it (the
    /// records carry it); `None`: the built-in values.
    pub file: Option<String>,
}

impl TuningFlags {
    /// `base` with the fields given as flags in place of its own.
    pub fn over(&self, base: &Tuning) -> Result<Tuning, String> {
        let mut fields = match serde_json::to_value(base) {
            Ok(Value::Object(m)) => m,
            _ => return Err("the testing environment is not an object".into()),
        };
        fields.extend(self.fields.clone());
        serde_json::from_value(Value::Object(fields))
            .map_err(|e| format!("the environment flags: {e}"))
    }

    /// The environment of a run on `device` (none: the GPU tier is off or
    /// cannot run) in the checkout `root`: `--tuning FILE`, else the GPU's
    /// tuned file when there is one, else the built-in values; the flags
    /// given win.
    pub fn choose(&self, root: &Path, device: Option<&DeviceInfo>) -> Result<Tuned, String> {
        let found = match (&self.source, device) {
            (TuningSource::None, _) => {
                return Ok(Tuned {
                    tuning: self.over(&Tuning::default())?,
                    from: "the built-in environment (--tuning none)".into(),
                    file: None,
                });
            }
            (TuningSource::File(path), _) => Some((path.clone(), Tuning::load(path)?)),
            (TuningSource::Device, Some(d)) => Tuning::for_device(root, &d.name, &d.sm)?,
            (TuningSource::Device, None) => None,
        };
        let Some((path, t)) = found else {
            return Ok(Tuned {
                tuning: self.over(&Tuning::default())?,
                from: "the built-in environment".into(),
                file: None,
            });
        };
        let shown = path.strip_prefix(root).unwrap_or(&path);
        let given: Vec<&String> = self.fields.keys().collect();
        Ok(Tuned {
            tuning: self.over(&t)?,
            from: format!("{} (flags given: {given:?})", shown.display()),
            file: Some(shown.display().to_string()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gridcheck_gpu::Budget;
    use gridcheck_report::SearchPoint;

    fn flags(a: &[&str]) -> Result<TuningFlags, String> {
        let argv = a.iter().map(|s| s.to_string()).collect();
        crate::flags::parse(argv, "/r".into()).map(|o| o.tuning)
    }

    /// What `flags` make of `base` (a tuned file's values).
    fn over(a: &[&str], base: &Tuning) -> Tuning {
        flags(a).unwrap().over(base).unwrap()
    }

    #[test]
    fn a_flag_wins_over_the_tuned_file() {
        let mut t = Tuning {
            line_burst: 256,
            stress_lines: true,
            ..Tuning::default()
        };
        let late = Tuning {
            max_delay_cycles: 0,
            launches: 0,
            ..t.clone()
        };
        t.extra = vec![SearchPoint {
            name: "late".into(),
            tuning: late,
        }];
        let builtin = over(&["bin", "--line-burst", "64"], &Tuning::default());
        assert_eq!(builtin.line_burst, 64, "the flag over the built-in");
        let e = over(&["bin", "--line-burst", "64"], &t);
        assert_eq!(e.line_burst, 64, "the flag wins");
        assert!(e.stress_lines, "the file gives what no flag gave");
        assert_eq!(e.extra, t.extra, "the file's extra environments");
        // Extra environments given as flags win over the file's.
        let late = serde_json::to_string(&t.extra[0]).unwrap();
        let mut other = t.clone();
        other.extra[0].name = "other".into();
        let mine = over(&["bin", "--extra-environment", &late], &other);
        assert_eq!(mine.extra[0].name, "late");
        let e = flags(&["bin", "--extra-environment", "{"]).unwrap_err();
        assert!(e.starts_with("`--extra-environment {`"), "{e}");
    }

    /// The file chosen, and where the environment came from, as the
    /// records and the summary say it.
    #[test]
    fn the_environment_says_where_it_came_from() {
        let dir = std::env::temp_dir().join(format!("gridcheck-env-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("conformance/tuning")).unwrap();
        let file = dir.join("conformance/tuning/sm_90.toml");
        let h100 = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tuning/sm_90.toml");
        std::fs::copy(&h100, &file).unwrap();
        let instances = Tuning::load(&h100).unwrap().instances;
        let device = DeviceInfo {
            name: "No Such GPU".into(),
            compute_capability: (9, 0),
            driver_version: "13.0".into(),
            driver_release: None,
            sm: "sm_90".into(),
            ordinal: 0,
            uuid: None,
            pci_bus_id: None,
        };
        let f = flags(&["bin", "--launches", "5"]).unwrap();
        let e = f.choose(&dir, Some(&device)).unwrap();
        assert_eq!((e.tuning.instances, e.tuning.launches), (instances, 5));
        assert_eq!(e.file.as_deref(), Some("conformance/tuning/sm_90.toml"));
        assert_eq!(
            e.from,
            "conformance/tuning/sm_90.toml (flags given: [\"launches\"])"
        );
        let e = f.choose(&dir, None).unwrap();
        assert_eq!((e.tuning.launches, e.file), (5, None));
        assert_eq!(e.from, "the built-in environment");
        let none = flags(&["bin", "--tuning", "none"]).unwrap();
        let e = none.choose(&dir, Some(&device)).unwrap();
        assert_eq!((e.tuning, e.file), (Tuning::default(), None));
        assert_eq!(e.from, "the built-in environment (--tuning none)");
        let named = flags(&["bin", "--tuning", &file.display().to_string()]).unwrap();
        let e = named.choose(&dir, None).unwrap();
        assert_eq!(e.tuning.instances, instances);
        assert_ne!(instances, Tuning::default().instances, "the file is seen");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Each environment flag names a field of the environment (a wrong
    /// name would be an unknown field) and sets it alone.
    #[test]
    fn each_environment_flag_sets_its_field() {
        let base = Tuning::default();
        for (flag, value, want) in [
            (
                "--instances",
                "7",
                Tuning {
                    instances: 7,
                    ..base.clone()
                },
            ),
            (
                "--launches",
                "3",
                Tuning {
                    launches: 3,
                    ..base.clone()
                },
            ),
            (
                "--max-delay",
                "5",
                Tuning {
                    max_delay_cycles: 5,
                    ..base.clone()
                },
            ),
            (
                "--stress-words",
                "9",
                Tuning {
                    stress_words: 9,
                    ..base.clone()
                },
            ),
            (
                "--stress-iters",
                "11",
                Tuning {
                    stress_iters: 11,
                    ..base.clone()
                },
            ),
            (
                "--permute",
                "off",
                Tuning {
                    permute: false,
                    ..base.clone()
                },
            ),
            (
                "--stress-lines",
                "on",
                Tuning {
                    stress_lines: true,
                    ..base.clone()
                },
            ),
            (
                "--line-burst",
                "13",
                Tuning {
                    line_burst: 13,
                    ..base.clone()
                },
            ),
            (
                "--budget-launches",
                "48",
                Tuning {
                    budget_launches: 48,
                    ..base.clone()
                },
            ),
            (
                "--mutant-budget",
                "2.5",
                Tuning {
                    mutant_budget_s: 2.5,
                    ..base.clone()
                },
            ),
        ] {
            let f = flags(&["bin", flag, value]).unwrap_or_else(|e| panic!("{flag}: {e}"));
            assert_eq!(f.over(&base).unwrap(), want, "{flag} {value}");
            assert_ne!(want, base, "{flag} {value} changes something");
        }
    }

    /// The H100's environment (`conformance/tuning/sm_90.toml`), with and
    /// without flags, is what the harness made before the environment was
    /// one type: the flags the harness handed its workers then (field by
    /// field) make the same environment and the same budget (a job carries
    /// it whole: `job.rs`).
    #[test]
    fn the_sm_90_file_and_flags_make_the_same_environment_as_before() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let file = Tuning::load(&root.join("conformance/tuning/sm_90.toml")).unwrap();
        let late = SearchPoint {
            name: "late-write".into(),
            tuning: Tuning {
                instances: 64,
                // In the litmus trials too since 2026-11-26 (the file says why).
                launches: 48,
                max_delay_cycles: 0,
                stress_words: 0,
                stress_iters: 65536,
                permute: true,
                stress_lines: false,
                line_burst: 8192,
                mutant_budget_s: 0.5,
                budget_launches: 0,
                extra: Vec::new(),
            },
        };
        let h100 = Tuning {
            instances: 64,
            launches: 512,
            max_delay_cycles: 131072,
            stress_words: 0,
            stress_iters: 65536,
            permute: true,
            stress_lines: false,
            line_burst: 0,
            mutant_budget_s: 0.5,
            budget_launches: 0,
            extra: vec![late.clone()],
        };
        assert_eq!(over(&["bin"], &file), h100);
        let before = [
            "bin",
            "--instances",
            "64",
            "--launches",
            "512",
            "--max-delay",
            "131072",
            "--stress-words",
            "0",
            "--stress-iters",
            "65536",
            "--permute",
            "on",
            "--stress-lines",
            "off",
            "--line-burst",
            "0",
            "--mutant-budget",
            "0.5",
            "--extra-environment",
            r#"{"name":"late-write","instances":64,"launches":48,"max_delay_cycles":0,"stress_words":0,"stress_iters":65536,"permute":true,"stress_lines":false,"line_burst":8192,"mutant_budget_s":0.5}"#,
        ];
        // What a worker got, field by field, before the environment was one type.
        assert_eq!(over(&before, &Tuning::default()), h100);
        assert_eq!(
            Budget::of(&h100, 1),
            Budget {
                instances_per_launch: 64,
                launches: 512,
                seed: 1
            }
        );
        // Flags win field by field; the rest is the file's.
        let o = over(
            &[
                "bin",
                "--instances",
                "8",
                "--permute",
                "off",
                "--max-delay",
                "0",
            ],
            &file,
        );
        let flagged = Tuning {
            instances: 8,
            permute: false,
            max_delay_cycles: 0,
            ..h100.clone()
        };
        assert_eq!(o, flagged);
        assert_ne!(flagged, h100, "the check can tell them apart");
    }
}
