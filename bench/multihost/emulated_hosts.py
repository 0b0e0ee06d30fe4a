"""What the scripts across emulated hosts share: their command line's BUILD_DIR and OUT_DIR, the
need for root (each host is a network namespace) and tests/multihost/hosts.sh, which brings the
hosts up and down."""
import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE = os.path.join(ROOT, "tests", "multihost")


def argument_parser(doc):
    """A parser of BUILD_DIR and OUT_DIR, described by the first line of the script's `doc`."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("build")
    parser.add_argument("out")
    return parser


def parse_as_root(parser, script):
    """The parsed arguments, or an exit naming `script` where this is not root (--help is not
    refused)."""
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit(f"{script}: needs root (network namespaces)")
    return args


def hosts(command, run_id, *extra):
    subprocess.run([os.path.join(FIXTURE, "hosts.sh"), command, run_id, *extra], check=True,
                   stdout=subprocess.DEVNULL)
