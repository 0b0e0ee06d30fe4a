// colltopo's command line: what to show, and the job shape when it launches its own ranks.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace colltopo {

// Bad input: main() prints it as one line and exits 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  bool help = false;
  bool version = false;  // --version: print the tool and library versions, exit
  std::string help_text;
  // Job shape (launcher mode only).
  int nodes = 1;
  int ranks_per_node = 1;
  std::vector<int> node_sizes;  // uneven nodes; overrides nodes x ranks_per_node
  // Fixture mode: describe these hwloc XML files instead of running ranks.
  std::vector<std::string> xml_files;
  bool cuda = false;  // ask the CUDA driver for device ordinals
  bool measure = false;
  std::size_t measure_bytes = 16u << 20;  // bandwidth message
  int measure_iters = 200;                // latency round trips per pair
  bool recommend = false;
  std::string json_path;
};

// Throws UsageError on anything malformed.
Options parse_options(int argc, const char* const* argv);

}  // namespace colltopo
