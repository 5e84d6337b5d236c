//! A litmus test: memory, kernels and their threads' operations, launch
//! structure, limits and the condition.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::tiles::{Locations, is_tile_term, tile_term};
use super::{Cx, ItemErr, MAX_THREADS};
use crate::ast::*;
use crate::condition::{self, Condition};
use crate::limits::MAX_LAUNCH_DEPTH;
use crate::ops::{is_ident, parse_op};
use crate::raw::{RawKernel, RawTest};
use crate::thread_name;

impl Cx {
    /// A litmus test, loaded step by step: the expectation, memory, each
    /// kernel and its threads, the launch structure, the host kernels, the
    /// limits, then the condition against the test's observables.
    pub(super) fn litmus(&mut self, t: &RawTest, ie: &ItemErr) -> Option<Litmus> {
        let before = self.errors.len();
        let word = self.expect_word(t, ie).unwrap_or_default();
        let expect = Verdict::parse(&word);
        if expect.is_none() && t.expect.is_some() {
            self.errors.push(ie.at("expect", None, format!("unknown verdict `{word}` for a litmus test: expected forbidden, allowed or required")));
        }
        let mut tiles = Vec::new();
        let memory = self.memory(t, &mut tiles, ie);
        let shared = self.shared(t, &memory, &mut tiles, ie);
        self.shared_size(&shared, &tiles, ie);
        let locs = Locations {
            global: memory.iter().map(|(l, _)| l.as_str()).collect(),
            shared: shared.iter().map(|(l, _)| l.as_str()).collect(),
            tiles: tiles.iter().map(|(l, w)| (l.as_str(), *w)).collect(),
        };
        let raw_kernels: &[RawKernel] = t.kernels.as_deref().unwrap_or_default();
        if raw_kernels.is_empty() {
            self.errors.push(ie.at(
                "kernels",
                Some("name:"),
                "a litmus test has at least one kernel",
            ));
        }
        let mut kernels = Vec::new();
        let mut names = BTreeSet::new();
        for rk in raw_kernels {
            kernels.push(self.kernel(rk, &locs, &mut names, ie));
        }
        self.launch_structure(&kernels, ie);
        for k in &kernels {
            self.block_objects(k, ie);
            self.mbarriers(k, ie);
        }
        self.host_kernels(&kernels, ie);
        let limits = self.litmus_limits(t, ie);
        let cond = self.condition(t, ie);
        if self.errors.len() > before {
            return None;
        }
        let lit = Litmus {
            memory,
            shared,
            tiles,
            kernels,
            condition: cond?,
            expect: expect?,
            limits,
        };
        self.condition_terms(&lit, ie);
        (self.errors.len() == before).then_some(lit)
    }

    /// `memory:`: at least one location, each a valid name or a tile's
    /// declaration (`x[1024]`: [`Cx::declarations`]).
    fn memory(
        &mut self,
        t: &RawTest,
        tiles: &mut Vec<(String, u32)>,
        ie: &ItemErr,
    ) -> Vec<(String, u32)> {
        let raw = t.memory.clone().unwrap_or_default();
        if raw.is_empty() {
            self.errors.push(ie.at(
                "memory",
                Some("name:"),
                "a litmus test declares its memory locations",
            ));
        }
        self.declarations("memory", raw, tiles, ie)
    }

    /// `shared:`: shared memory locations, each a valid name that is no
    /// global location's.
    fn shared(
        &mut self,
        t: &RawTest,
        memory: &[(String, u32)],
        tiles: &mut Vec<(String, u32)>,
        ie: &ItemErr,
    ) -> Vec<(String, u32)> {
        let raw = t.shared.clone().unwrap_or_default();
        let shared = self.declarations("shared", raw, tiles, ie);
        for (loc, _) in &shared {
            if memory.iter().any(|(m, _)| m == loc) {
                self.errors.push(ie.at(
                    "shared",
                    Some(loc),
                    format!(
                        "`{loc}` is declared in both `memory` and `shared`: a location is global \
                         or shared"
                    ),
                ));
            }
        }
        shared
    }

