//! The mapping from CCCL header files to the public entry points that reach
//! them, as data: which `cub::Device*` call (and which Thrust calls) run the
//! kernels of each header that calls the PDL macros, and the program of
//! `kernels/cccl/` that makes the call. Whether a header calls the macros in
//! a release comes from that release's headers (`scan.rs`), never from here.

/// One algorithm: a public entry point and the program that calls it.
#[derive(Debug, Clone, Copy)]
pub struct AlgorithmInfo {
    /// The algorithm's name in trials and on programs' command lines.
    pub name: &'static str,
    /// The public entry point the program calls.
    pub entry: &'static str,
    /// `kernels/cccl/<program>.cu`; empty: no program covers it yet.
    pub program: &'static str,
}

/// Every algorithm a mapped header leads to.
pub const ALGORITHMS: &[AlgorithmInfo] = &[
    AlgorithmInfo {
        name: "merge_sort_keys",
        entry: "cub::DeviceMergeSort::SortKeysCopy",
        program: "merge_sort",
    },
    AlgorithmInfo {
        name: "merge_sort_pairs",
        entry: "cub::DeviceMergeSort::SortPairsCopy",
        program: "merge_sort",
    },
    AlgorithmInfo {
        name: "radix_sort_onesweep_keys",
        entry: "cub::DeviceRadixSort::SortKeys",
        program: "radix_sort",
    },
    AlgorithmInfo {
        name: "radix_sort_onesweep_pairs",
        entry: "cub::DeviceRadixSort::SortPairs",
        program: "radix_sort",
    },
    AlgorithmInfo {
        name: "histogram_even",
        entry: "cub::DeviceHistogram::HistogramEven",
        program: "histogram",
    },
    AlgorithmInfo {
        name: "histogram_range",
        entry: "cub::DeviceHistogram::HistogramRange",
        program: "histogram",
    },
    AlgorithmInfo {
        name: "inclusive_scan",
        entry: "cub::DeviceScan::InclusiveSum",
        program: "scan",
    },
    AlgorithmInfo {
        name: "exclusive_scan",
        entry: "cub::DeviceScan::ExclusiveSum",
        program: "scan",
    },
    AlgorithmInfo {
        name: "transform",
        entry: "cub::DeviceTransform::Transform (one input)",
        program: "transform",
    },
    AlgorithmInfo {
        name: "transform_binary",
        entry: "cub::DeviceTransform::Transform (two inputs)",
        program: "transform",
    },
    AlgorithmInfo {
        name: "find_if",
        entry: "cub::DeviceFind::FindIf",
        program: "find",
    },
];

const MERGE_SORT: &[&str] = &["merge_sort_keys", "merge_sort_pairs"];
const RADIX_SORT: &[&str] = &["radix_sort_onesweep_keys", "radix_sort_onesweep_pairs"];
const HISTOGRAM: &[&str] = &["histogram_even", "histogram_range"];
const SCAN: &[&str] = &["inclusive_scan", "exclusive_scan"];
const TRANSFORM: &[&str] = &["transform", "transform_binary"];

/// A header (relative to `include/cccl`) and the algorithms whose entry
/// points run its kernels. A header that calls the PDL macros and is not
/// here becomes an algorithm of its own with no program (`scan.rs`), and a
/// test fails on it.
pub const HEADERS: &[(&str, &[&str])] = &[
    ("cub/agent/agent_merge_sort.cuh", MERGE_SORT),
    ("cub/agent/agent_radix_sort_onesweep.cuh", RADIX_SORT),
    ("cub/agent/agent_radix_sort_histogram.cuh", RADIX_SORT),
    (
        "cub/device/dispatch/kernels/kernel_radix_sort.cuh",
        RADIX_SORT,
    ),
    ("cub/agent/agent_histogram.cuh", HISTOGRAM),
    (
        "cub/device/dispatch/kernels/kernel_histogram.cuh",
        HISTOGRAM,
    ),
    ("cub/agent/agent_scan.cuh", SCAN),
    ("cub/device/dispatch/kernels/kernel_scan.cuh", SCAN),
    (
        "cub/device/dispatch/kernels/kernel_scan_lookahead.cuh",
        SCAN,
    ),
    (
        "cub/device/dispatch/kernels/kernel_transform.cuh",
        TRANSFORM,
    ),
    ("cub/device/dispatch/dispatch_find.cuh", &["find_if"]),
];

