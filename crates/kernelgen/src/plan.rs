//! Which tests build for which architecture, with which extra nvcc flags,
//! and the properties of a litmus test that decide it (CDP1, PDL, whether
//! it observes device runtime errors).

use gridcheck_spec::{KernelLaunch, Litmus, Op, Test, TestBody};

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

/// The number of an architecture: 90 for `sm_90` and `sm_90a`.
fn arch_number(arch: &str) -> Option<u32> {
    let digits: String = arch
        .strip_prefix("sm_")?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// How `cargo xtask build` compiles a test's generated file for `arch`:
/// `Ok(Some(flags))` with the extra nvcc flags, `Ok(None)` when the test
/// has no generated file (compile tests), `Err(reason)` when the file is not
/// built for this architecture (a runtime test for another one, a CDP1
/// litmus test on sm_90 and newer, a PDL litmus test below sm_90).
pub fn build_plan(test: &Test, arch: &str) -> Result<Option<Vec<String>>, String> {
    match &test.body {
        TestBody::Litmus(l) if uses_pdl(l) && arch_number(arch).is_some_and(|n| n < 90) => {
            Err(format!(
                "test `{}` uses PDL, which compiles only for sm_90 and newer",
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
        TestBody::Runtime(r) if r.arch == arch => Ok(Some(r.flags.clone())),
        TestBody::Runtime(r) => Err(format!("test `{}` is for {}", test.name, r.arch)),
        TestBody::Host(h) if h.arch == arch => Ok(Some(h.flags.clone())),
        TestBody::Host(h) => Err(format!("test `{}` is for {}", test.name, h.arch)),
        TestBody::Compile(_) => Ok(None),
    }
}
