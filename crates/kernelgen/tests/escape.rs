//! Strings from the spec that reach generated code cannot add lines to it,
//! and the loader's thread bound is the generated block's.

use std::path::PathBuf;

use gridcheck_kernelgen::{MAX_BLOCK, STRESS_WARPS, WARP, generate_all};
use gridcheck_spec::limits::MAX_THREAD_INDEX;
use gridcheck_spec::load_sources;

const TESTS: &str = "  - name: rt-one
    kind: runtime
    description: \"a\\nint injected_description;\\\\\"
    flags: [\"-O2\\nint injected_flag;\", \"-DX\\\\\"]
    source: |
      extern \"C\" __global__ void entry(unsigned int *out) { out[0] = 1; }
    outputs: [a]
    expect: { a: 1 }
  - name: lit-one
    kind: litmus
    memory: { x: 0 }
    kernels:
      - kernel: k
        launch: host
        threads:
          t0: [store x 1, load r0 x]
    condition: exists k.t0.r0 == 0
    expect: forbidden
";

#[test]
fn spec_strings_stay_inside_comments() {
    let path = PathBuf::from("spec/evil\nint injected_path;\\.yaml");
    let yaml = gridcheck_fixture::OneRule::new()
        .id("cdp2.launch.x")
        .tests(TESTS)
        .yaml();
    let spec = load_sources(&[(path, yaml)], None).unwrap();
    let files = generate_all(&spec);
    assert_eq!(files.len(), 2);
    for (name, code) in &files {
        // The header is comments; none ends with a splice into the next line.
        for l in code.lines().take_while(|l| l.starts_with("//")) {
            assert!(!l.ends_with('\\'), "{name}: a spliced comment line: {l}");
        }
        for injected in ["injected_path", "injected_flag", "injected_description"] {
            for l in code.lines().filter(|l| l.contains(injected)) {
                // A comment, or the file name of a `#line` directive: one
                // string literal on one line.
                let directive = l.starts_with("#line ") && l.matches('"').count() == 2;
                assert!(
                    l.starts_with("//") || directive,
                    "{name}: `{injected}` in code: {l}"
                );
            }
        }
        assert!(code.contains("injected_path"), "{name}: the path is shown");
    }
}

#[test]
fn the_highest_thread_the_loader_accepts_fits_one_block() {
    let block = |highest: usize| (highest as u32 + 1 + STRESS_WARPS) * WARP;
    assert!(block(MAX_THREAD_INDEX) <= MAX_BLOCK);
    assert!(block(MAX_THREAD_INDEX + 1) > MAX_BLOCK);
}