/// A Thrust entry point that dispatches to a CUB algorithm: listed for a
/// release when its Thrust header (relative to `include/cccl`) names one of
/// the CUB calls (`needles`: the public call, or the dispatch layer older
/// releases call), so the list follows each release's Thrust.
#[derive(Debug, Clone, Copy)]
pub struct ThrustInfo {
    /// Its algorithm name, run by `kernels/cccl/thrust.cu`; empty: listed
    /// only beside its CUB algorithm (`thrust = [...]`).
    pub name: &'static str,
    pub entry: &'static str,
    pub algorithm: &'static str,
    pub header: &'static str,
    pub needles: &'static [&'static str],
}

const THRUST_SORT: &str = "thrust/system/cuda/detail/sort.h";

/// The Thrust entry points, by the CUB algorithm they reach.
pub const THRUST: &[ThrustInfo] = &[
    ThrustInfo {
        name: "thrust_sort_custom",
        entry: "thrust::sort (a custom comparator)",
        algorithm: "merge_sort_keys",
        header: THRUST_SORT,
        needles: &[
            "cub::DeviceMergeSort::SortKeys",
            "cub::DispatchMergeSort<KeysIt, ItemsInputIt",
        ],
    },
    ThrustInfo {
        name: "",
        entry: "thrust::sort_by_key (a custom comparator)",
        algorithm: "merge_sort_pairs",
        header: THRUST_SORT,
        needles: &[
            "cub::DeviceMergeSort::SortPairs",
            "cub::DispatchMergeSort<KeysIt, ItemsIt",
        ],
    },
    ThrustInfo {
        name: "thrust_sort",
        entry: "thrust::sort (arithmetic keys, thrust::less)",
        algorithm: "radix_sort_onesweep_keys",
        header: THRUST_SORT,
        needles: &["cub::DeviceRadixSort::SortKeys"],
    },
    ThrustInfo {
        name: "",
        entry: "thrust::sort_by_key (arithmetic keys, thrust::less)",
        algorithm: "radix_sort_onesweep_pairs",
        header: THRUST_SORT,
        needles: &["cub::DeviceRadixSort::SortPairs"],
    },
    ThrustInfo {
        name: "thrust_inclusive_scan",
        entry: "thrust::inclusive_scan",
        algorithm: "inclusive_scan",
        header: "thrust/system/cuda/detail/scan.h",
        needles: &["cub::DeviceScan", "cub::DispatchScan"],
    },
    ThrustInfo {
        name: "thrust_exclusive_scan",
        entry: "thrust::exclusive_scan",
        algorithm: "exclusive_scan",
        header: "thrust/system/cuda/detail/scan.h",
        needles: &["cub::DeviceScan", "cub::DispatchScan"],
    },
    ThrustInfo {
        name: "thrust_transform",
        entry: "thrust::transform",
        algorithm: "transform",
        header: "thrust/system/cuda/detail/transform.h",
        needles: &["DeviceTransform::Transform", "dispatch_t<stable_address"],
    },
    ThrustInfo {
        name: "thrust_find_if",
        entry: "thrust::find_if",
        algorithm: "find_if",
        header: "thrust/system/cuda/detail/find.h",
        needles: &["cub::DeviceFind::FindIf"],
    },
];

/// The algorithm named `name`, if the table has it.
pub fn algorithm(name: &str) -> Option<&'static AlgorithmInfo> {
    ALGORITHMS.iter().find(|a| a.name == name)
}

/// The algorithms a header leads to, if it is mapped.
pub fn algorithms_of(header: &str) -> Option<&'static [&'static str]> {
    HEADERS.iter().find(|(h, _)| *h == header).map(|(_, a)| *a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mapped_name_is_an_algorithm_with_its_program() {
        for (h, names) in HEADERS {
            for n in *names {
                let a = algorithm(n).unwrap_or_else(|| panic!("{h}: `{n}` is not in ALGORITHMS"));
                assert!(!a.program.is_empty(), "{n} has no program");
            }
        }
        for t in THRUST {
            assert!(
                algorithm(t.algorithm).is_some(),
                "{}: {}",
                t.entry,
                t.algorithm
            );
        }
    }
}
