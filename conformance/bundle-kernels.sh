#!/usr/bin/env bash
# Sourced by the bundle scripts (gpu-run.sh, gpu-session.sh, fault-check.sh):
# unpacks the kernels of a bundle made by `cargo xtask gpu-bundle`
# (.gpu-bundle/kernels.tar.xz: <arch>/<test>.cubin, .host and .ptx for every
# architecture built, libcudadevrt.a and toolchain.json; with `--toolchain`,
# also kernels-nvcc-<release>.tar.xz, another toolchain's) into
# .gpu-bundle/<name>/, once per archive, and sets GC_ARCH to the first GPU's
# architecture (`gridcheck info arch`: sm_90, ...; sm_90 without a GPU) for
# the scripts that run one architecture's kernels directly. The library
# tier's programs, when the bundle has them, go to target/library/.
for packed in .gpu-bundle/kernels*.tar.xz; do
  [ -f "$packed" ] || continue
  dir=${packed%.tar.xz}
  if [ ! "$dir/.unpacked" -nt "$packed" ]; then
    rm -rf "$dir"
    mkdir -p "$dir"
    tar xJf "$packed" -C "$dir" && touch "$dir/.unpacked"
  fi
done
# The library tier's programs (`cargo xtask library build`), packed by the
# bundle as library.tar.xz, go where the harness looks for them:
# target/library/<release>/<target>/.
if [ -f .gpu-bundle/library.tar.xz ] && [ ! target/library/.unpacked -nt .gpu-bundle/library.tar.xz ]; then
  rm -rf target/library
  mkdir -p target/library
  tar xJf .gpu-bundle/library.tar.xz -C target/library && touch target/library/.unpacked
fi
GC_ARCH=$(./.gpu-bundle/gridcheck info arch 2>/dev/null) || GC_ARCH=sm_90
export GC_ARCH
