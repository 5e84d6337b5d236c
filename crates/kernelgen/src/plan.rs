//! Which tests build for which architecture, with which extra nvcc flags,
//! and the properties of a litmus test that decide it (CDP1, PDL, whether
//! it observes device runtime errors).

use gridcheck_spec::{KernelLaunch, Litmus, Op, Profile, Test, TestBody};

/// The extra nvcc flags of a CDP1 litmus test (one with `devicesync`): CUDA
/// 12 and newer compile device-side `cudaDeviceSynchronize` only with
/// `CUDA_FORCE_CDP1_IF_SUPPORTED`, and only below sm_90 (the generated code
/// has an `#error` for sm_90 and newer).
pub const CDP1_FLAGS: [&str; 2] = [
    "-DCUDA_FORCE_CDP1_IF_SUPPORTED",
    "-D__CDPRT_SUPPRESS_SYNC_DEPRECATION_WARNING",
];

/// Whether a litmus test observes device runtime errors: it reads a
/// thread's last error (`geterror`, `peekerror`), records a `devicesync`'s
/// result, or sets a device runtime limit. Its launches and `devicesync`s
/// then get no error word and never clear the last error themselves
/// (`cudaGetLastError()` after a launch would reset what the test reads).
pub fn observes_errors(litmus: &Litmus) -> bool {
    !litmus.limits.is_empty()
        || litmus
            .kernels
            .iter()
            .flat_map(|k| &k.threads)
            .flat_map(|t| &t.ops)
            .any(|op| {
                matches!(
                    op,
                    Op::GetLastError { .. }
                        | Op::PeekAtLastError { .. }
                        | Op::DeviceSynchronize { reg: Some(_) }
                )
            })
}

/// Whether a litmus test uses CDP1 (device-side `cudaDeviceSynchronize`).
pub fn uses_cdp1(litmus: &Litmus) -> bool {
    litmus
        .kernels
        .iter()
        .flat_map(|k| &k.threads)
        .flat_map(|t| &t.ops)
        .any(|op| matches!(op, Op::DeviceSynchronize { .. }))
}

/// Whether a litmus test uses PDL (`trigger`, `gridsync`, a `host-pdl`
/// launch), which needs sm_90 or newer.
pub fn uses_pdl(litmus: &Litmus) -> bool {
    litmus.kernels.iter().any(|k| {
        k.launch == (KernelLaunch::Host { pdl: true })
            || k.threads
                .iter()
                .flat_map(|t| &t.ops)
                .any(|op| matches!(op, Op::Trigger | Op::GridDependencySync))
    })
}

/// Whether a litmus test copies through the asynchronous proxy (`bulkload`,
/// `bulkstore`, `mbarwait`, `bulkcommit`, `bulkwait`, `fence.proxy.async`):
/// `cp.async.bulk` and its completion need sm_90 or newer.
pub fn uses_async_proxy(litmus: &Litmus) -> bool {
    litmus
        .kernels
        .iter()
        .flat_map(|k| &k.threads)
        .flat_map(|t| &t.ops)
        .any(|op| {
            matches!(
                op,
                Op::BulkLoad { .. }
                    | Op::BulkStore { .. }
                    | Op::MbarWait { .. }
                    | Op::BulkCommit
                    | Op::BulkWait { .. }
                    | Op::FenceProxyAsync
            )
        })
}

