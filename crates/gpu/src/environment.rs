//! The testing environment of a litmus run: how much work it does
//! ([`Budget`]), the incantations the generated code implements (the
//! environment, `gridcheck_report::Tuning`, the one type that tuned files,
//! flags, jobs and records share), the parameters every
//! generated kernel receives (`Params`, the Rust mirror of `gc_params` in
//! `kernels/include/gridcheck.cuh`), and the seeds and co-prime slot
//! permutations of each launch.

use cudarc::driver::sys;

use gridcheck_report::Tuning;

/// How much work one litmus run does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Instances (blocks) per host launch.
    pub instances_per_launch: u32,
    /// Host launches, each with fresh memory and its own seed.
    pub launches: u32,
    pub seed: u64,
}

impl Budget {
    /// The instances and launches of `env`, seeded with `seed`.
    pub fn of(env: &Tuning, seed: u64) -> Budget {
        Budget {
            instances_per_launch: env.instances,
            launches: env.launches,
            seed,
        }
    }
}

/// The parameters of every generated kernel: `gc_params` of gridcheck.cuh.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Params {
    pub(crate) mem: sys::CUdeviceptr,
    pub(crate) regs: sys::CUdeviceptr,
    pub(crate) status: sys::CUdeviceptr,
    pub(crate) stress: sys::CUdeviceptr,
    pub(crate) seed: u64,
    pub(crate) instances: u32,
    pub(crate) perm_mul: u32,
    pub(crate) perm_add: u32,
    pub(crate) max_delay: u32,
    pub(crate) stress_words: u32,
    pub(crate) stress_iters: u32,
    pub(crate) stress_lines: u32,
    pub(crate) slot_stride: u32,
    pub(crate) lines: u32,
    pub(crate) line_burst: u32,
}

const _: () = assert!(std::mem::size_of::<Params>() == gridcheck_kernelgen::PARAMS_BYTES);

/// splitmix64.
fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The seed of launch `i` of a run seeded with `seed`.
pub fn launch_seed(seed: u64, i: u32) -> u64 {
    mix64(seed ^ mix64(u64::from(i) + 1))
}

/// A co-prime permutation `slot = (instance * mul + add) % n` for a launch.
pub fn permutation(launch_seed: u64, n: u32, permute: bool) -> (u32, u32) {
    if !permute || n <= 1 {
        return (1, 0);
    }
    let n64 = u64::from(n);
    let mut r = launch_seed;
    loop {
        r = mix64(r);
        let mul = 1 + r % (n64 - 1);
        if gcd(mul, n64) == 1 {
            return (mul as u32, (mix64(r) % n64) as u32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutations_are_bijections() {
        for n in [1u32, 2, 7, 64, 1000, 65536] {
            for s in 0..5 {
                let (mul, add) = permutation(launch_seed(42, s), n, true);
                assert_eq!(gcd(u64::from(mul), u64::from(n)), 1);
                let mut seen = vec![false; n as usize];
                for i in 0..u64::from(n) {
                    let slot = ((i * u64::from(mul) + u64::from(add)) % u64::from(n)) as usize;
                    assert!(!seen[slot]);
                    seen[slot] = true;
                }
            }
        }
        assert_eq!(permutation(1, 100, false), (1, 0));
        assert_ne!(launch_seed(1, 0), launch_seed(1, 1));
    }
}
