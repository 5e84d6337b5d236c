//! The missing-wait check of a PDL secondary: flagged when its code has no
//! wait, passing only where the wait is there, and a `no_wait` expectation
//! (the guard compiles the wait out on purpose) failing when the code has
//! the wait after all; the same for PTX. Each case passes as written and
//! fails once the code is changed the other way.

use gridcheck_sass::parse;
use gridcheck_sass::programs::{Expect, Judgement, Program, check_program, check_program_ptx};

const SOURCE: &str = "\
extern \"C\" __global__ void secondary(const float *in, float *out) {
  wait_on_dependent_grids();  // sass: wait
  out[0] = in[0];  // sass: load
}
";

fn program(no_wait: &[&str]) -> Program {
    Program {
        name: "p".into(),
        file: "p.cu".into(),
        kernel: "secondary".into(),
        summary: "s".into(),
        after_wait: vec!["load".into()],
        before_trigger: Vec::new(),
        expect: Expect::Ordered,
        min_arch: 90,
        flags: Vec::new(),
        targets: vec!["sm_90".into(), "sm_90a".into(), "compute_80".into()],
        no_wait: no_wait.iter().map(|s| s.to_string()).collect(),
    }
}

/// The secondary's SASS: the wait (when `wait`) on line 2, the load on
/// line 3.
fn sass(wait: bool) -> Vec<gridcheck_sass::Function> {
    let w = if wait {
        "\t//## File \"/x/p.cu\", line 2\n        /*0010*/                   ACQBULK ;\n"
    } else {
        ""
    };
    parse(&format!(
        ".section .text.secondary,\"ax\",@progbits\nsecondary:\n{w}\t//## File \"/x/p.cu\", line 3\n        /*0020*/                   LDG.E R2, desc[UR4][R2.64] ;\n        /*0030*/                   EXIT ;\n"
    ))
    .unwrap()
}

fn judge(p: &Program, target: &str, wait: bool) -> (Judgement, String) {
    check_program(p, target, SOURCE, "p.cu", &sass(wait)).unwrap()
}

#[test]
fn a_secondary_without_its_wait_fails_and_with_it_passes() {
    let p = program(&[]);
    let (j, m) = judge(&p, "sm_90", false);
    assert_eq!(j, Judgement::Fail, "{m}");
    assert!(
        m.contains("MISSING WAIT") && m.contains("sm_90 SASS"),
        "{m}"
    );
    let (j, m) = judge(&p, "sm_90", true);
    assert_eq!(j, Judgement::Pass, "{m}");
    assert!(m.contains("1 pairs ordered"), "{m}");
}

#[test]
fn a_target_the_guard_strips_passes_only_when_the_wait_is_missing() {
    let p = program(&["sm_90"]);
    let (j, m) = judge(&p, "sm_90", false);
    assert_eq!(j, Judgement::Pass, "{m}");
    assert!(m.contains("MISSING WAIT flagged"), "{m}");
    let (j, m) = judge(&p, "sm_90", true);
    assert_eq!(j, Judgement::Fail, "{m}");
    assert!(m.contains("`/*0010*/ ACQBULK` (p.cu:2)"), "{m}");
    // Another target of the same program still needs its wait.
    assert_eq!(judge(&p, "sm_90a", false).0, Judgement::Fail);
}

#[test]
fn a_program_that_is_no_secondary_has_no_wait_to_miss() {
    let mut p = program(&[]);
    p.after_wait.clear();
    p.before_trigger = vec!["load".into()];
    let src = SOURCE.replace("// sass: wait", "// sass: trigger");
    let (j, m) = check_program(&p, "sm_90", &src, "p.cu", &sass(false)).unwrap();
    assert!(!m.contains("MISSING WAIT"), "{m}");
    assert_ne!(
        j,
        Judgement::Pass,
        "no trigger instruction: not checked, {m}"
    );
}

const PTX: &str = "\
.version 8.8
.target sm_80
.visible .entry secondary(
\t.param .u64 secondary_param_0
)
{
\tld.volatile.global.u32 %r1, [%rd1];
\tret;
}
";

#[test]
fn ptx_is_judged_by_the_wait_in_the_entry() {
    let with = PTX.replace("{\n", "{\n\tgriddepcontrol.wait;\n");
    let strips = program(&["compute_80"]);
    let needs = program(&[]);
    let j = |p: &Program, t: &str| check_program_ptx(p, "compute_80", t).unwrap().0;
    assert_eq!(j(&strips, PTX), Judgement::Pass);
    assert_eq!(j(&strips, &with), Judgement::Fail);
    assert_eq!(j(&needs, PTX), Judgement::Fail);
    assert_eq!(j(&needs, &with), Judgement::Pass);
    let (_, m) = check_program_ptx(&needs, "compute_80", PTX).unwrap();
    assert!(
        m.contains("MISSING WAIT") && m.contains("compute_80 PTX"),
        "{m}"
    );
}
