//! Tiles in generated kernels: their place in the instance's slot and the
//! block's shared memory, a warp storing and loading its slice, each
//! segment of a tile register folded into the set of its values and its
//! count of stale words, sized bulk copies carrying their bytes to the
//! mbarrier; and a word test's kernel left as it was.

use std::path::PathBuf;

use gridcheck_kernelgen::{LOC_STRIDE, Location, generate_all, layout};
use gridcheck_spec::{Litmus, Spec, TestBody, load_sources};

fn one(tests_yaml: &str, name: &str) -> (Litmus, String) {
    let yaml = gridcheck_fixture::OneRule::new()
        .id("pdl.test.rule")
        .lists(name)
        .unlisted(tests_yaml)
        .yaml();
    let spec: Spec = load_sources(&[(PathBuf::from("/somewhere/spec/pdl/x.yaml"), yaml)], None)
        .unwrap_or_else(|e| panic!("test spec does not load:\n{e}"));
    let src = generate_all(&spec).remove(0).1;
    let TestBody::Litmus(l) = &spec.tests[0].body else {
        panic!()
    };
    (l.clone(), src)
}

/// A slice a warp, a sized bulk store, a sized bulk load after the wait,
/// and a word location beside the tiles.
const TILES: &str = r#"  - name: tiles
    kind: litmus
    memory:
      y: 5
      x[1024]: 0
    shared:
      s[256 B]: 0
      u: 0
    kernels:
      - kernel: primary
        launch: host
        threads:
          t0:
            - store s[0..32] 1
            - fence.proxy.async
            - syncthreads
            - bulkstore x[0..64] s[0..64]
            - store y 1
          t1:
            - store s[32..64] 1
            - fence.proxy.async
            - syncthreads
      - kernel: secondary
        launch: host-pdl
        threads:
          t0:
            - gridsync
            - bulkload s[0..64] x[0..64] b
            - mbarwait b
            - load r0 s[0..64]
            - load r1 y
    condition: exists any(secondary.t0.r0) == 0 \/ secondary.t0.r0[40] == 0
    expect: forbidden
"#;

#[test]
fn tiles_take_whole_lines_after_the_word_locations() {
    let (l, _) = one(TILES, "tiles");
    let lay = layout(&l);
    assert_eq!(
        lay.locations,
        [
            Location {
                name: "y".into(),
                init: 5,
                offset: 0,
                tile: None
            },
            Location {
                name: "x".into(),
                init: 0,
                offset: LOC_STRIDE,
                tile: Some(1024)
            },
        ]
    );
    assert_eq!(lay.slot_stride, LOC_STRIDE + 1024);
    // Only the word location's line is the stress warps' to pad.
    assert_eq!(lay.word_lines(), 1);
    let init = lay.initial_slot();
    assert_eq!((init[0], init[1], init[32], init[32 + 1023]), (5, 0, 0, 0));
    // Shared: the word location first, then the tile (64 words, two lines).
    let shared: Vec<(&str, u32, Option<u32>)> = lay
        .shared
        .iter()
        .map(|s| (s.name.as_str(), s.offset, s.tile))
        .collect();
    assert_eq!(shared, [("u", 0, None), ("s", 32, Some(64))]);
    assert_eq!(lay.shared_words(), 96);
    // The register's segments (split at the slices and at word 40), then
    // the word register; their stale counts after them.
    let regs: Vec<&str> = lay.registers.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        regs,
        [
            "secondary.t0.r0[0..32]",
            "secondary.t0.r0[32..40]",
            "secondary.t0.r0[40]",
            "secondary.t0.r0[41..64]",
            "secondary.t0.r1"
        ]
    );
    assert_eq!(regs, l.observables()[..5]);
    assert_eq!(lay.stale_counts.len(), 4);
    assert_eq!(lay.stale_counts[0].name, "secondary.t0.r0[0..32]#stale");
    assert_eq!(lay.reg_stride, 9);
}

