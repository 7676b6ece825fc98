#!/usr/bin/env bash
# Installs what a fresh Debian 12 / Ubuntu 24.04 machine lacks, builds kreg, then either runs the
# default sweep or the whole test suite.
#
#   bash tools/setup.sh run    # install, build, run `runner` (the built-in default sweep)
#   bash tools/setup.sh test   # install, build, run every test (GPU tests skip without a GPU)
#
# Packages come from the distribution only; nothing is downloaded at build time. The CUDA toolkit is
# optional: where nvcc is found (PATH or /usr/local/cuda) the CUDA plugins are built too.
set -euo pipefail
mode=${1:-run}
cd "$(dirname "$0")/.."
build=${KREG_BUILD_DIR:-build}

packages=(cmake ninja-build g++ git libboost-dev nlohmann-json3-dev libcxxopts-dev libgtest-dev python3 python3-matplotlib)
# KREG_WITH_SLURM=1 (CI): also a single-node Slurm for the `slurm` tests (tests/slurm/local_slurm.sh starts
# its own daemons with their state in /tmp; nothing is configured system-wide). Without it those tests skip.
[[ ${KREG_WITH_SLURM:-0} == 1 ]] && packages+=(slurmctld slurmd slurm-client munge)
# The test suite checks the tree's formatting (the `format` label) with Debian's clang-format.
[[ $mode == test ]] && packages+=(clang-format)
# The `windows` tests cross-build kreg's Windows part with mingw-w64 (GoogleTest from Debian's sources) and
# run it under wine64 (docs/WINDOWS.md). Without these packages they skip with the reason.
[[ $mode == test ]] && packages+=(mingw-w64 wine64 googletest)
# The `browser` tests load the class page in a headless chromium. Debian's package is the browser itself;
# Ubuntu's is a stub that installs a snap, which containers lack, so there the tests skip with the reason.
if [[ $mode == test ]] && grep -qx 'ID=debian' /etc/os-release 2>/dev/null; then packages+=(chromium); fi
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if (( ${#missing[@]} )); then
    echo "setup: installing ${missing[*]}"
    if [[ $(id -u) -ne 0 ]]; then echo "setup: run as root (or install: ${missing[*]})" >&2; exit 1; fi
    DEBIAN_FRONTEND=noninteractive apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

cuda_args=()
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
    cuda_args=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
fi
# Debian's python3 has python3-matplotlib; a python3 earlier on the PATH (pyenv) may not.
py_args=()
[[ -x /usr/bin/python3 ]] && py_args=(-DPython3_EXECUTABLE=/usr/bin/python3)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${cuda_args[@]}" "${py_args[@]}"
cmake --build "$build" -j"$(nproc)"

case $mode in
    run) exec "$build/bin/runner" ;;
    test) exec ctest --test-dir "$build" --output-on-failure -j"$(nproc)" --timeout 1500 ;;
    *) echo "usage: bash tools/setup.sh run|test" >&2; exit 2 ;;
esac