    /// One kernel: its name (new in `names`), launch, threads and their
    /// blocks.
    fn kernel(
        &mut self,
        rk: &RawKernel,
        locs: &Locations,
        names: &mut BTreeSet<String>,
        ie: &ItemErr,
    ) -> Kernel {
        let kfield = format!("kernels.{}", rk.kernel);
        let kneedle = format!("kernel: {}", rk.kernel);
        if !is_ident(&rk.kernel) {
            self.errors.push(ie.at(
                &kfield,
                Some(&kneedle),
                format!("`{}` is not a valid kernel name", rk.kernel),
            ));
        }
        if !names.insert(rk.kernel.clone()) {
            self.errors.push(ie.at(
                &kfield,
                Some(&kneedle),
                format!("kernel `{}` is declared twice", rk.kernel),
            ));
        }
        let launch = match rk.launch.as_str() {
            "host" => KernelLaunch::Host { pdl: false },
            "host-pdl" => KernelLaunch::Host { pdl: true },
            "device" => KernelLaunch::Device,
            l => {
                self.errors.push(ie.at(
                    &format!("{kfield}.launch"),
                    Some(&format!("launch: {l}")),
                    format!("unknown launch `{l}`: expected host, host-pdl or device"),
                ));
                KernelLaunch::Device
            }
        };
        if rk.threads.is_empty() {
            self.errors.push(ie.at(
                &format!("{kfield}.threads"),
                Some(&kneedle),
                "a kernel has at least one thread",
            ));
        }
        let threads: Vec<Thread> = rk
            .threads
            .iter()
            .map(|(tname, ops)| self.thread(&kfield, tname, ops, locs, ie))
            .collect();
        self.blocks(&rk.kernel, &threads, ie);
        Kernel {
            name: rk.kernel.clone(),
            launch,
            threads,
        }
    }

    /// One thread of the kernel at `kfield`: its name and operations, each
    /// location declared, each register written once.
    fn thread(
        &mut self,
        kfield: &str,
        tname: &str,
        ops: &[String],
        locs: &Locations,
        ie: &ItemErr,
    ) -> Thread {
        let tfield = format!("{kfield}.threads.{tname}");
        if let Err(m) = thread_name::check(tname) {
            self.errors
                .push(ie.at(&tfield, Some(&format!("{tname}:")), m));
        }
        let mut parsed = Vec::new();
        let mut regs = BTreeSet::new();
        for (i, text) in ops.iter().enumerate() {
            let ofield = format!("{tfield}[{i}]");
            let op = match parse_op(text) {
                Ok(op) => op,
                Err(msg) => {
                    self.errors.push(ie.at(&ofield, Some(text), msg));
                    continue;
                }
            };
            for msg in locs.check(&op) {
                self.errors.push(ie.at(&ofield, Some(text), msg));
            }
            if let Some(reg) = op.register()
                && !regs.insert(reg.to_string())
            {
                self.errors.push(ie.at(
                    &ofield,
                    Some(text),
                    format!("register `{reg}` is written twice in thread `{tname}`"),
                ));
            }
            parsed.push(op);
        }
        Thread {
            name: tname.to_string(),
            ops: parsed,
        }
    }

    /// Launch structure: each device kernel launched exactly once, host
    /// kernels never; no kernel launches itself or an ancestor; launches
    /// nest at most [`MAX_LAUNCH_DEPTH`] deep.
    fn launch_structure(&mut self, kernels: &[Kernel], ie: &ItemErr) {
        let mut launched: HashMap<String, usize> = HashMap::new();
        let mut parent_of: BTreeMap<String, String> = BTreeMap::new();
        for k in kernels {
            for th in &k.threads {
                for op in &th.ops {
                    if let Op::Launch { kernel, .. } = op {
                        let needle = format!("launch {kernel}");
                        match kernels.iter().find(|c| &c.name == kernel) {
                            None => self.errors.push(ie.at(&format!("kernels.{}.threads.{}", k.name, th.name), Some(&needle), format!("`{op}` launches kernel `{kernel}`, which this test does not declare"))),
                            Some(c) if c.launch != KernelLaunch::Device => self.errors.push(ie.at(&format!("kernels.{}.threads.{}", k.name, th.name), Some(&needle), format!("kernel `{kernel}` is launched from the host (`launch: host`) and cannot also be launched from device code"))),
                            Some(_) => {
                                *launched.entry(kernel.clone()).or_default() += 1;
                                parent_of.insert(kernel.clone(), k.name.clone());
                            }
                        }
                    }
                }
            }
        }
        for k in kernels {
            if k.launch == KernelLaunch::Device {
                self.launched_once(k, launched.get(&k.name).copied().unwrap_or(0), ie);
            }
            self.nesting(k, kernels.len(), &parent_of, ie);
        }
    }

    /// A device kernel is launched by exactly one operation.
    fn launched_once(&mut self, k: &Kernel, times: usize, ie: &ItemErr) {
        let field = format!("kernels.{}.launch", k.name);
        let needle = format!("kernel: {}", k.name);
        match times {
            1 => {}
            0 => self.errors.push(ie.at(
                &field,
                Some(&needle),
                format!(
                    "kernel `{}` is `launch: device` but no operation launches it",
                    k.name
                ),
            )),
            n => self.errors.push(ie.at(
                &field,
                Some(&needle),
                format!(
                    "kernel `{}` is launched {n} times; each test kernel is launched once",
                    k.name
                ),
            )),
        }
    }

