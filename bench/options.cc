#include "options.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdlib>
#include <sstream>

#include "coll/algorithms.hpp"
#include "coll/comm.hpp"
#include "coll/env.hpp"
#include "coll/model/preset.hpp"
#include "coll/tools/launcher.hpp"
#include "models_dir.hpp"
#include "study/fusion_plan.hpp"
#include "study/model_table.hpp"
#include "study/strategy.hpp"

namespace po = boost::program_options;

namespace collbench {

using coll::study::find_strategy;
using coll::study::load_model_table;
using coll::study::Strategy;

namespace {

std::size_t parse_bytes(const std::string& text, const char* flag) {
  const auto value = coll::parse_size(text);
  if (!value)
    throw UsageError(std::string(flag) + " '" + text + "' is not a size (e.g. 8, 64K, 32M, 1G)");
  return static_cast<std::size_t>(*value);
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

// The flag is on the command line (not only its default).
bool given(const po::variables_map& values, const std::string& flag) {
  return values.count(flag) > 0 && !values[flag].defaulted();
}

// --strategy NAME: the strategy's algorithm, fusion, overlap and model table, and the library
// settings its placement needs (library_config). Flags it would override are refused.
void apply_strategy(Options& options, const po::variables_map& values) {
  const Strategy* strategy = nullptr;
  try {
    strategy = &find_strategy(options.strategy);
  } catch (const coll::Error& error) {
    throw UsageError(std::string("--strategy: ") + error.what());
  }
  // `best` has no table of its own: it replays the --model-variant given, else the default.
  const std::string& variant = strategy->variant_for(options.model);
  for (const char* flag : {"algo", "fusion", "overlap", "model-variant"}) {
    if (std::string(flag) == "model-variant" && variant.empty()) continue;
    if (given(values, flag)) {
      throw UsageError(std::string("--strategy ") + strategy->name + " sets --" + flag +
                       "; give one or the other");
    }
  }
  options.algorithms = {strategy->algorithm};
  options.fusion = strategy->fusion;
  options.overlap = strategy->overlap;
  if (!variant.empty()) options.model_variant = variant;
  // The tables place every cell's servers themselves; a replay's ranks read the placement.
  if (options.paper_tables || options.scaling) return;
  if (strategy->servers_per_node && values.count("ps-servers") > 0) {
    throw UsageError("--strategy " + strategy->name +
                     " places one parameter server per node; give --ps-servers or --strategy");
  }
  const int nodes =
      options.node_sizes.empty() ? options.nodes : static_cast<int>(options.node_sizes.size());
  const auto refuse_conflict = [&](const char* variable, const std::string& value) {
    const char* set = std::getenv(variable);
    if (set != nullptr && value != set) {
      throw UsageError(std::string(variable) + "=" + set + " conflicts with --strategy " +
                       strategy->name + " (" + variable + "=" + value +
                       "); unset it or drop --strategy");
    }
  };
  if (!strategy->inter.empty()) {
    refuse_conflict("COLL_HIER_INTER", strategy->inter);
    options.hier_inter = strategy->inter;
  }
  if (strategy->servers_per_node) {
    refuse_conflict("COLL_PS_SERVERS", std::to_string(nodes));
    options.ps_servers = nodes;
  }
}

// The modelled modes read only some flags: any other flag given there is refused, not ignored.
void check_modelled_flags(const Options& options, const po::variables_map& values) {
  std::string mode;
  std::vector<std::string> reads{"json",     "cost-preset", "models-dir",      "model-gradients",
                                 "strategy", "batch-per",   "compute-profile", "compute-scale"};
  if (options.paper_tables) {
    mode = options.emulate ? "--paper-tables --emulate" : "--paper-tables";
    reads.insert(reads.end(), {"paper-tables", "emulate"});
    if (options.emulate) {
      reads.insert(reads.end(), {"nodes", "ranks-per-node", "gpus-per-node", "iters",
                                 "warmup_iters", "time-scale", "clock", "trace"});
    }
  } else if (options.scaling) {
    mode = "--scaling";
    reads.insert(reads.end(), {"scaling", "ranks-per-node", "gpus-per-node"});
  } else if (options.model_only) {
    const bool iteration = !options.model.empty();
    mode = iteration ? "--model-only --model-gradients" : "--model-only without --model-gradients";
    reads = {"model-only", "nodes",      "ranks-per-node", "gpus-per-node",
             "node-sizes", "ps-servers", "ps-dedicated",   "datatype",
             "algo",       "json",       "cost-preset"};
    if (iteration) {
      reads.insert(reads.end(), {"model-gradients", "model-variant", "per-layer", "models-dir",
                                 "fusion", "overlap", "compute-profile", "compute-scale", "trace",
                                 "strategy", "batch-per"});
    } else {
      reads.insert(reads.end(), {"minbytes", "maxbytes", "stepfactor"});
    }
  } else {
    if (given(values, "batch-per")) {
      throw UsageError(
          "--batch-per applies to the modelled modes (--model-only, --paper-tables, "
          "--scaling)");
    }
    return;
  }
  for (const auto& [flag, value] : values) {
    if (value.defaulted() || flag == "help" || flag == "version") continue;
    if (std::find(reads.begin(), reads.end(), flag) != reads.end()) continue;
    std::string list;
    for (const auto& read : reads) list += (list.empty() ? "--" : ", --") + read;
    throw UsageError("--" + flag + " does not apply to " + mode + ", which reads " + list);
  }
}

// --ps-servers and --ps-dedicated place the servers of `ps` (directly, across nodes, or chosen
// by `auto`): with any other algorithm, or more servers than ranks, they would be ignored.
void check_server_flags(const Options& options, const po::variables_map& values, bool dedicated) {
  if (dedicated && values.count("ps-servers") == 0 && std::getenv("COLL_PS_SERVERS") == nullptr) {
    throw UsageError("--ps-dedicated places the --ps-servers servers; give --ps-servers too");
  }
  if (values.count("ps-servers") == 0) return;
  int ranks = options.nodes * options.ranks_per_node;
  if (!options.node_sizes.empty()) {
    ranks = 0;
    for (int size : options.node_sizes) ranks += size;
  }
  if (options.ps_servers > ranks) {
    throw UsageError("--ps-servers " + std::to_string(options.ps_servers) + " is more than the " +
                     std::to_string(ranks) + " ranks of this job");
  }
  const char* inter = std::getenv("COLL_HIER_INTER");
  const bool ps_across_nodes = inter != nullptr && std::string(inter) == "ps";
  for (const auto& name : options.algorithms) {
    if (name == "ps" || name == "auto" || (name.starts_with("hierarchical") && ps_across_nodes))
      return;
  }
  if (options.algorithms.empty()) return;  // the library's default may choose ps
  throw UsageError(
      "--ps-servers places the servers of --algo ps (or of COLL_HIER_INTER=ps); "
      "--algo " +
      options.algorithms.front() + " has none");
}

// --soak draws each operation's collective, size, type and op itself: flags that would fix them
// are refused rather than ignored.
void check_soak_flags(const Options& options, const po::variables_map& values) {
  if (options.soak_ops < 1) throw UsageError("--soak needs at least one operation");
  for (const char* flag : {"minbytes", "stepfactor", "iters", "warmup_iters", "check", "no-check",
                           "datatype", "op", "coll", "model-gradients", "explain", "calibrate",
                           "rounds", "strategy", "model-only", "paper-tables", "scaling"}) {
    if (given(values, flag)) {
      throw UsageError(std::string("--soak draws its operations itself; it takes -e/--maxbytes, "
                                   "--algo, --seed and --json, not --") +
                       flag);
    }
  }
}

}  // namespace

Options parse_options(int argc, const char* const* argv) {
  Options options;
  std::string node_sizes, batch_per = "gpu", clock = "real";
  bool ps_dedicated = false;
  std::string min_bytes = "8", max_bytes = "32M", type = "float", op = "sum", algo,
              collective = "allreduce";
  int check = 1;
  bool no_check = false;
  std::string buffers;
  po::options_description job("Job");
  job.add_options()("help,h", "print this help")("version", "print the version and exit")(
      "nodes", po::value(&options.nodes)->default_value(1),
      "nodes to run (emulated on this machine: COLL_NODE is set per rank)")(
      "ranks-per-node,g", po::value(&options.ranks_per_node)->default_value(1),
      "ranks per node (GPUs per node in the paper's terms)")(
      "gpus-per-node", po::value(&options.ranks_per_node), "alias of --ranks-per-node")(
      "node-sizes", po::value(&node_sizes),
      "uneven nodes: ranks on each node, e.g. 3,2 (instead of --nodes/--ranks-per-node)")(
      "ps-servers", po::value(&options.ps_servers),
      "parameter-server shards for --algo ps (sets COLL_PS_SERVERS; default every rank)")(
      "ps-dedicated", po::bool_switch(&ps_dedicated),
      "the last --ps-servers ranks serve instead of one per node (sets COLL_PS_DEDICATED=1)");
  po::options_description sweep("Size sweep (nccl-tests compatible)");
  sweep.add_options()("minbytes,b", po::value(&min_bytes)->default_value("8"),
                      "smallest message, bytes (K/M/G suffixes)")(
      "maxbytes,e", po::value(&max_bytes)->default_value("32M"), "largest message, bytes")(
      "stepfactor,f", po::value(&options.step_factor)->default_value(2),
      "multiply the size by this between steps (>= 2)")(
      "iters,n", po::value(&options.iterations)->default_value(20), "timed iterations per size")(
      "warmup_iters,w", po::value(&options.warmup)->default_value(5),
      "untimed warm-up iterations per size")(
      "rounds", po::value(&options.rounds),
      "measure every size this many times, the algorithms of --algo alternating (in reverse "
      "order every other round), and report each one's median (default 5 with several "
      "algorithms, 1 with one; --tune: 5)")("check,c", po::value(&check)->default_value(1),
                                            "verify results (1) or not (0)")(
      "no-check", po::bool_switch(&no_check), "same as -c 0")(
      "datatype,d", po::value(&type)->default_value("float"),
      "int8 uint8 int32 uint32 int64 uint64 half float double bfloat16")(
      "op,o", po::value(&op)->default_value("sum"), "sum prod max min avg")(
      "coll", po::value(&collective)->default_value("allreduce"),
      "collective to sweep: allreduce broadcast reduce allgather reducescatter")(
      "algo", po::value(&algo),
      "all-reduce algorithm(s), comma separated, 'auto' (the cost model's choice) or 'all'")(
      "json", po::value(&options.json_path), "write every number printed to this JSON file")(
      "buffers", po::value(&buffers)->default_value("shared"),
      "shared: buffers from coll::allocate_shared, which ranks of one node map and read "
      "directly (as a program using it does); private: plain memory, read by system calls");
  po::options_description soak("Soak test");
  soak.add_options()("soak", po::value(&options.soak_ops),
                     "run N random operations (collectives, sizes, types, ops, algorithms, in or "
                     "out of place, blocking, queued, fused), each checked exactly, with guard "
                     "bytes and RSS samples; -e caps a call's bytes, --algo the algorithms")(
      "seed", po::value<std::uint64_t>(),
      "the soak's random seed (default: drawn and printed); the same seed and ranks repeat it");
  po::options_description model("Model gradient replay");
  model.add_options()("model-gradients", po::value(&options.model),
                      "replay a model's per-layer gradients: alexnet, googlenet, resnet50")(
      "model-variant", po::value(&options.model_variant),
      "model definition the tensors come from (default per model; see bench/models)")(
      "per-layer", po::bool_switch(&options.per_layer), "print the per-tensor breakdown")(
      "models-dir", po::value(&options.models_dir)->default_value(default_models_dir()),
      "directory of the model tables")(
      "fusion", po::value(&options.fusion)->default_value("none"),
      "gradient fusion: none, layer, threshold:BYTES (Horovod), buckets:BYTES (DDP), mgwfbp, "
      "auto")(
      "overlap", po::bool_switch(&options.overlap),
      "replay a training iteration: backward emulated layer by layer, each bucket's all-reduce "
      "starting when its last gradient is ready")(
      "compute-profile", po::value(&options.compute_profile)->default_value("p40"),
      "per-layer backward times: p40 (from FLOPs, see docs) or a CSV file "
      "(index|layer,backward_ms)")("compute-scale",
                                   po::value(&options.compute_scale)->default_value(1.0),
                                   "multiply the compute profile's times")(
      "trace", po::value(&options.trace_path), "write a Chrome-trace JSON timeline of every rank");
  po::options_description modelled("Strategies and modelled runs (no process launched)");
  modelled.add_options()("strategy", po::value(&options.strategy),
                         "a framework's aggregation strategy (sets --algo, --fusion, --overlap and "
                         "the model table): cntk, mxnet, tensorflow, caffe-mpi, horovod, ddp, "
                         "best; 'list' describes them")(
      "model-only", po::bool_switch(&options.model_only),
      "cost model and iteration simulator only, any shape (up to 1024 nodes): a modelled "
      "sweep, or a modelled iteration with --model-gradients")(
      "paper-tables", po::bool_switch(&options.paper_tables),
      "the paper's Tables 6 and 7 for every model and strategy, modelled (markdown; --json)")(
      "scaling", po::bool_switch(&options.scaling),
      "every model and strategy at 64-4096 GPUs, modelled (--ranks-per-node, default 8)")(
      "emulate", po::bool_switch(&options.emulate),
      "with --paper-tables: measure every cell up to 16 ranks over links shaped like the preset's "
      "(COLL_TRANSPORT=shaped:ucx), model beside emulation; --model-gradients, --strategy, "
      "--nodes and --ranks-per-node select cells; see docs/emulation.md")(
      "time-scale", po::value(&options.time_scale)->default_value(50),
      "with --emulate: links and compute run K times slower and times are divided by K, so that "
      "links faster than this machine can be emulated")(
      "clock", po::value(&clock)->default_value("real"),
      "with --emulate: real (links and compute take real time, slowed by --time-scale) or virtual "
      "(each rank keeps the emulated cluster's time: messages carry their emulated arrival, "
      "compute advances it without sleeping; independent of this machine's cores and load)")(
      "batch-per", po::value(&batch_per)->default_value("gpu"),
      "the model's batch (alexnet 1024, googlenet 128, resnet50 32) is per gpu or per node");
  po::options_description cost("Cost model");
  cost.add_options()("calibrate", po::bool_switch(&options.calibrate),
                     "measure alpha/beta per link class and gamma, save them "
                     "(COLL_CALIBRATION_FILE, default ~/.cache/libcoll/calibration.txt), exit")(
      "tune", po::bool_switch(&options.tune),
      "measure every available algorithm (or --algo's) at this job's shape over -b/-e/-f and "
      "write the fastest per size to the decision table `auto` reads (COLL_TUNING_FILE, default "
      "~/.cache/libcoll/tuning.txt), exit")(
      "explain", po::bool_switch(&options.explain),
      "print every algorithm's predicted time and terms per size, and the choice")(
      "cost-preset", po::value(&options.cost_preset),
      "use a preset instead of the calibration: p40-ib56 (alias p40-cluster), ethernet-10g, "
      "dgx1-ib100, this-vm, or a preset file (sets COLL_COST_PRESET)");
  po::options_description all("collbench: benchmark gradient all-reduce with libcoll");
  all.add(job).add(sweep).add(soak).add(model).add(modelled).add(cost);

  po::variables_map values;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).run(), values);
    po::notify(values);
  } catch (const po::error& error) {
    throw UsageError(error.what());
  }
  std::ostringstream help;
  help << all;
  options.help_text = help.str();
  options.help = values.count("help") > 0;
  options.version = values.count("version") > 0;

  options.ranks_per_node_given =
      !values["ranks-per-node"].defaulted() || values.count("gpus-per-node") > 0;
  options.nodes_given = !values["nodes"].defaulted();
  if (options.nodes < 1 || options.nodes > 1024) throw UsageError("--nodes must be in [1, 1024]");
  if (options.ranks_per_node < 1 || options.ranks_per_node > 256) {
    throw UsageError("--ranks-per-node must be in [1, 256]");
  }
  if (!node_sizes.empty()) {
    try {
      options.node_sizes = coll::tools::parse_node_sizes(node_sizes);
    } catch (const coll::Error& error) {
      throw UsageError(error.what());
    }
  }
  if (values.count("ps-servers") > 0) {
    if (options.ps_servers < 1 || options.ps_servers > 65536) {
      throw UsageError("--ps-servers must be in [1, 65536]");
    }
  }
  options.ps_dedicated = ps_dedicated;
  if (batch_per != "gpu" && batch_per != "node") {
    throw UsageError("--batch-per takes gpu or node, not '" + batch_per + "'");
  }
  options.batch_per_node = batch_per == "node";
  options.min_bytes = parse_bytes(min_bytes, "-b/--minbytes");
  options.max_bytes = parse_bytes(max_bytes, "-e/--maxbytes");
  if (options.min_bytes > options.max_bytes) {
    throw UsageError("-b/--minbytes (" + min_bytes + ") is larger than -e/--maxbytes (" +
                     max_bytes + ")");
  }
  if (options.step_factor < 2) throw UsageError("-f/--stepfactor must be at least 2");
  if (options.iterations < 1) throw UsageError("-n/--iters must be at least 1");
  if (options.warmup < 0) throw UsageError("-w/--warmup_iters must not be negative");
  if (values.count("rounds") > 0 && options.rounds < 1) {
    throw UsageError("--rounds must be at least 1");
  }
  if (check != 0 && check != 1) throw UsageError("-c/--check takes 0 or 1");
  options.check = check == 1 && !no_check;
  if (buffers != "shared" && buffers != "private") {
    throw UsageError("--buffers takes shared or private, not '" + buffers + "'");
  }
  options.buffers = buffers == "shared" ? coll::Sharing::WithPeers : coll::Sharing::Private;
  if (values.count("seed") > 0) options.seed = values["seed"].as<std::uint64_t>();
  if (values.count("soak") > 0) {
    check_soak_flags(options, values);
  } else if (options.seed) {
    throw UsageError("--seed is the seed of --soak; give --soak N too");
  }
  const auto parsed_type = coll::parse_dtype(type);
  if (!parsed_type) throw UsageError("-d/--datatype: unknown data type '" + type + "'");
  options.type = *parsed_type;
  const auto parsed_op = coll::parse_op(op);
  if (!parsed_op) throw UsageError("-o/--op: unknown operation '" + op + "'");
  options.op = *parsed_op;

  const auto parsed_collective = parse_sweep_kind(collective);
  if (!parsed_collective) {
    throw UsageError("--coll: unknown collective '" + collective +
                     "'; known: " + sweep_kind_names());
  }
  options.collective = *parsed_collective;
  if (options.collective != SweepKind::AllReduce &&
      (!algo.empty() || options.explain || !options.model.empty() || options.calibrate ||
       options.tune)) {
    throw UsageError("--coll " + collective +
                     " sweeps sizes with the collective's one algorithm (no --algo, --explain, "
                     "--model-gradients, --calibrate or --tune)");
  }

  const auto known = coll::Comm::algorithms();
  // "all" stands for every available algorithm, also inside a list ("all,auto").
  for (const auto& name : split_list(algo)) {
    if (name == "all") {
      options.algorithms.insert(options.algorithms.end(), known.begin(), known.end());
    } else {
      options.algorithms.push_back(name);
    }
  }
  for (const auto& name : options.algorithms) {
    if (name == "auto" || std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    const auto description = coll::describe_algorithm(name);
    throw UsageError("--algo: " +
                     (description ? "'" + name + "' is not available in this process (" +
                                        description->summary + ")"
                                  : "unknown algorithm '" + name + "'") +
                     "; available: " + list + ", auto, all");
  }
  if (!options.cost_preset.empty()) {
    try {
      coll::model::preset_or_throw(options.cost_preset, "--cost-preset");
    } catch (const coll::Error& error) {
      throw UsageError(error.what());
    }
  }
  if (options.emulate && !options.paper_tables) throw UsageError("--emulate needs --paper-tables");
  if (!values["time-scale"].defaulted() && !options.emulate) {
    throw UsageError("--time-scale needs --emulate");
  }
  if (!(options.time_scale >= 1) || options.time_scale > 1e5) {
    throw UsageError("--time-scale must be in [1, 100000]");
  }
  if (clock != "real" && clock != "virtual") {
    throw UsageError("--clock takes real or virtual, not '" + clock + "'");
  }
  options.virtual_clock = clock == "virtual";
  if (!values["clock"].defaulted() && !options.emulate) throw UsageError("--clock needs --emulate");
  if (options.emulate && !options.trace_path.empty() &&
      (!options.virtual_clock || options.model.empty() || options.strategy.empty() ||
       !options.nodes_given || !options.ranks_per_node_given)) {
    throw UsageError(
        "--trace with --emulate draws one cell's timeline in the cluster's time: give "
        "--clock virtual, --model-gradients, --strategy, --nodes and --ranks-per-node");
  }
  if (options.virtual_clock) {
    if (!values["time-scale"].defaulted()) {
      throw UsageError("--time-scale slows the real clock; the virtual clock needs none");
    }
    options.time_scale = 1;
  }
  if (options.emulate) {  // an emulated iteration takes K times its modelled time
    if (values["iters"].defaulted()) options.iterations = 3;
    if (values["warmup_iters"].defaulted()) options.warmup = 1;
  }
  options.strategy_list = options.strategy == "list";
  if (!options.strategy.empty() && !options.strategy_list) {
    apply_strategy(options, values);
  }
  if (options.scaling || options.paper_tables) options.model_only = true;
  if (!options.strategy_list) check_modelled_flags(options, values);
  check_server_flags(options, values, ps_dedicated);
  if (options.rounds > 0 && (!options.model.empty() || options.model_only || options.calibrate)) {
    throw UsageError(
        "--rounds repeats a size sweep's or --tune's measurements; it does not apply "
        "to --model-gradients, --model-only, --paper-tables, --scaling or "
        "--calibrate");
  }
  if (options.scaling && !options.ranks_per_node_given) options.ranks_per_node = 8;
  if (options.scaling && 64 % options.ranks_per_node != 0) {
    throw UsageError(
        "--scaling runs 64 to 4096 GPUs in nodes of --ranks-per-node, which must "
        "divide 64 (1, 2, 4, 8, 16, 32 or 64)");
  }
  try {
    coll::study::parse_policy(options.fusion);
  } catch (const coll::Error& error) {
    throw UsageError(std::string("--fusion: ") + error.what());
  }
  if (!(options.compute_scale > 0) || options.compute_scale > 1e6) {
    throw UsageError("--compute-scale must be a positive factor");
  }
  options.iteration_replay = options.overlap || !values["fusion"].defaulted() ||
                             !options.trace_path.empty() ||
                             !values["compute-profile"].defaulted() ||
                             !values["compute-scale"].defaulted() || !options.strategy.empty();
  if (options.iteration_replay && options.model.empty() && !options.paper_tables &&
      !options.scaling && !options.strategy_list) {
    throw UsageError(
        "--overlap, --fusion, --compute-profile, --compute-scale, --trace and --strategy need "
        "--model-gradients");
  }
  if (options.tune && (!options.model.empty() || options.calibrate || options.model_only)) {
    throw UsageError(
        "--tune measures a size sweep: no --model-gradients, --calibrate or modelled mode");
  }
  if (!options.model.empty()) {
    try {  // validate now, in the launcher, rather than in every rank
      load_model_table(options.models_dir, options.model, options.model_variant);
    } catch (const coll::Error& error) {
      throw UsageError(std::string("--model-gradients: ") + error.what());
    }
  }
  return options;
}

coll::Config library_config(const Options& options) {
  coll::Config config = coll::Config::from_environment();
  if (!options.cost_preset.empty()) config.cost_preset = options.cost_preset;
  if (options.ps_servers > 0) config.tuning.ps_servers = options.ps_servers;
  if (options.ps_dedicated) config.tuning.ps_dedicated = true;
  if (!options.hier_inter.empty()) config.tuning.hier_inter = options.hier_inter;
  return config;
}

}  // namespace collbench
