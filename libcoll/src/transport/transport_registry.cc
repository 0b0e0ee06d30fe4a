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

std::vector<std::pair<std::string_view, TransportWrapper>>& registered_wrappers() {
  static std::vector<std::pair<std::string_view, TransportWrapper>> wrappers;
  return wrappers;
}

[[noreturn]] void unknown(std::string_view what, std::string_view name, std::string_view why) {
  std::string known;
  for (const auto candidate : transport_names()) {
    known += (known.empty() ? "" : ", ") + std::string(candidate);
  }
  for (const auto& [wrapper, make] : registered_wrappers()) {
    known += ", " + std::string(wrapper) + ":<transport>";
  }
  throw Error(Status::InvalidArgument, "unknown " + std::string(what) + " '" + std::string(name) +
                                           "' (COLL_TRANSPORT; known: " + known + ")" +
                                           std::string(why));
}

}  // namespace

Connection between_processes(std::unique_ptr<Transport> transport, Bootstrap& bootstrap,
                             const std::vector<int>& node_of_rank,
                             const TransportOptions& options) {
  Connection connection{std::move(transport)};
  if (options.links != Links::network) {
    connection.node = NodeResources::between_processes(bootstrap, node_of_rank, options);
  }
  return connection;
}

void register_transport_wrapper(std::string_view name, TransportWrapper wrapper) {
  auto& wrappers = registered_wrappers();
  const auto known = std::find_if(wrappers.begin(), wrappers.end(),
                                  [&](const auto& entry) { return entry.first == name; });
  if (known != wrappers.end()) {
    known->second = wrapper;
  } else {
    wrappers.emplace_back(name, wrapper);
  }
}

TransportRegistration::TransportRegistration(std::string_view name, TransportFactory factory) {
  registered().emplace_back(name, factory);
}

std::vector<std::string_view> transport_names() {
  std::vector<std::string_view> names;
  for (const auto& [name, factory] : registered()) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

Connection make_transport(std::string_view name, Bootstrap& bootstrap,
                          const std::vector<int>& node_of_rank, const TransportOptions& options) {
  const auto colon = name.find(':');
  if (colon != std::string_view::npos) {
    const std::string_view wrapper = name.substr(0, colon);
    for (const auto& [known, wrap] : registered_wrappers()) {
      if (known != wrapper) continue;
      return wrap(make_transport(name.substr(colon + 1), bootstrap, node_of_rank, options),
                  bootstrap, node_of_rank, options);
    }
    // Wrappers live in libraries of their own: a program that links one registers it.
    unknown("transport wrapper", wrapper,
            ": this program registered no such wrapper (`shaped`, the link emulator, is "
            "registered by the programs that link coll_emulator: collbench and the tests)");
  }
  for (const auto& [known, factory] : registered()) {
    if (known == name) return factory(bootstrap, node_of_rank, options);
  }
  unknown("transport", name, "");
}

}  // namespace coll
