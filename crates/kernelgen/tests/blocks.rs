//! Kernels of several blocks (`bM.tN` threads): an instance is a group of
//! blocks, threads dispatch on their block, objects belong to one block, and
//! every block adds to the kernel's "ran" word.

use std::path::PathBuf;

use gridcheck_kernelgen::{generate_all, layout};
use gridcheck_spec::{Spec, TestBody, load_sources};

fn one(tests_yaml: &str, name: &str) -> (Spec, String) {
    let yaml = gridcheck_fixture::OneRule::new()
        .id("cdp2.test.rule")
        .lists(name)
        .unlisted(tests_yaml)
        .yaml();
    let spec = load_sources(
        &[(PathBuf::from("/somewhere/spec/cdp2/x.yaml"), yaml)],
        None,
    )
    .unwrap_or_else(|e| panic!("test spec does not load:\n{e}"));
    let src = generate_all(&spec).remove(0).1;
    (spec, src)
}

#[test]
fn kernels_of_several_blocks_dispatch_by_block() {
    let yaml = r#"  - name: blocks
    kind: litmus
    memory: { x: 0 }
    kernels:
      - kernel: parent
        launch: host
        threads:
          b0.t0: [store x 1, syncthreads, launch c]
          b0.t1: [syncthreads]
          b1.t2: [launch d s1, record e1 s1]
      - kernel: c
        launch: device
        threads:
          b0.t0: [load r0 x]
          b1.t0: [load r0 x]
      - kernel: d
        launch: device
        threads:
          t0: [store x 2]
    condition: exists c.b1.t0.r0 == 0
    expect: allowed
"#;
    let (spec, src) = one(yaml, "blocks");
    let TestBody::Litmus(l) = &spec.tests[0].body else {
        panic!()
    };
    let lay = layout(l);
    assert_eq!(
        lay.kernels.iter().map(|k| k.blocks).collect::<Vec<_>>(),
        [2, 2, 1]
    );
    // Host: instance = two consecutive blocks; threads dispatch on both.
    assert!(
        src.contains("const unsigned int slot = gc_slot(p, blockIdx.x / 2u);"),
        "{src}"
    );
    assert!(src.contains("const unsigned int block = blockIdx.x % 2u;"));
    assert!(src.contains("if (block == 1u && threadIdx.x / 32u == 2u) {  // b1.t2"));
    assert!(src.contains("const unsigned int gc_modeled = block == 0u ? 2u : 1u;"));
    assert!(src.contains("gc_stress(p, slot, &gc_arrived, gc_modeled * 2u, 1u);"));
    // The child grid has two blocks; its registers are C identifiers.
    assert!(src.contains("blocks__c<<<2, 96>>>(p, slot);"), "{src}");
    assert!(src.contains("const unsigned int block = blockIdx.x;  // the test's bM, of 2"));
    assert!(src.contains("b1_t0_r0 = mem[0u];"));
    assert!(src.contains("regs[1u] = b1_t0_r0;"));
    // Block 1 alone creates and destroys its stream and event.
    assert_eq!(
        lay.objects.iter().map(|o| o.block).collect::<Vec<_>>(),
        [1, 1]
    );
    assert!(
        src.contains(
            "    if (block == 1u) gc_stream_s1 = gc_create_stream(p, kStatusStride, slot, "
        )
    );
    assert!(src.contains("    if (block == 1u) gc_destroy_event(gc_event_e1);"));
    // Each block adds one to the ran word; the single-block kernel marks it.
    assert!(src.contains("gc_add_ran(p, kStatusStride, slot, 0u);  // one per block"));
    assert!(src.contains("gc_mark_ran(p, kStatusStride, slot, 2u);"));
    assert_eq!(lay.kernels[0].ran_value(), 2);
}
