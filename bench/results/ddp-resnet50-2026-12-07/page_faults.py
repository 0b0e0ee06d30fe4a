"""Minor page faults of a torch loop of 24 MB tensors, with or without libcoll loaded.

    page_faults.py plain|coll [MODULE_DIR]   (MODULE_DIR: the folder of coll_torch, default build/libcoll/torch)
"""
import sys, os, resource
import torch
if sys.argv[1] == "coll":
    sys.path.insert(0, sys.argv[2] if len(sys.argv) > 2 else "build/libcoll/torch")
    import coll_torch  # noqa
torch.set_num_threads(1)
x = torch.randn(6_000_000)
f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for i in range(60):
    y = x * 2.0
    z = y + x
    del y, z
f1 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
print(sys.argv[1], "UCX_MEM_EVENTS=" + os.environ.get("UCX_MEM_EVENTS", "unset"), "minor page faults in the loop:", f1 - f0)
