#!/usr/bin/env bash
# Installs the Debian packages hcq's build and tests need. As root it runs
# apt-get; otherwise it prints the one command to run. `--check` only says
# whether everything is there (exit 0) or not (exit 1).
set -u
# linux-libc-dev (kfd_ioctl.h) and libdrm-dev (amdgpu_drm.h): the ABI layout checks; llvm-22 (llvm-mc): the
# self-test kernel's encodings; rocminfo, hipcc, libamdhip64-dev (ROCm 5.2): AMD's own runtime on the mock;
# openmpi-bin, libopenmpi-dev: the training examples across MPI ranks (tests/mock/test_dp_mpi.c; libhcq links no MPI)
PKGS="make gcc clang-22 lld-22 llvm-22 libcriterion-dev libdrm-dev linux-libc-dev libelf-dev valgrind zlib1g-dev \
dataset-fashion-mnist rocminfo hipcc libamdhip64-dev openmpi-bin libopenmpi-dev"
FASHION=/usr/share/datasets/fashion-mnist
# commands/files that prove each package is present
have_all() {
    command -v make >/dev/null && command -v gcc >/dev/null && command -v clang-22 >/dev/null &&
    command -v ld.lld-22 >/dev/null && [ -f /usr/include/criterion/criterion.h ] &&
    [ -f /usr/include/libdrm/drm.h ] && [ -f /usr/include/libelf.h ] && command -v valgrind >/dev/null &&
    [ -f /usr/include/zlib.h ] && [ -f $FASHION/train-images-idx3-ubyte.gz ] && [ -f $FASHION/t10k-labels-idx1-ubyte.gz ] &&
    command -v llvm-mc-22 >/dev/null && [ -f /usr/include/linux/kfd_ioctl.h ] && command -v rocminfo >/dev/null &&
    command -v hipcc >/dev/null && [ -f /usr/include/hip/hip_runtime.h ] && command -v mpirun >/dev/null &&
    command -v mpicc >/dev/null
}
# optional, from PyPI: nvdisasm, the SASS decoder of the NV mock's executor
# (HCQ_MOCK_SHADER=isa); its tests skip, saying so, where it is missing
have_nvdisasm() {
    command -v nvdisasm >/dev/null || [ -n "${HCQ_NVDISASM:-}" ] ||
        compgen -G "/usr/local/lib/python3*/*-packages/nvidia/*/bin/nvdisasm" >/dev/null ||
        compgen -G "$HOME/.local/lib/python3*/site-packages/nvidia/*/bin/nvdisasm" >/dev/null ||
        compgen -G "$HOME/.pyenv/versions/*/lib/python3*/site-packages/nvidia/*/bin/nvdisasm" >/dev/null
}
install_nvdisasm() {
    have_nvdisasm && return 0
    if command -v python3 >/dev/null && python3 -m pip --version >/dev/null 2>&1; then
        python3 -m pip install -q nvidia-cuda-nvdisasm ||
            echo "scripts/deps.sh: pip could not install nvidia-cuda-nvdisasm (the SASS executor's tests will skip)" >&2
    else
        echo "scripts/deps.sh: no pip: install nvidia-cuda-nvdisasm from PyPI for the SASS executor's tests" >&2
    fi
}
# optional, from PyPI: numpy, the other side of test_api_tensor_numpy (the
# tensor dtypes' rules against NumPy); it skips, saying so, without it
have_numpy() { command -v python3 >/dev/null && python3 -c 'import numpy' >/dev/null 2>&1; }
install_numpy() {
    have_numpy && return 0
    if command -v python3 >/dev/null && python3 -m pip --version >/dev/null 2>&1; then
        python3 -m pip install -q numpy || echo "scripts/deps.sh: pip could not install numpy (test_api_tensor_numpy will skip)" >&2
    else
        echo "scripts/deps.sh: no pip: install numpy from PyPI for test_api_tensor_numpy" >&2
    fi
}
if [ "${1:-}" = "--check" ]; then
    have_numpy || echo "scripts/deps.sh: optional: numpy is missing (pip install numpy); test_api_tensor_numpy skips" >&2
    have_nvdisasm || echo "scripts/deps.sh: optional: nvdisasm is missing (pip install nvidia-cuda-nvdisasm); the SASS executor's tests skip" >&2
    have_all && exit 0
    echo "scripts/deps.sh: some build or test dependencies are missing (packages: $PKGS)" >&2
    exit 1
fi
have_all && { install_nvdisasm; install_numpy; echo "scripts/deps.sh: all dependencies present"; exit 0; }
if [ "$(id -u)" -ne 0 ]; then
    echo "scripts/deps.sh: missing packages; run as root:" >&2
    echo "  apt-get install -y $PKGS" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# clang-22 comes from bookworm-security on Debian 12; refresh the lists once
# if apt does not know it yet
if ! apt-cache show clang-22 >/dev/null 2>&1; then apt-get update -q || true; fi
apt-get install -y -q $PKGS || { apt-get update -q && apt-get install -y -q $PKGS; }
have_all || { echo "scripts/deps.sh: packages installed but something is still missing" >&2; exit 1; }
install_nvdisasm
install_numpy
echo "scripts/deps.sh: dependencies installed"
