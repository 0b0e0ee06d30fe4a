#!/bin/sh
# libcoll against Open MPI and torch's Gloo, interleaved rounds, medians and ratios per size and
# model replay: see bench/peers/compare.py --help (run from any directory, after the build).
exec /usr/bin/python3 "$(dirname "$0")/peers/compare.py" "$@"
