#include "transport/transport_registry.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "coll/error.hpp"

namespace coll {
namespace {

std::vector<std::pair<std::string_view, TransportFactory>>& registered() {
  static std::vector<std::pair<std::string_view, TransportFactory>> factories;
  return factories;
}

}  // namespace

TransportRegistration::TransportRegistration(std::string_view name, TransportFactory factory) {
  registered().emplace_back(name, factory);
}

std::vector<std::string_view> transport_names() {
  std::vector<std::string_view> names;
  for (const auto& [name, factory] : registered()) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

std::unique_ptr<Transport> make_transport(std::string_view name, Bootstrap& bootstrap,
                                          const std::vector<int>& node_of_rank,
                                          const TransportOptions& options) {
  for (const auto& [known, factory] : registered()) {
    if (known == name) return factory(bootstrap, node_of_rank, options);
  }
  std::string known;
  for (const auto candidate : transport_names()) {
    known += (known.empty() ? "" : ", ") + std::string(candidate);
  }
  throw Error(Status::InvalidArgument, "unknown transport '" + std::string(name) +
                                           "' (COLL_TRANSPORT; known: " + known + ")");
}

}  // namespace coll
