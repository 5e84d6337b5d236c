//! The testing environment the options make: the values given as flags
//! or taken from the GPU's tuned file (`conformance/tuning/<gpu>.toml`,
//! else its architecture's, `conformance/tuning/sm_90.toml`; flags winning,
//! the file used recorded), its extra environments, the incantations and budgets the
//! GPU runs take, and the flags that hand it all to a worker.

use crate::Options;

impl Options {
    /// The testing environment these options make.
    pub fn environment(&self) -> gridcheck_report::Tuning {
        gridcheck_report::Tuning {
            instances: self.instances,
            launches: self.launches,
            max_delay_cycles: self.max_delay,
            stress_words: self.stress_words,
            stress_iters: self.stress_iters,
            permute: self.permute,
            stress_lines: self.stress_lines,
            line_burst: self.line_burst,
            mutant_budget_s: self.mutant_budget_s,
            extra: self.extra.clone(),
        }
    }

    /// Takes every value of `t` that was not given as a flag.
    pub fn apply_tuning(&mut self, t: &gridcheck_report::Tuning, from: String) {
        let given = |f: &str| self.given.contains(&f);
        if !given("instances") {
            self.instances = t.instances;
        }
        if !given("launches") {
            self.launches = t.launches;
        }
        if !given("max_delay_cycles") {
            self.max_delay = t.max_delay_cycles;
        }
        if !given("stress_words") {
            self.stress_words = t.stress_words;
        }
        if !given("stress_iters") {
            self.stress_iters = t.stress_iters;
        }
        if !given("permute") {
            self.permute = t.permute;
        }
        if !given("stress_lines") {
            self.stress_lines = t.stress_lines;
        }
        if !given("line_burst") {
            self.line_burst = t.line_burst;
        }
        if !given("mutant_budget_s") {
            self.mutant_budget_s = t.mutant_budget_s;
        }
        if !given("extra") {
            self.extra = t.extra.clone();
        }
        self.tuned_from = from;
    }

    /// Takes the testing environment from `--tuning FILE`, or from the GPU's
    /// tuned file when there is one; flags given on the command line win.
    pub fn tune(&mut self, device: Option<&gridcheck_gpu::DeviceInfo>) -> Result<(), String> {
        if self.no_tuning {
            self.tuned_from = "the built-in environment (--tuning none)".into();
            return Ok(());
        }
        let found = match (&self.tuning, device) {
            (Some(path), _) => Some((path.clone(), gridcheck_report::Tuning::load(path)?)),
            (None, Some(d)) => gridcheck_report::Tuning::for_device(&self.root, &d.name, &d.sm)?,
            (None, None) => None,
        };
        if let Some((path, t)) = found {
            let shown = path.strip_prefix(&self.root).unwrap_or(&path);
            self.tuning_file = Some(shown.display().to_string());
            let from = format!("{} (flags given: {:?})", shown.display(), self.given);
            self.apply_tuning(&t, from);
        }
        Ok(())
    }

    /// The incantations of the environment.
    pub fn incantations(&self) -> gridcheck_gpu::Incantations {
        Self::incantations_of(&self.environment())
    }

    /// The incantations of a testing environment.
    pub fn incantations_of(t: &gridcheck_report::Tuning) -> gridcheck_gpu::Incantations {
        gridcheck_gpu::Incantations {
            max_delay_cycles: t.max_delay_cycles,
            stress_words: t.stress_words,
            stress_iters: t.stress_iters,
            permute: t.permute,
            stress_lines: t.stress_lines,
            line_burst: t.line_burst,
        }
    }

    /// The flags that give a worker this environment.
    pub fn environment_args(&self) -> Vec<String> {
        let mut args: Vec<String> = vec![
            "--instances".into(),
            self.instances.to_string(),
            "--launches".into(),
            self.launches.to_string(),
            "--max-delay".into(),
            self.max_delay.to_string(),
            "--stress-words".into(),
            self.stress_words.to_string(),
            "--stress-iters".into(),
            self.stress_iters.to_string(),
            "--permute".into(),
            if self.permute { "on" } else { "off" }.into(),
            "--stress-lines".into(),
            if self.stress_lines { "on" } else { "off" }.into(),
            "--line-burst".into(),
            self.line_burst.to_string(),
            "--mutant-budget".into(),
            self.mutant_budget_s.to_string(),
        ];
        for e in &self.extra {
            args.push("--extra-environment".into());
            args.push(serde_json::to_string(e).unwrap_or_default());
        }
        args
    }

    /// The incantations and budget of one of the extra environments.
    pub fn extra_run(
        e: &gridcheck_report::Tuning,
        seed: u64,
    ) -> (gridcheck_gpu::Incantations, gridcheck_gpu::Budget) {
        (
            Self::incantations_of(e),
            gridcheck_gpu::Budget {
                instances_per_launch: e.instances,
                launches: e.launches,
                seed,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(a: &[&str]) -> Result<Options, String> {
        Options::parse(a.iter().map(|s| s.to_string()).collect(), "/r".into())
    }

    #[test]
    fn a_flag_wins_over_the_tuned_file_and_reaches_workers() {
        let mut t = parse(&["bin"]).unwrap().environment();
        t.line_burst = 256;
        t.stress_lines = true;
        let mut late = t.clone();
        late.max_delay_cycles = 0;
        late.launches = 0;
        t.extra = vec![gridcheck_report::SearchPoint {
            name: "late".into(),
            tuning: late,
        }];
        let mut o = parse(&["bin", "--line-burst", "64"]).unwrap();
        o.apply_tuning(&t, "t.toml".into());
        assert_eq!(o.line_burst, 64, "the flag wins");
        assert!(o.stress_lines, "the file gives what no flag gave");
        assert_eq!(o.incantations().line_burst, 64);
        assert_eq!(o.extra, t.extra, "the file's extra environments");
        let mut argv = vec!["bin".to_string()];
        argv.extend(o.environment_args());
        let w = Options::parse(argv.clone(), "/r".into()).unwrap();
        assert_eq!(
            w.environment(),
            o.environment(),
            "a worker gets the same environment, extra ones included"
        );
        // Extra environments given as flags win over the file's.
        let mut mine = w.clone();
        let mut other = t.clone();
        other.extra[0].name = "other".into();
        mine.apply_tuning(&other, "u.toml".into());
        assert_eq!(mine.extra[0].name, "late");
        assert!(
            parse(&["bin", "--extra-environment", "{"])
                .unwrap_err()
                .contains("--extra-environment")
        );
    }
}
