#include "coll/config.hpp"

#include "algorithms/registry.hpp"
#include "coll/env.hpp"
#include "coll/error.hpp"
#include "core/log.hpp"

namespace coll {

Config Config::from_environment() {
  Config config;
  if (auto value = env_seconds("COLL_TIMEOUT")) config.timeout_s = *value;
  if (auto value = env_string("COLL_ALGO")) config.algorithm = *value;
  if (auto value = env_string("COLL_COST_PRESET")) config.cost_preset = *value;
  if (auto value = env_integer("COLL_NODE", 0, 1 << 20)) config.node = static_cast<int>(*value);
  if (auto value = env_integer("COLL_COMPUTE_THREADS", 0, 1024)) {
    config.compute_threads = static_cast<int>(*value);
  }
  if (auto value = env_integer("COLL_CHECK_ARGS", 0, 1)) {
    config.tuning.check_arguments = *value == 1;
  }
  if (auto value = env_integer("COLL_SEGMENT_BYTES", 64, 1LL << 30, true)) {
    config.tuning.segment_bytes = static_cast<std::size_t>(*value);
    config.tuning.net_segment_bytes = config.tuning.segment_bytes;
  }
  if (auto value = env_integer("COLL_NET_SEGMENT_BYTES", 64, 1LL << 30, true)) {
    config.tuning.net_segment_bytes = static_cast<std::size_t>(*value);
  }
  if (auto value = env_integer("COLL_WINDOW", 1, 64))
    config.tuning.window = static_cast<int>(*value);
  // The options algorithms declare with their registration (COLL_PS_*, COLL_HIER_*).
  read_algorithm_options_from_environment(config.tuning.algorithm_options);
  if (auto value = env_string("COLL_TRANSPORT")) config.transport = *value;
  // The logger reads COLL_DEBUG itself; a malformed value is refused here, where it can fail.
  if (auto value = env_string("COLL_DEBUG"); value && !parse_log_level(*value)) {
    throw Error(Status::InvalidArgument,
                "COLL_DEBUG='" + *value + "' is not one of WARN, INFO, TRACE");
  }
  return config;
}

}  // namespace coll
