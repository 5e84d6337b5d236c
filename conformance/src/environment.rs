//! The testing environment the options make (`Options::environment`, one
//! `gridcheck_report::Tuning`): the built-in one, else the GPU's tuned file
//! (`conformance/tuning/<gpu>.toml`, else its architecture's,
//! `conformance/tuning/sm_90.toml`, or `--tuning FILE`), with the fields
//! given as flags winning, the file used recorded; and the flag that hands
//! it all, extra environments included, to a worker. Fields are merged by
//! name, never copied one by one: a new incantation is a field of the
//! environment type and a row of the flag table (`flags.rs`).

use crate::Options;
use gridcheck_report::Tuning;

impl Options {
    /// `base` with the fields given as flags in place of its own.
    pub fn with_flags(&self, base: &Tuning) -> Result<Tuning, String> {
        let mut fields = match serde_json::to_value(base) {
            Ok(serde_json::Value::Object(m)) => m,
            _ => return Err("the testing environment is not an object".into()),
        };
        fields.extend(self.environment_flags.clone());
        serde_json::from_value(serde_json::Value::Object(fields))
            .map_err(|e| format!("the environment flags: {e}"))
    }

    /// Takes `t` as the environment, but for the fields given as flags.
    pub fn apply_tuning(&mut self, t: &Tuning, from: String) -> Result<(), String> {
        self.environment = self.with_flags(t)?;
        self.tuned_from = from;
        Ok(())
    }

    /// Takes the testing environment from `--tuning FILE`, or from the GPU's
    /// tuned file when there is one; flags given on the command line win.
    pub fn tune(&mut self, device: Option<&gridcheck_gpu::DeviceInfo>) -> Result<(), String> {
        if self.no_tuning {
            self.tuned_from = "the built-in environment (--tuning none)".into();
            return Ok(());
        }
        let found = match (&self.tuning, device) {
            (Some(path), _) => Some((path.clone(), Tuning::load(path)?)),
            (None, Some(d)) => Tuning::for_device(&self.root, &d.name, &d.sm)?,
            (None, None) => None,
        };
        if let Some((path, t)) = found {
            let shown = path.strip_prefix(&self.root).unwrap_or(&path);
            self.tuning_file = Some(shown.display().to_string());
            let given: Vec<&String> = self.environment_flags.keys().collect();
            let from = format!("{} (flags given: {given:?})", shown.display());
            self.apply_tuning(&t, from)?;
        }
        Ok(())
    }

    /// The flag that gives a worker this environment, extra environments
    /// included.
    pub fn environment_args(&self) -> Vec<String> {
        vec![
            "--environment".into(),
            serde_json::to_string(&self.environment).unwrap_or_default(),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gridcheck_gpu::Budget;
    use gridcheck_report::SearchPoint;

    fn parse(a: &[&str]) -> Result<Options, String> {
        Options::parse(a.iter().map(|s| s.to_string()).collect(), "/r".into())
    }

    fn worker_of(o: &Options) -> Options {
        let mut argv = vec!["bin".to_string()];
        argv.extend(o.environment_args());
        Options::parse(argv, "/r".into()).unwrap()
    }

    #[test]
    fn a_flag_wins_over_the_tuned_file_and_reaches_workers() {
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
        let mut o = parse(&["bin", "--line-burst", "64"]).unwrap();
        assert_eq!(o.environment.line_burst, 64, "the flag over the built-in");
        o.apply_tuning(&t, "t.toml".into()).unwrap();
        assert_eq!(o.environment.line_burst, 64, "the flag wins");
        assert!(
            o.environment.stress_lines,
            "the file gives what no flag gave"
        );
        assert_eq!(
            o.environment.extra, t.extra,
            "the file's extra environments"
        );
        let w = worker_of(&o);
        assert_eq!(
            w.environment, o.environment,
            "a worker gets the same environment, extra ones included"
        );
        // A worker's environment is all flags: no file changes it.
        let mut again = w.clone();
        again
            .apply_tuning(&Tuning::default(), "u.toml".into())
            .unwrap();
        assert_eq!(again.environment, o.environment);
        // Extra environments given as flags win over the file's.
        let late = serde_json::to_string(&t.extra[0]).unwrap();
        let mut mine = parse(&["bin", "--extra-environment", &late]).unwrap();
        let mut other = t.clone();
        other.extra[0].name = "other".into();
        mine.apply_tuning(&other, "u.toml".into()).unwrap();
        assert_eq!(mine.environment.extra[0].name, "late");
        let e = parse(&["bin", "--extra-environment", "{"]).unwrap_err();
        assert!(e.starts_with("`--extra-environment {`"), "{e}");
        let e = parse(&["bin", "--environment", "{\"instances\": 1}"]).unwrap_err();
        assert!(e.starts_with("`--environment "), "{e}");
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
                "--mutant-budget",
                "2.5",
                Tuning {
                    mutant_budget_s: 2.5,
                    ..base.clone()
                },
            ),
        ] {
            let o = parse(&["bin", flag, value]).unwrap_or_else(|e| panic!("{flag}: {e}"));
            assert_eq!(o.environment, want, "{flag} {value}");
            assert_ne!(want, base, "{flag} {value} changes something");
        }
    }

    /// The H100's environment (`conformance/tuning/sm_90.toml`), with and
    /// without flags, is what the harness made before the environment was
    /// one type, and the worker gets exactly that: the flags the harness
    /// handed its workers then (field by field) and the one it hands them
    /// now make the same environment and the same budget.
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
            extra: vec![late.clone()],
        };
        let mut o = parse(&["bin"]).unwrap();
        o.apply_tuning(&file, "sm_90.toml".into()).unwrap();
        assert_eq!(o.environment, h100);
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
        let old_worker = parse(&before).unwrap();
        let new_worker = worker_of(&o);
        assert_eq!(old_worker.environment, h100);
        assert_eq!(new_worker.environment, h100);
        assert_eq!(
            Budget::of(&new_worker.environment, new_worker.seed),
            Budget {
                instances_per_launch: 64,
                launches: 512,
                seed: 1
            }
        );
        // Flags win field by field; the rest is the file's.
        let mut o = parse(&[
            "bin",
            "--instances",
            "8",
            "--permute",
            "off",
            "--max-delay",
            "0",
        ])
        .unwrap();
        o.apply_tuning(&file, "sm_90.toml".into()).unwrap();
        let flagged = Tuning {
            instances: 8,
            permute: false,
            max_delay_cycles: 0,
            ..h100.clone()
        };
        assert_eq!(o.environment, flagged);
        assert_eq!(worker_of(&o).environment, flagged);
        assert_ne!(flagged, h100, "the check can tell them apart");
    }
}
