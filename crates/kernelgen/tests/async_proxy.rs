//! The asynchronous proxy in generated kernels: the block's shared
//! locations and mbarriers, the bulk copies and their completion, the drain
//! at a thread's end, and the architectures such a test builds for.

use std::path::PathBuf;

use gridcheck_kernelgen::{build_plan, generate_all, layout, uses_async_proxy, uses_pdl};
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

const COPIES: &str = r#"  - name: copies
    kind: litmus
    memory: { x: 0, y: 0 }
    shared: { s: 3, t: 0 }
    kernels:
      - kernel: k
        launch: host
        threads:
          t0: [store s 1, fence.proxy.async, bulkstore y s, bulkcommit, bulkwait read 0, bulkwait 0]
          t1: [bulkload t x b, mbarwait b, load r0 t]
    condition: exists k.t1.r0 == 0
    expect: allowed
"#;

#[test]
fn shared_locations_and_mbarriers_belong_to_the_block() {
    let (spec, src) = one(COPIES, "copies");
    let TestBody::Litmus(l) = &spec.tests[0].body else {
        panic!()
    };
    let lay = layout(l);
    assert_eq!(
        lay.shared
            .iter()
            .map(|s| (s.name.as_str(), s.offset))
            .collect::<Vec<_>>(),
        [("s", 0), ("t", 32)]
    );
    assert_eq!(lay.shared_words(), 64);
    // Not global memory: the instance's slot holds x and y only.
    assert_eq!(lay.slot_stride, 64);
    for line in [
        "  __shared__ __align__(128) unsigned int gc_shared[64u];  // the block's shared locations",
        "  __shared__ unsigned long long gc_mbar_b;  // mbarrier b",
        "    smem[0u] = 3u;  // s",
        "    smem[32u] = 0u;  // t",
        "    gc_mbar_init(&gc_mbar_b);",
        "    gc_fence_proxy_async();  // the initial values and mbarriers reach the async proxy",
        "//   gc_shared[32] = t (each block's; initially 0)",
    ] {
        assert!(src.contains(line), "no `{line}` in\n{src}");
    }
}

#[test]
fn every_operation_of_the_asynchronous_proxy_is_emitted() {
    let (_, src) = one(COPIES, "copies");
    for line in [
        "    smem[0u] = 1u;",
        "    gc_fence_proxy_async();",
        "    gc_bulk_store(&mem[32u], &smem[0u]);",
        "    gc_bulk_commit();",
        "    gc_bulk_wait_read<0>();",
        "    gc_bulk_wait<0>();",
        "    gc_bulk_load(&smem[32u], &mem[0u], &gc_mbar_b);",
        "    gc_mbar_wait(&gc_mbar_b);",
        "    t1_r0 = smem[32u];",
        // The bulk store's global line gets the block's burst; the shared
        // store none.
        "  gc_block_burst(p, mem + 32u);  // the block's line burst: y, stored in phase 0",
    ] {
        assert!(src.contains(line), "no `{line}` in\n{src}");
    }
    assert!(!src.contains("gc_block_burst(p, mem + 0u)"), "{src}");
}

#[test]
fn each_thread_drains_its_copies_before_it_ends() {
    let (_, src) = one(COPIES, "copies");
    let drain_store = "    if (gc_lead) { gc_bulk_commit(); gc_bulk_wait_read<0>(); }  // drain: the bulk stores read shared memory";
    let drain_load =
        "    if (gc_lead) gc_mbar_wait(&gc_mbar_b);  // drain: the bulk load completed";
    assert_eq!(src.matches(drain_store).count(), 1, "{src}");
    assert_eq!(src.matches(drain_load).count(), 1, "{src}");
    // After the thread's last operation, before it stores its registers.
    let load = src.find("    t1_r0 = smem[32u];").unwrap();
    let drain = src.find(drain_load).unwrap();
    let regs = src.find("    if (gc_lead) regs[0u] = t1_r0;").unwrap();
    assert!(load < drain && drain < regs, "{src}");
}

#[test]
fn a_test_of_the_asynchronous_proxy_builds_from_sm_90_on() {
    let (spec, _) = one(COPIES, "copies");
    let t = &spec.tests[0];
    let TestBody::Litmus(l) = &t.body else {
        panic!()
    };
    assert!(uses_async_proxy(l));
    // No PDL: the restriction is the copies'.
    assert!(!uses_pdl(l));
    let e = build_plan(t, "sm_89").unwrap_err();
    assert!(e.contains("asynchronous proxy"), "{e}");
    assert_eq!(build_plan(t, "sm_90"), Ok(Some(Vec::new())));
    assert_eq!(build_plan(t, "sm_120"), Ok(Some(Vec::new())));
}

#[test]
fn a_test_without_shared_memory_declares_none() {
    let yaml = r#"  - name: plain
    kind: litmus
    memory: { x: 0 }
    kernels:
      - kernel: k
        launch: host
        threads:
          t0: [store x 1]
    condition: exists x == 1
    expect: required
"#;
    let (spec, src) = one(yaml, "plain");
    let TestBody::Litmus(l) = &spec.tests[0].body else {
        panic!()
    };
    assert!(!uses_async_proxy(l));
    assert!(
        !src.contains("gc_shared") && !src.contains("gc_mbar"),
        "{src}"
    );
    assert_eq!(build_plan(&spec.tests[0], "sm_75"), Ok(Some(Vec::new())));
}
