// collbench's command line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "coll/buffer_pool.hpp"
#include "coll/config.hpp"
#include "coll/types.hpp"
#include "sweep_collective.hpp"

namespace collbench {

// Bad command-line input: main prints one line and exits with status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Each part below is filled by the parser of its own flags; a mode function takes the parts it
// reads (main.cc hands them out), so a field of another mode is out of its reach.

// The job's shape: the launcher starts it; the modelled modes price it.
struct JobShape {
  int nodes = 1;
  int ranks_per_node = 1;
  std::vector<int> node_sizes;        // --node-sizes 3,2: uneven nodes (overrides the two above)
  bool nodes_given = false;           // --nodes on the command line (an emulation filter)
  bool ranks_per_node_given = false;  // --ranks-per-node on the command line
};

// The library settings flags give (library_config): 0 / false / "" leave the COLL_* one.
struct LibrarySettings {
  std::string cost_preset;    // --cost-preset: a preset name or a preset file
  int ps_servers = 0;         // --ps-servers, or --strategy's one per node
  bool ps_dedicated = false;  // --ps-dedicated
  std::string hier_inter;     // --strategy's inter-node algorithm of hierarchical
};

// A size sweep, nccl-tests style, and what --tune, --explain and the replays measure with.
struct SweepOptions {
  SweepKind collective = SweepKind::AllReduce;  // --coll
  std::size_t min_bytes = 8;
  std::size_t max_bytes = 32u << 20;
  std::size_t step_factor = 2;
  int iterations = 20;
  int warmup = 5;
  // --rounds: each size measured this many times, the algorithms alternating, medians kept.
  // 0: the mode's default (5 with several algorithms, as --tune; a sweep of one: 1).
  int rounds = 0;
  bool check = true;
  coll::DataType type = coll::DataType::Float32;
  coll::ReduceOp op = coll::ReduceOp::Sum;
  std::vector<std::string> algorithms;  // empty: the library's default
  std::string json_path;
  // --buffers: the benchmark's buffers from allocate_shared (peers of a node map them) or plain.
  coll::Sharing buffers = coll::Sharing::WithPeers;
};

// --soak N: random operations with exact checks (soak.hpp); -e and --algo come in SweepOptions.
struct SoakOptions {
  std::size_t ops = 0;                // --soak N (0: not a soak)
  std::optional<std::uint64_t> seed;  // --seed: the soak's operations (default: drawn, printed)
};

// A model's gradients, replayed by ranks or modelled.
struct ReplayOptions {
  std::string model;  // empty: no model
  std::string model_variant;
  std::string models_dir;
  bool per_layer = false;
  // Layer-pipelined replay (a training iteration: backward emulated, all-reduces overlapped).
  std::string fusion = "none";  // none | threshold:BYTES | buckets:BYTES | mgwfbp | auto
  bool overlap = false;
  std::string compute_profile = "p40";  // p40 (derived from FLOPs) or a CSV file
  double compute_scale = 1.0;
  std::string trace_path;         // Chrome-trace JSON of every rank's timeline
  bool iteration_replay = false;  // any of the above given: replay with emulated compute
  std::string strategy;           // --strategy NAME: algorithm, fusion, overlap and model table
};

// The paper's study: modelled tables and their emulated cells.
struct StudyOptions {
  bool batch_per_node = false;  // --batch-per node: the model's batch is split over a node's GPUs
  // --paper-tables --emulate: every cell this machine can host measured over shaped links.
  bool emulate = false;
  double time_scale = 50;  // --time-scale K: links and compute K times slower, times / K
  // --clock virtual: the emulated cluster's time is a virtual clock (K = 1), not this machine's.
  bool virtual_clock = false;
};

// What collbench was asked to do: the mode's flags and the parts the modes read.
struct Command {
  JobShape job;
  LibrarySettings library;
  SweepOptions sweep;
  SoakOptions soak;
  ReplayOptions replay;
  StudyOptions study;

  // Modes (with none: a sweep, or a model replay with --model-gradients).
  bool strategy_list = false;  // --strategy list
  bool model_only = false;     // cost model + iteration simulator only (no process launched)
  bool paper_tables = false;   // the paper's Tables 6 and 7, modelled
  bool scaling = false;        // every strategy and model at 64-4096 GPUs, modelled
  bool calibrate = false;      // measure alpha/beta/gamma, save them, exit
  bool tune = false;           // measure every algorithm per size, write the decision table, exit
  bool explain = false;        // print every algorithm's prediction per size before measuring

  bool help = false;
  bool version = false;  // --version: print the tool and library versions, exit
  std::string help_text;
};

// Throws UsageError with a one-line message for any bad input.
Command parse_options(int argc, const char* const* argv);

// The settings the library runs with in this process: the COLL_* environment with the flags that
// stand for some of it applied (--cost-preset, --ps-servers, --ps-dedicated, --strategy's
// placement). Ranks apply them to their own communicator; the tool sets no variable.
coll::Config library_config(const LibrarySettings& settings);

}  // namespace collbench