    /// `k`'s chain of parents: no cycle, at most [`MAX_LAUNCH_DEPTH`] deep.
    fn nesting(
        &mut self,
        k: &Kernel,
        n_kernels: usize,
        parent_of: &BTreeMap<String, String>,
        ie: &ItemErr,
    ) {
        let mut cur = k.name.as_str();
        let mut steps = 0;
        while let Some(p) = parent_of.get(cur) {
            steps += 1;
            if p == &k.name || steps > n_kernels {
                self.errors.push(ie.at(
                    &format!("kernels.{}", k.name),
                    Some(&format!("kernel: {}", k.name)),
                    format!(
                        "kernel `{}` launches itself, directly or through its children",
                        k.name
                    ),
                ));
                break;
            }
            cur = p;
        }
        if steps > MAX_LAUNCH_DEPTH && steps <= n_kernels {
            self.errors.push(ie.at(
                &format!("kernels.{}", k.name),
                Some(&format!("kernel: {}", k.name)),
                format!(
                    "kernel `{}` is nested {steps} launches deep; the device runtime's \
                     nesting limit (24 levels, the host grid the first) is not modeled: at \
                     most {MAX_LAUNCH_DEPTH}",
                    k.name
                ),
            ));
        }
    }

    /// At least one host kernel, the first not `host-pdl`; at most
    /// [`MAX_THREADS`] threads in all.
    fn host_kernels(&mut self, kernels: &[Kernel], ie: &ItemErr) {
        let host: Vec<&Kernel> = kernels
            .iter()
            .filter(|k| matches!(k.launch, KernelLaunch::Host { .. }))
            .collect();
        if !kernels.is_empty() && host.is_empty() {
            self.errors
                .push(ie.at("kernels", None, "no kernel is launched from the host"));
        }
        if let Some(first) = host.first()
            && first.launch == (KernelLaunch::Host { pdl: true })
        {
            self.errors.push(ie.at(&format!("kernels.{}.launch", first.name), Some("host-pdl"), "the first host kernel has no primary to overlap: `host-pdl` needs a kernel before it"));
        }
        let n_threads: usize = kernels.iter().map(|k| k.threads.len()).sum();
        if n_threads > MAX_THREADS {
            self.errors.push(ie.at("kernels", None, format!("{n_threads} threads in all; a litmus test has at most {MAX_THREADS} (the loom model explores at most 4, the axiomatic model more): use representative threads")));
        }
    }

    /// `limits:` of a litmus test: the device runtime's, each at least 1.
    fn litmus_limits(&mut self, t: &RawTest, ie: &ItemErr) -> Vec<(Limit, u64)> {
        let mut limits = Vec::new();
        for (name, v) in t.limits.iter().flatten() {
            let field = format!("limits.{name}");
            match Limit::parse(name) {
                Some(l) if l.applies_to_litmus() && *v >= 1 => limits.push((l, *v)),
                Some(l) if l.applies_to_litmus() => {
                    self.errors
                        .push(ie.at(&field, Some(name), format!("`{name}` is at least 1")))
                }
                _ => self.errors.push(ie.at(
                    &field,
                    Some(name),
                    format!(
                        "`{name}` is not a litmus test limit: expected {}",
                        Limit::ALL
                            .into_iter()
                            .filter(|l| l.applies_to_litmus())
                            .map(Limit::as_str)
                            .collect::<Vec<_>>()
                            .join(" or ")
                    ),
                )),
            }
        }
        limits
    }

    /// `condition:`, parsed.
    fn condition(&mut self, t: &RawTest, ie: &ItemErr) -> Option<Condition> {
        let Some(c) = &t.condition else {
            self.errors.push(ie.at(
                "condition",
                Some("name:"),
                "a litmus test needs a `condition`",
            ));
            return None;
        };
        match condition::parse(c) {
            Ok(c) => Some(c),
            Err(m) => {
                self.errors.push(ie.at("condition", None, m));
                None
            }
        }
    }

    /// Every term of the condition is a register or a location of the test,
    /// read as what it holds: a word, or a tile register word by word
    /// ([`Cx::tile_term`]).
    fn condition_terms(&mut self, lit: &Litmus, ie: &ItemErr) {
        let obs: BTreeSet<String> = lit.observables().into_iter().collect();
        for term in lit.condition.terms() {
            if let Some(msg) = tile_term(&obs, term) {
                self.errors.push(ie.at("condition", Some(term), msg));
            } else if lit.is_shared(term) {
                self.errors.push(ie.at(
                    "condition",
                    Some(term),
                    format!(
                        "`{term}` is shared memory, which does not outlive its block: load it \
                         into a register and name the register"
                    ),
                ));
            } else if !obs.contains(term) && !is_tile_term(term) {
                self.errors.push(ie.at(
                    "condition",
                    Some(term),
                    format!(
                        "`{term}` is neither a register (`kernel.thread.reg`) nor a memory location"
                    ),
                ));
            }
        }
    }
}