/// The number of an architecture: 90 for `sm_90` and `sm_90a`, 75 for
/// `compute_75`.
pub fn arch_number(arch: &str) -> Option<u32> {
    let digits: String = arch
        .strip_prefix("sm_")
        .or_else(|| arch.strip_prefix("compute_"))?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// Whether a program's flags name its targets themselves (`-gencode`,
/// `-arch`, `-code`): such a test is built only for its own `arch`, as
/// its flags say (a test of JIT loading from PTX of one architecture).
pub fn pins_targets(flags: &[String]) -> bool {
    flags.iter().any(|f| {
        [
            "-gencode",
            "--generate-code",
            "-arch",
            "--gpu-architecture",
            "-code",
            "--gpu-code",
        ]
        .iter()
        .any(|p| f == p || f.starts_with(&format!("{p}=")))
    })
}

/// Whether a runtime or host program uses PDL: its source names
/// `cudaGridDependencySynchronize`, `cudaTriggerProgrammaticLaunchCompletion`,
/// `griddepcontrol`, anything programmatic (a launch attribute, a graph
/// port, the pair helpers' `gc_capture_programmatic_*`; any case), or
/// includes the PDL pair helpers (`gridcheck_pdl_pair.cuh`).
pub fn source_uses_pdl(source: &str) -> bool {
    let lower = source.to_ascii_lowercase();
    [
        "cudagriddependencysynchronize",
        "cudatriggerprogrammaticlaunchcompletion",
        "griddepcontrol",
        "programmatic",
        "gridcheck_pdl_pair.cuh",
    ]
    .iter()
    .any(|w| lower.contains(w))
}

/// Which architectures a runtime or host program builds for (see
/// `spec/README.md`, `arch:`): `Err(reason)` when not for `arch`.
fn program_plan(
    name: &str,
    own: &str,
    flags: &[String],
    source: &str,
    arch: &str,
) -> Result<Option<Vec<String>>, String> {
    let n = arch_number(arch);
    let own_n = arch_number(own);
    let cdp1 = flags.iter().any(|f| f == CDP1_FLAGS[0]);
    if pins_targets(flags) {
        return if arch == own {
            Ok(Some(flags.to_vec()))
        } else {
            Err(format!(
                "test `{name}` is built for {own} only: its flags name their own targets"
            ))
        };
    }
    if cdp1 && own_n.is_some_and(|o| o < 90) {
        return match n {
            Some(n) if n < 90 => Ok(Some(flags.to_vec())),
            _ => Err(format!(
                "test `{name}` uses CDP1 (written for {own}), which exists only below sm_90"
            )),
        };
    }
    if (cdp1 || source_uses_pdl(source)) && n.is_some_and(|n| n < 90) {
        return Err(format!(
            "test `{name}` is for sm_90 and newer ({})",
            if cdp1 {
                "what the CDP1 flag does from 9.0 on"
            } else {
                "it uses PDL"
            }
        ));
    }
    Ok(Some(flags.to_vec()))
}

/// Whether a rule of `profile` runs on a device of compute capability
/// `major.x`: CDP1 exists only below 9.0, PDL needs 9.0; `Err` says which.
pub fn profile_runs_on(profile: Profile, major: u32) -> Result<(), &'static str> {
    match profile {
        Profile::Cdp1 if major >= 9 => Err("CDP1 exists only below compute capability 9.0"),
        Profile::Pdl if major < 9 => Err("PDL needs compute capability 9.0"),
        _ => Ok(()),
    }
}

/// How `cargo xtask build` compiles a test's generated file for `arch`:
/// `Ok(Some(flags))` with the extra nvcc flags, `Ok(None)` when the test
/// has no generated file (compile tests), `Err(reason)` when the file is not
/// built for this architecture (a CDP1 test on sm_90 and newer, a PDL test
/// below sm_90, a program whose flags pin another architecture).
///
/// A runtime or host test's `arch:` is the architecture it was written
/// for; it is built for every architecture its program allows: a CDP1
/// program (`-DCUDA_FORCE_CDP1_IF_SUPPORTED`) written for an architecture
/// below sm_90 only below sm_90, a PDL program (or a CDP1-flag program
/// written for sm_90) from sm_90 on, a program whose flags name its own
/// targets (`-gencode`) only for its `arch:`, any other (CDP2) for every
/// architecture.
pub fn build_plan(test: &Test, arch: &str) -> Result<Option<Vec<String>>, String> {
    match &test.body {
        TestBody::Litmus(l) if uses_pdl(l) && arch_number(arch).is_some_and(|n| n < 90) => {
            Err(format!(
                "test `{}` uses PDL, which compiles only for sm_90 and newer",
                test.name
            ))
        }
        TestBody::Litmus(l) if uses_async_proxy(l) && arch_number(arch).is_some_and(|n| n < 90) => {
            Err(format!(
                "test `{}` copies through the asynchronous proxy (cp.async.bulk), which \
                 compiles only for sm_90 and newer",
                test.name
            ))
        }
        TestBody::Litmus(l) if uses_cdp1(l) => match arch_number(arch) {
            Some(n) if n < 90 => Ok(Some(CDP1_FLAGS.map(String::from).to_vec())),
            _ => Err(format!(
                "test `{}` uses CDP1 (`devicesync`), which compiles only below sm_90",
                test.name
            )),
        },
        TestBody::Litmus(_) => Ok(Some(Vec::new())),
        TestBody::Runtime(r) => program_plan(&test.name, &r.arch, &r.flags, &r.source, arch),
        TestBody::Host(h) => program_plan(&test.name, &h.arch, &h.flags, &h.source, arch),
        TestBody::Compile(_) => Ok(None),
    }
}

