#!/usr/bin/python3
"""Fits the p40-ib56 and ethernet-10g cost presets to the all-reduce fits of the paper's group.

The group (Shi, Wang, Chu; constants in their later public MG-WFBP code, not in the paper) fitted
T(M) = a + b*M to all-reduces at 2, 4, 8 and 16 workers; that they ran on the paper's P40
testbed is not established: we assume a cluster of its class (and a later variant of that code
triples the 16-worker a, per issue 44). Assumed as well: 2 and 4 workers inside one node (their
10 GbE column repeats the InfiniBand numbers there, so no network was involved), 8 = 2 nodes x 4
and 16 = 4 nodes x 4. This script derives libcoll's per-link-class parameters from those fits, in
closed form, and prints the flat ring's error against every fit at 4, 25 and 100 MiB.

The model is libcoll's (libcoll/src/model): a ring of p ranks takes 2(p-1) steps of M/p bytes and
(p-1)/p*M*gamma of reduction; a step lasts as long as its slower link class:
  intra-node flow:  alpha_intra + b * max(beta_intra, f_node * beta_staging)
                    (f_node = intra-node flows of one node in the step: with host staging, as the
                    frameworks of 2017 did, every copy between two GPUs of a node goes through
                    host memory and the node's root complex, which the node's flows share)
  inter-node flow:  alpha_inter + b * f_nic * beta_inter   (f_nic = flows through one NIC)
gamma is fixed beforehand: P40 memory bandwidth 346 GB/s, 3 bytes moved per output byte.

Derivation (slopes, the part that dominates from 4 MiB up):
  2 workers, 1 node: 2 flows in the node; the fit's slope is matched by the per-flow link:
      beta_intra + gamma/2 = b2                      (requires 2*beta_staging <= beta_intra)
  4 workers, 1 node: 4 flows share the staging path:
      1.5 * 4 * beta_staging + 0.75 * gamma = b4
  (a plain per-link model cannot match both: b4/b2 = 2.09, a ring gives 1.5 with any beta.)
  8 and 16 workers, 4 per node: the inter-node flow is the slower class; its beta is the one
  value that puts both rings closest to their fits, relative to their tolerances (15 % at 8,
  10 % at 16): the geometric centre of the band where both hold.
  alpha_intra: the 4-worker intercept over its 6 steps; alpha_inter: the mean of the 8- and
  16-worker intercepts per step. (The 2-worker intercept, 2.55 us, is smaller than two steps of
  this alpha; that costs under 3 % at 4 MiB.)
ethernet-10g keeps p40-ib56's node (the group's 2- and 4-worker 10 GbE fits are the IB ones) and
fits its inter-node link the same way to the 10 GbE fits.

Run: /usr/bin/python3 scripts/fit_cost_presets.py   (standard library only). It prints the
parameters that libcoll/src/model/preset.cc holds and the error table; the unit test
tests/unit/cost_preset_fit_test.cc checks the C++ model against the same fits and tolerances.
"""

import math

MIB = 1 << 20
SIZES = [4 * MIB, 25 * MIB, 100 * MIB]
SHAPES = {2: (1, 2), 4: (1, 4), 8: (2, 4), 16: (4, 4)}  # workers -> (nodes, ranks per node)
TOLERANCE = {2: 0.15, 4: 0.15, 8: 0.15, 16: 0.10}
GAMMA = 3 / 346e9

# (alpha s, beta s/B) by workers: paper.md, "Constants the same group measured".
IB_FITS = {2: (2.554691e-06, 9.837548e-11), 4: (4.204299e-05, 2.058936e-10),
           8: (9.753672e-05, 3.056823e-10), 16: (2.358368e-04, 4.059479e-10)}
ETH_FITS = {2: IB_FITS[2], 4: IB_FITS[4],
            8: (5.230273e-04, 8.570747e-10), 16: (9.080981e-04, 7.395651e-10)}


def ring_seconds(p, workers_shape, params, m):
    """The flat ring, as libcoll's model prices it."""
    nodes, per_node = workers_shape
    b = m / p
    intra_flows = per_node if nodes == 1 else per_node - 1
    intra = params["alpha_intra"] + b * max(params["beta_intra"],
                                            intra_flows * params["beta_staging"])
    step = intra
    if nodes > 1:
        step = max(intra, params["alpha_inter"] + b * params["beta_inter"])
    return 2 * (p - 1) * step + (p - 1) / p * m * GAMMA


def fit_inter(fits):
    """beta_inter and alpha_inter for the 8- and 16-worker rings (4 ranks per node)."""
    steps = {p: 2 * (p - 1) for p in (8, 16)}
    exact = {p: (fits[p][1] - (p - 1) / p * GAMMA) * p / steps[p] for p in (8, 16)}
    # The band where each ring's slope is within its tolerance; take the centre of both.
    low = max(exact[p] * (1 - TOLERANCE[p]) for p in exact)
    high = min(exact[p] * (1 + TOLERANCE[p]) for p in exact)
    beta = math.sqrt(low * high) if low <= high else math.sqrt(exact[8] * exact[16])
    alpha = sum(fits[p][0] / steps[p] for p in (8, 16)) / 2
    return alpha, beta


def fit(fits):
    b2, b4 = fits[2][1], fits[4][1]
    params = {
        "beta_intra": b2 - GAMMA / 2,
        "beta_staging": (b4 - 0.75 * GAMMA) / 6,
        "alpha_intra": fits[4][0] / 6,
    }
    assert 2 * params["beta_staging"] <= params["beta_intra"], "2 workers must be link-bound"
    params["alpha_inter"], params["beta_inter"] = fit_inter(fits)
    return params


def report(name, fits):
    params = fit(fits)
    print("%s:" % name)
    for key in ("alpha_intra", "beta_intra", "beta_staging", "alpha_inter", "beta_inter"):
        unit = "s" if key.startswith("alpha") else "s/B"
        extra = "" if key.startswith("alpha") else "  (%.2f GB/s)" % (1e-9 / params[key])
        print("  %-13s %.4e %s%s" % (key, params[key], unit, extra))
    print("  gamma         %.4e s/B" % GAMMA)
    print("  %7s %9s %12s %12s %8s %6s" % ("workers", "size", "fit (ms)", "ring (ms)", "error",
                                          "limit"))
    worst = 0.0
    for p, shape in SHAPES.items():
        for m in SIZES:
            measured = fits[p][0] + fits[p][1] * m
            model = ring_seconds(p, shape, params, m)
            error = (model - measured) / measured
            worst = max(worst, abs(error) / TOLERANCE[p])
            print("  %7d %6d MiB %12.3f %12.3f %+7.1f%% %5.0f%%" % (
                p, m // MIB, measured * 1e3, model * 1e3, 100 * error, 100 * TOLERANCE[p]))
    print("  worst error / tolerance: %.2f%s\n" % (worst, "" if worst <= 1 else "  (OUT)"))


if __name__ == "__main__":
    report("p40-ib56 (56 Gb/s FDR InfiniBand fits)", IB_FITS)
    report("ethernet-10g (10 GbE fits)", ETH_FITS)
