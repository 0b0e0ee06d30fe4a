// The Python module coll_torch: importing it registers torch.distributed's backend "coll", so
// that torch.distributed.init_process_group("coll") creates a ProcessGroupColl.
#include <pybind11/chrono.h>
#include <torch/csrc/utils/pybind.h>

#include "process_group_coll.hpp"

PYBIND11_MODULE(coll_torch, module) {
  module.doc() = "libcoll as torch.distributed's backend \"coll\"";
  // ProcessGroup and Store are torch's Python types: they must exist before they are used here.
  auto distributed = pybind11::module::import("torch.distributed");
  module.def("create_process_group", &coll::torch_backend::ProcessGroupColl::create,
             pybind11::arg("store"), pybind11::arg("rank"), pybind11::arg("size"),
             pybind11::arg("timeout"));
  distributed.attr("Backend").attr("register_backend")("coll", module.attr("create_process_group"));
}