/// The architecture (of `targets`, lowest first) whose PTX a test carries
/// so that the driver can JIT it forward: the lowest its plan allows. None
/// for compile tests, host tests (executables; the harness cannot JIT them)
/// and programs whose flags pin their targets.
pub fn ptx_arch<'a>(test: &Test, targets: &'a [String]) -> Option<&'a str> {
    match &test.body {
        TestBody::Compile(_) | TestBody::Host(_) => return None,
        TestBody::Runtime(r) if pins_targets(&r.flags) => return None,
        _ => {}
    }
    let mut sorted: Vec<&'a String> = targets.iter().collect();
    sorted.sort_by_key(|a| arch_number(a));
    sorted
        .into_iter()
        .find(|a| matches!(build_plan(test, a), Ok(Some(_))))
        .map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(kind: &str, arch: &str, flags: &str, source: &str) -> Test {
        let yaml = gridcheck_fixture::OneRule::new().id("cdp2.t.r").tests(&format!(
            "  - name: p\n    kind: {kind}\n    arch: {arch}\n    flags: [{flags}]\n    source: \"{source}\"\n    outputs: [a]\n    expect:\n      a: 1\n"
        )).yaml();
        let spec =
            gridcheck_spec::load_sources(&[(std::path::PathBuf::from("spec/x.yaml"), yaml)], None)
                .unwrap_or_else(|e| panic!("{e}"));
        spec.tests[0].clone()
    }

    const ENTRY: &str = "extern \\\"C\\\" __global__ void entry(unsigned int *out) { out[0] = 1; }";
    const PDL: &str = "extern \\\"C\\\" __global__ void entry(unsigned int *out) { cudaGridDependencySynchronize(); out[0] = 1; }";

    const MAIN: &str = "int main() { return 0; }";

    fn archs(t: &Test) -> Vec<&'static str> {
        ["sm_75", "sm_80", "sm_89", "sm_90", "sm_100", "sm_120"]
            .into_iter()
            .filter(|a| matches!(build_plan(t, a), Ok(Some(_))))
            .collect()
    }

    #[test]
    fn programs_build_for_every_architecture_their_program_allows() {
        // CDP2: everywhere.
        let t = program("runtime", "sm_90", "", ENTRY);
        assert_eq!(
            archs(&t),
            ["sm_75", "sm_80", "sm_89", "sm_90", "sm_100", "sm_120"]
        );
        let targets: Vec<String> = ["sm_90", "sm_75", "sm_80"].map(String::from).to_vec();
        assert_eq!(ptx_arch(&t, &targets), Some("sm_75"));
        // CDP1 written for sm_80: below sm_90 only.
        let t = program("runtime", "sm_80", "-DCUDA_FORCE_CDP1_IF_SUPPORTED", ENTRY);
        assert_eq!(archs(&t), ["sm_75", "sm_80", "sm_89"]);
        let e = build_plan(&t, "sm_90").unwrap_err();
        assert!(e.contains("only below sm_90"), "{e}");
        // The CDP1 flag on a test written for sm_90: from sm_90 on.
        let t = program("runtime", "sm_90", "-DCUDA_FORCE_CDP1_IF_SUPPORTED", ENTRY);
        assert_eq!(archs(&t), ["sm_90", "sm_100", "sm_120"]);
        // PDL: from sm_90 on, its PTX for sm_90.
        let t = program("runtime", "sm_90", "", PDL);
        assert_eq!(archs(&t), ["sm_90", "sm_100", "sm_120"]);
        assert_eq!(ptx_arch(&t, &targets), Some("sm_90"));
        // Pinned targets: its own arch only, no PTX of ours.
        let t = program(
            "host",
            "sm_90",
            "-gencode=arch=compute_80,code=compute_80",
            MAIN,
        );
        assert_eq!(archs(&t), ["sm_90"]);
        let e = build_plan(&t, "sm_80").unwrap_err();
        assert!(e.contains("flags name their own targets"), "{e}");
        assert_eq!(ptx_arch(&t, &targets), None);
        // Host programs carry no PTX.
        let t = program("host", "sm_90", "", MAIN);
        assert_eq!(archs(&t).len(), 6);
        assert_eq!(ptx_arch(&t, &targets), None);
    }

    #[test]
    fn architecture_numbers() {
        assert_eq!(arch_number("sm_90a"), Some(90));
        assert_eq!(arch_number("compute_75"), Some(75));
        assert_eq!(arch_number("sm_121"), Some(121));
        assert_eq!(arch_number("gfx90a"), None);
        assert!(pins_targets(&["-arch=sm_80".into()]));
        assert!(source_uses_pdl(
            "gc_capture_programmatic_event_pair(m, 0, &g);"
        ));
        assert!(source_uses_pdl("#include \"gridcheck_pdl_pair.cuh\""));
        assert!(!source_uses_pdl("child<<<1, 1>>>(out);"));
        assert!(!pins_targets(&["-archive".into(), "-DX".into()]));
    }
}
