#!/usr/bin/env bash
# Installs the Debian 12 packages libcoll needs, only when some are missing (quick otherwise).
# CUDA/NCCL are optional and come from /usr/local/cuda when present; nothing else is downloaded.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config clang-format clang libclang-rt-14-dev
  libucx-dev ucx-utils libopenmpi-dev openmpi-bin libhwloc-dev hwloc
  rdma-core ibverbs-providers
  libboost-program-options-dev libgtest-dev procps nlohmann-json3-dev libssl-dev
  python3-matplotlib
  python3-mpi4py python3-numpy python3-torch libtorch-dev pybind11-dev python3-dev
  iproute2 util-linux slurm-wlm munge
)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done

if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