#[test]
fn a_warp_stores_and_loads_its_slice_and_copies_carry_their_bytes() {
    let (_, src) = one(TILES, "tiles");
    for line in [
        // Shared tiles start at their initial value, then the proxy fence.
        "    for (unsigned int gc_i = 0u; gc_i < 64u; ++gc_i) smem[32u + gc_i] = 0u;  // s[64]",
        // Each warp its slice, every lane every 32nd word.
        "    for (unsigned int gc_i = 0u + threadIdx.x % 32u; gc_i < 32u; gc_i += 32u) smem[32u + gc_i] = 1u;",
        "    for (unsigned int gc_i = 32u + threadIdx.x % 32u; gc_i < 64u; gc_i += 32u) smem[32u + gc_i] = 1u;",
        "  if (threadIdx.x / 32u == 0u) {  // t0: its whole warp (tiles)",
        // The bytes of a sized copy, to the copy and to its mbarrier.
        "    gc_bulk_store_bytes(&mem[32u], &smem[32u], 256u);  // 256 bytes: x[0..64] <- s[0..64]",
        "    gc_bulk_load_bytes(&smem[32u], &mem[32u], &gc_mbar_b, 256u);  // 256 bytes: s[0..64] <- x[0..64]",
        // A segment of several words: the set of its values and its stale words.
        "      for (unsigned int gc_i = 41u + threadIdx.x % 32u; gc_i < 64u; gc_i += 32u) {",
        "        gc_v |= gc_value_bit(gc_w);",
        "        gc_n += gc_w == 0u ? 1u : 0u;",
        "      t0_r0_41 = gc_warp_or(gc_v);",
        "      t0_r0_41_stale = gc_warp_add(gc_n);",
        // A segment of one word: its value.
        "      for (unsigned int gc_i = 40u + threadIdx.x % 32u; gc_i < 41u; gc_i += 32u) {",
        "        gc_v |= gc_w;",
        "    if (gc_lead) regs[3u] = t0_r0_41;",
        "    if (gc_lead) regs[4u] = t0_r1;",
        "    if (gc_lead) regs[8u] = t0_r0_41_stale;  // secondary.t0.r0[41..64]#stale",
        "//   regs[slot * 9 + 0] = secondary.t0.r0[0..32] (the set of its words' values, bit v for v)",
        "//   mem[slot * 1056 + 32..] = x[1024] (every word initially 0)",
    ] {
        assert!(src.contains(line), "no `{line}` in\n{src}");
    }
    // What each thread does for itself in PTX, every lane of a warp that
    // touches a tile does: its proxy fence, the wait, the mbarrier wait.
    for every_lane in [
        "    __syncwarp();\n    gc_fence_proxy_async();\n    __syncwarp();",
        "    __syncwarp();\n    cudaGridDependencySynchronize();\n    __syncwarp();",
        "    __syncwarp();\n    gc_mbar_wait(&gc_mbar_b);\n    __syncwarp();",
    ] {
        assert!(src.contains(every_lane), "no `{every_lane}` in\n{src}");
    }
    // A copy is issued by lane 0, then the warp meets.
    assert!(src.contains(
        "    if (gc_lead) {\n    gc_bulk_store_bytes(&mem[32u], &smem[32u], 256u);  // 256 bytes: x[0..64] <- s[0..64]\n    }\n    __syncwarp();"
    ));
    // The line burst is for a word location's line, never a tile's.
    assert!(src.contains("gc_block_burst(p, mem + 0u);  // the block's line burst: y"));
    assert!(!src.contains("line burst: x"), "{src}");
}

#[test]
fn a_word_test_has_no_warp_code() {
    let word = r#"  - name: words
    kind: litmus
    memory: { x: 0 }
    shared: { s: 0 }
    kernels:
      - kernel: k
        launch: host
        threads:
          t0: [store s 1, fence.proxy.async, bulkstore x s, bulkcommit, bulkwait 0, load r0 x]
    condition: exists k.t0.r0 == 0
    expect: forbidden
"#;
    let (_, src) = one(word, "words");
    assert!(!src.contains("__syncwarp"), "{src}");
    assert!(src.contains("  if (threadIdx.x / 32u == 0u) {  // t0: lane 0 of its warp"));
    assert!(src.contains("    gc_bulk_store(&mem[0u], &smem[0u]);"));
}
