#!/bin/sh
# Installs libcoll from BUILD_DIR into a temporary prefix, moves the prefix (the install must be
# relocatable), then builds and runs this folder's consumer through find_package and through
# pkg-config, and runs the installed tools from the prefix, without LD_LIBRARY_PATH.
# Usage: install_and_consume.sh BUILD_DIR WORK_DIR
set -eu
build=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/staging" >/dev/null
mv "$work/staging" "$work/prefix"
prefix=$work/prefix
unset LD_LIBRARY_PATH

echo "== find_package(coll)"
cmake -S "$here" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/consumer_cxx"
"$work/consumer/consumer_c"
"$prefix/bin/collrun" --ranks-per-node 2 "$work/consumer/consumer_cxx"

echo "== pkg-config coll"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
echo "version $(pkg-config --modversion coll)"
cc -o "$work/consumer_c_pc" "$here/consumer.c" $(pkg-config --cflags --libs coll)
c++ -std=c++20 -o "$work/consumer_cxx_pc" "$here/consumer.cc" $(pkg-config --cflags --libs coll)
"$work/consumer_c_pc"
"$prefix/bin/collrun" --ranks-per-node 3 "$work/consumer_cxx_pc"

echo "== installed tools"
readlink "$prefix/lib/libcoll.so.0"
cd "$work"  # not the source tree: the tools must find their data from the prefix
"$prefix/bin/collbench" --model-gradients alexnet --model-variant torchvision -n 1 -w 0 |
  grep "wrong elements"

echo "== installed interposer and torch module"
/usr/bin/python3 -c "import ctypes, sys; ctypes.CDLL(sys.argv[1]); print('installed interposer loads')" \
  "$prefix/lib/libcoll_mpi.so"
module_dir=$(find "$prefix/lib" -path "*/dist-packages/coll_torch*.so" -printf '%h\n' | head -1)
if [ -n "$module_dir" ]; then
  PYTHONPATH="$module_dir" /usr/bin/python3 -c "import torch, coll_torch; print('installed torch module imports')"
else
  echo "torch module: not built (no libtorch-dev here)"
fi
