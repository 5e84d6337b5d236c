//! Which built binary of a test runs on the device in hand: the choice is
//! `gridcheck_toolchain::binary::choose` over the files under the kernels
//! root (`--cubins`), made once by the harness for the trial's record and
//! its worker's job. `--binary ptx` forces the PTX path; `--devrt` names
//! the `libcudadevrt.a` the PTX is linked with (default: the kernels
//! root's).

use std::path::{Path, PathBuf};

use gridcheck_gpu::DeviceInfo;
use gridcheck_report::{Binary, Status};
use gridcheck_spec::Test;
use gridcheck_toolchain::binary::{self, Arch, Choice, ChoiceKind, FileKind, Mode};

/// Where a run's binaries come from: the kernels root, the choice's mode
/// and the device runtime PTX is linked with.
#[derive(Debug, Clone, PartialEq)]
pub struct Kernels {
    /// `<root>/<sm>/<test>.cubin`, `.ptx`, `.host`, and `libcudadevrt.a`.
    pub root: PathBuf,
    /// `--binary auto|ptx`: as built (exact, compatible, PTX) or PTX only.
    pub mode: Mode,
    /// `--devrt FILE`: the `libcudadevrt.a` PTX is linked with.
    pub devrt: Option<PathBuf>,
}

impl Kernels {
    /// The binary of `test` for `device`, or why none runs there: not run
    /// when nothing of the test is built, not supported when nothing built
    /// runs on the device.
    pub fn choose(&self, device: &DeviceInfo, test: &Test) -> Result<Choice, (Status, String)> {
        let executable = gridcheck_kernelgen::builds_executable(test);
        let built = binary::built_files(&self.root, &test.name, executable);
        if built.is_empty() {
            return Err((
                Status::NotRun,
                format!(
                    "{} holds no build of {} (run `cargo xtask build`)",
                    self.root.display(),
                    test.name
                ),
            ));
        }
        let choice = binary::choose(Arch::of(device.compute_capability), &built, self.mode)
            .map_err(|e| (Status::NotSupported, e))?;
        if choice.kind == ChoiceKind::PtxJit {
            // The kernels' toolchain (their `toolchain.json`) against the
            // driver's CUDA release: a newer toolchain's PTX does not JIT.
            let stamp = gridcheck_report::ToolchainRecord::read_from(&self.root)
                .ok()
                .flatten();
            if let Some(t) = stamp {
                binary::jit_reads(&t.release, &device.driver_version)
                    .map_err(|e| (Status::NotSupported, e))?;
            }
        }
        Ok(choice)
    }

    /// The `libcudadevrt.a` PTX is linked with: `--devrt`, else the kernels
    /// root's (`cargo xtask build` copies the toolkit's there).
    pub fn devrt(&self) -> PathBuf {
        self.devrt
            .clone()
            .unwrap_or_else(|| self.root.join(binary::DEVRT))
    }

    /// `<root>/<sm>/<test>.cubin`: where a mutant's kernel is built (the
    /// mutants are built for the device's architecture only).
    pub fn cubin(&self, sm: &str, test: &str) -> PathBuf {
        binary::built_path(&self.root, sm, test, FileKind::Cubin)
    }
}

/// The record of a choice.
pub fn record(c: &Choice) -> Binary {
    Binary {
        kind: c.kind_name().to_string(),
        arch: c.built.arch.to_string(),
        file: c.built.file.display().to_string(),
    }
}

/// The toolchain that built the kernels of architecture `sm` under `root`
/// (`cargo xtask build` writes it beside them; none for kernels built
/// before it did).
pub fn built_by(root: &Path, sm: &str) -> Option<gridcheck_report::ToolchainRecord> {
    gridcheck_report::ToolchainRecord::read_from(&root.join(sm))
        .ok()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(cc: (u32, u32)) -> DeviceInfo {
        DeviceInfo {
            name: "GPU".into(),
            compute_capability: cc,
            driver_version: "13.0".into(),
            driver_release: None,
            sm: Arch::of(cc).to_string(),
            ordinal: 0,
            uuid: None,
            pci_bus_id: None,
        }
    }

    fn litmus_test() -> Test {
        let spec = gridcheck_spec::load_dir(
            &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../spec"),
            None,
        )
        .unwrap();
        spec.tests
            .iter()
            .find(|t| matches!(t.body, gridcheck_spec::TestBody::Litmus(_)))
            .unwrap()
            .clone()
    }

    /// The harness's choice reads the kernels root it is given and the
    /// mode: an sm_80 cubin on an sm_86 device, the PTX when forced.
    #[test]
    fn the_choice_reads_the_kernels_root_and_the_mode() {
        let t = litmus_test();
        let root = std::env::temp_dir().join(format!("gridcheck-choice-{}", std::process::id()));
        for (arch, ext) in [("sm_80", "cubin"), ("sm_75", "ptx")] {
            std::fs::create_dir_all(root.join(arch)).unwrap();
            std::fs::write(root.join(arch).join(format!("{}.{ext}", t.name)), b"x").unwrap();
        }
        let mut k = Kernels {
            root: root.clone(),
            mode: Mode::Auto,
            devrt: None,
        };
        let choose = |k: &Kernels, d| k.choose(&device(d), &t).map_err(|(_, e)| e);
        let c = choose(&k, (8, 6)).unwrap();
        let r = record(&c);
        assert_eq!(
            (r.kind.as_str(), r.arch.as_str()),
            ("compatible-cubin", "sm_80")
        );
        assert!(
            r.file.ends_with(&format!("sm_80/{}.cubin", t.name)),
            "{}",
            r.file
        );
        let c = choose(&k, (9, 0)).unwrap();
        assert_eq!(record(&c).kind, "ptx-jit");
        k.mode = Mode::Ptx;
        assert_eq!(record(&choose(&k, (8, 6)).unwrap()).kind, "ptx-jit");
        assert_eq!(k.devrt(), root.join("libcudadevrt.a"));
        // Kernels of a toolchain newer than the driver: their PTX is not
        // JIT-compiled, and the trial says why; their cubins still run.
        let stamp = |release: &str| gridcheck_report::ToolchainRecord {
            release: release.into(),
            nvcc: format!("{release}.1"),
            devrt: "d".into(),
            source: "s".into(),
            disassembler: None,
        };
        stamp("13.5").write_into(&root).unwrap();
        let (status, e) = k.choose(&device((8, 6)), &t).unwrap_err();
        assert_eq!(status, Status::NotSupported);
        assert!(e.contains("cannot JIT the PTX of toolchain 13.5"), "{e}");
        k.mode = Mode::Auto;
        assert_eq!(
            record(&choose(&k, (8, 6)).unwrap()).kind,
            "compatible-cubin"
        );
        stamp("13.0").write_into(&root).unwrap();
        assert_eq!(record(&choose(&k, (9, 0)).unwrap()).kind, "ptx-jit");
        k.root = root.join("nothing");
        let e = choose(&k, (9, 0)).unwrap_err();
        assert!(e.contains("run `cargo xtask build`"), "{e}");
        let _ = std::fs::remove_dir_all(&root);
    }
}
