#include "options.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdlib>
#include <sstream>
#include <string_view>

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
void apply_strategy(Command& command, const po::variables_map& values) {
  const Strategy* strategy = nullptr;
  try {
    strategy = &find_strategy(command.replay.strategy);
  } catch (const coll::Error& error) {
    throw UsageError(std::string("--strategy: ") + error.what());
  }
  // `best` has no table of its own: it replays the --model-variant given, else the default.
  const std::string& variant = strategy->variant_for(command.replay.model);
  for (const char* flag : {"algo", "fusion", "overlap", "model-variant"}) {
    if (std::string(flag) == "model-variant" && variant.empty()) continue;
    if (given(values, flag)) {
      throw UsageError(std::string("--strategy ") + strategy->name + " sets --" + flag +
                       "; give one or the other");
    }
  }
  command.sweep.algorithms = {strategy->algorithm};
  command.replay.fusion = strategy->fusion;
  command.replay.overlap = strategy->overlap;
  if (!variant.empty()) command.replay.model_variant = variant;
  // The tables place every cell's servers themselves; a replay's ranks read the placement.
  if (command.paper_tables || command.scaling) return;
  if (strategy->servers_per_node && values.count("ps-servers") > 0) {
    throw UsageError("--strategy " + strategy->name +
                     " places one parameter server per node; give --ps-servers or --strategy");
  }
  const int nodes = command.job.node_sizes.empty()
                        ? command.job.nodes
                        : static_cast<int>(command.job.node_sizes.size());
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
    command.library.hier_inter = strategy->inter;
  }
  if (strategy->servers_per_node) {
    refuse_conflict("COLL_PS_SERVERS", std::to_string(nodes));
    command.library.ps_servers = nodes;
  }
}

// --ps-servers and --ps-dedicated place the servers of `ps` (directly, across nodes, or chosen
// by `auto`): with any other algorithm, or more servers than ranks, they would be ignored.
void check_server_flags(const Command& command, const po::variables_map& values, bool dedicated) {
  if (dedicated && values.count("ps-servers") == 0 && std::getenv("COLL_PS_SERVERS") == nullptr) {
    throw UsageError("--ps-dedicated places the --ps-servers servers; give --ps-servers too");
  }
  if (values.count("ps-servers") == 0) return;
  int ranks = command.job.nodes * command.job.ranks_per_node;
  if (!command.job.node_sizes.empty()) {
    ranks = 0;
    for (int size : command.job.node_sizes) ranks += size;
  }
  if (command.library.ps_servers > ranks) {
    throw UsageError("--ps-servers " + std::to_string(command.library.ps_servers) +
                     " is more than the " + std::to_string(ranks) + " ranks of this job");
  }
  const char* inter = std::getenv("COLL_HIER_INTER");
  const bool ps_across_nodes = inter != nullptr && std::string(inter) == "ps";
  for (const auto& name : command.sweep.algorithms) {
    if (name == "ps" || name == "auto" || (name.starts_with("hierarchical") && ps_across_nodes))
      return;
  }
  if (command.sweep.algorithms.empty()) return;  // the library's default may choose ps
  throw UsageError(
      "--ps-servers places the servers of --algo ps (or of COLL_HIER_INTER=ps); "
      "--algo " +
      command.sweep.algorithms.front() + " has none");
}

// What collbench does is chosen by the flags that name a mode; each mode parses only the flags
// it reads, so any other is unknown there (boost's one-line error, exit status 2).
enum class Mode {
  Run,             // a sweep, model replay, calibration or tuning: ranks launched
  Soak,            // --soak N
  ModelSweep,      // --model-only
  ModelIteration,  // --model-only --model-gradients
  PaperTables,     // --paper-tables
  EmulatedTables,  // --paper-tables --emulate
  Scaling,         // --scaling
};

bool has_flag(int argc, const char* const* argv, const std::string& flag) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == flag || arg.starts_with(flag + "=")) return true;
  }
  return false;
}

Mode mode_of(int argc, const char* const* argv) {
  if (has_flag(argc, argv, "--paper-tables")) {
    return has_flag(argc, argv, "--emulate") ? Mode::EmulatedTables : Mode::PaperTables;
  }
  if (has_flag(argc, argv, "--scaling")) return Mode::Scaling;
  if (has_flag(argc, argv, "--model-only")) {
    return has_flag(argc, argv, "--model-gradients") ? Mode::ModelIteration : Mode::ModelSweep;
  }
  if (has_flag(argc, argv, "--soak")) return Mode::Soak;
  return Mode::Run;
}

// How an error names the mode, in Mode's order.
const char* mode_name(Mode mode) {
  static constexpr const char* kNames[] = {"",
                                           "--soak",
                                           "--model-only without --model-gradients",
                                           "--model-only --model-gradients",
                                           "--paper-tables",
                                           "--paper-tables --emulate",
                                           "--scaling"};
  return kNames[static_cast<int>(mode)];
}

}  // namespace

Command parse_options(int argc, const char* const* argv) {
  Command command;
  std::string node_sizes, batch_per = "gpu", clock = "real";
  bool ps_dedicated = false;
  std::string min_bytes = "8", max_bytes = "32M", type = "float", op = "sum", algo,
              collective = "allreduce";
  int check = 1;
  bool no_check = false;
  std::string buffers = "shared";
  // The flags in groups, each group read by the modes that list it below.
  po::options_description basics, nodes, per_node, uneven, servers, sizes, largest, timing, measure,
      datatype, algorithm, json, soak_group, table, replay, iteration, compute, trace, strategy,
      batch, model_only, paper_tables, scaling, emulate, emulation, preset, measuring;
  basics.add_options()("help,h", "print this help")("version", "print the version and exit");
  nodes.add_options()("nodes", po::value(&command.job.nodes)->default_value(1),
                      "nodes to run (emulated on this machine: COLL_NODE is set per rank)");
  per_node.add_options()("ranks-per-node,g",
                         po::value(&command.job.ranks_per_node)->default_value(1),
                         "ranks per node (GPUs per node in the paper's terms)")(
      "gpus-per-node", po::value(&command.job.ranks_per_node), "alias of --ranks-per-node");
  uneven.add_options()(
      "node-sizes", po::value(&node_sizes),
      "uneven nodes: ranks on each node, e.g. 3,2 (instead of --nodes/--ranks-per-node)");
  servers.add_options()(
      "ps-servers", po::value(&command.library.ps_servers),
      "parameter-server shards for --algo ps (sets COLL_PS_SERVERS; default every rank)")(
      "ps-dedicated", po::bool_switch(&ps_dedicated),
      "the last --ps-servers ranks serve instead of one per node (sets COLL_PS_DEDICATED=1)");
  sizes.add_options()("minbytes,b", po::value(&min_bytes)->default_value("8"),
                      "smallest message, bytes (K/M/G suffixes)")(
      "stepfactor,f", po::value(&command.sweep.step_factor)->default_value(2),
      "multiply the size by this between steps (>= 2)");
  largest.add_options()("maxbytes,e", po::value(&max_bytes)->default_value("32M"),
                        "largest message, bytes");
  timing.add_options()("iters,n", po::value(&command.sweep.iterations)->default_value(20),
                       "timed iterations per size")(
      "warmup_iters,w", po::value(&command.sweep.warmup)->default_value(5),
      "untimed warm-up iterations per size");
  measure.add_options()(
      "rounds", po::value(&command.sweep.rounds),
      "measure every size this many times, the algorithms of --algo alternating (in reverse "
      "order every other round), and report each one's median (default 5 with several "
      "algorithms, 1 with one; --tune: 5)")("check,c", po::value(&check)->default_value(1),
                                            "verify results (1) or not (0)")(
      "no-check", po::bool_switch(&no_check), "same as -c 0")(
      "op,o", po::value(&op)->default_value("sum"), "sum prod max min avg")(
      "coll", po::value(&collective)->default_value("allreduce"),
      "collective to sweep: allreduce broadcast reduce allgather reducescatter")(
      "buffers", po::value(&buffers)->default_value("shared"),
      "shared: buffers from coll::allocate_shared, which ranks of one node map and read "
      "directly (as a program using it does); private: plain memory, read by system calls");
  datatype.add_options()("datatype,d", po::value(&type)->default_value("float"),
                         "int8 uint8 int32 uint32 int64 uint64 half float double bfloat16");
  algorithm.add_options()(
      "algo", po::value(&algo),
      "all-reduce algorithm(s), comma separated, 'auto' (the cost model's choice) or 'all'");
  json.add_options()("json", po::value(&command.sweep.json_path),
                     "write every number printed to this JSON file");
  soak_group.add_options()("soak", po::value(&command.soak.ops),
                           "run N random operations (collectives, sizes, types, ops, algorithms, "
                           "in or out of place, blocking, queued, fused), each checked exactly, "
                           "with guard bytes and RSS samples; -e caps a call's bytes, --algo the "
                           "algorithms")(
      "seed", po::value<std::uint64_t>(),
      "the soak's random seed (default: drawn and printed); the same seed and ranks repeat it");
  table.add_options()("model-gradients", po::value(&command.replay.model),
                      "replay a model's per-layer gradients: alexnet, googlenet, resnet50")(
      "models-dir", po::value(&command.replay.models_dir)->default_value(default_models_dir()),
      "directory of the model tables");
  replay.add_options()(
      "model-variant", po::value(&command.replay.model_variant),
      "model definition the tensors come from (default per model; see bench/models)")(
      "per-layer", po::bool_switch(&command.replay.per_layer), "print the per-tensor breakdown");
  iteration.add_options()(
      "fusion", po::value(&command.replay.fusion)->default_value("none"),
      "gradient fusion: none, layer, threshold:BYTES (Horovod), buckets:BYTES (DDP), mgwfbp, "
      "auto")("overlap", po::bool_switch(&command.replay.overlap),
              "replay a training iteration: backward emulated layer by layer, each bucket's "
              "all-reduce starting when its last gradient is ready");
  compute.add_options()("compute-profile",
                        po::value(&command.replay.compute_profile)->default_value("p40"),
                        "per-layer backward times: p40 (from FLOPs, see docs) or a CSV file "
                        "(index|layer,backward_ms)")(
      "compute-scale", po::value(&command.replay.compute_scale)->default_value(1.0),
      "multiply the compute profile's times");
  trace.add_options()("trace", po::value(&command.replay.trace_path),
                      "write a Chrome-trace JSON timeline of every rank");
  strategy.add_options()("strategy", po::value(&command.replay.strategy),
                         "a framework's aggregation strategy (sets --algo, --fusion, --overlap and "
                         "the model table): cntk, mxnet, tensorflow, caffe-mpi, horovod, ddp, "
                         "best; 'list' describes them");
  model_only.add_options()("model-only", po::bool_switch(&command.model_only),
                           "cost model and iteration simulator only, any shape (up to 1024 "
                           "nodes): a modelled sweep, or a modelled iteration with "
                           "--model-gradients");
  paper_tables.add_options()(
      "paper-tables", po::bool_switch(&command.paper_tables),
      "the paper's Tables 6 and 7 for every model and strategy, modelled (markdown; --json)");
  scaling.add_options()(
      "scaling", po::bool_switch(&command.scaling),
      "every model and strategy at 64-4096 GPUs, modelled (--ranks-per-node, default 8)");
  emulate.add_options()(
      "emulate", po::bool_switch(&command.study.emulate),
      "with --paper-tables: measure every cell up to 16 ranks over links shaped like the preset's "
      "(COLL_TRANSPORT=shaped:ucx), model beside emulation; --model-gradients, --strategy, "
      "--nodes and --ranks-per-node select cells; see docs/emulation.md");
  emulation.add_options()(
      "time-scale", po::value(&command.study.time_scale)->default_value(50),
      "with --emulate: links and compute run K times slower and times are divided by K, so that "
      "links faster than this machine can be emulated")(
      "clock", po::value(&clock)->default_value("real"),
      "with --emulate: real (links and compute take real time, slowed by --time-scale) or virtual "
      "(each rank keeps the emulated cluster's time: messages carry their emulated arrival, "
      "compute advances it without sleeping; independent of this machine's cores and load)");
  batch.add_options()(
      "batch-per", po::value(&batch_per)->default_value("gpu"),
      "the model's batch (alexnet 1024, googlenet 128, resnet50 32) is per gpu or per node");
  preset.add_options()(
      "cost-preset", po::value(&command.library.cost_preset),
      "use a preset instead of the calibration: p40-ib56 (alias p40-cluster), ethernet-10g, "
      "dgx1-ib100, this-vm, or a preset file (sets COLL_COST_PRESET)");
  measuring.add_options()("calibrate", po::bool_switch(&command.calibrate),
                          "measure alpha/beta per link class and gamma, save them "
                          "(COLL_CALIBRATION_FILE, default ~/.cache/libcoll/calibration.txt), "
                          "exit")(
      "tune", po::bool_switch(&command.tune),
      "measure every available algorithm (or --algo's) at this job's shape over -b/-e/-f and "
      "write the fastest per size to the decision table `auto` reads (COLL_TUNING_FILE, default "
      "~/.cache/libcoll/tuning.txt), exit")(
      "explain", po::bool_switch(&command.explain),
      "print every algorithm's predicted time and terms per size, and the choice");

  // --help shows every flag, by topic.
  po::options_description all("collbench: benchmark gradient all-reduce with libcoll");
  po::options_description job_help("Job"), sweep_help("Size sweep (nccl-tests compatible)"),
      soak_help("Soak test"), model_help("Model gradient replay"),
      modelled_help("Strategies and modelled runs (no process launched)"), cost_help("Cost model");
  // One section per topic, its groups' flags listed together.
  const auto section = [](po::options_description& into,
                          std::initializer_list<const po::options_description*> groups) {
    for (const po::options_description* group : groups) {
      for (const auto& flag : group->options()) into.add(flag);
    }
  };
  section(job_help, {&basics, &nodes, &per_node, &uneven, &servers});
  section(sweep_help, {&sizes, &largest, &timing, &measure, &datatype, &algorithm, &json});
  section(soak_help, {&soak_group});
  section(model_help, {&table, &replay, &iteration, &compute, &trace});
  section(modelled_help,
          {&strategy, &model_only, &paper_tables, &scaling, &emulate, &emulation, &batch});
  section(cost_help, {&measuring, &preset});
  all.add(job_help)
      .add(sweep_help)
      .add(soak_help)
      .add(model_help)
      .add(modelled_help)
      .add(cost_help);

  // Each mode's flags: the job's shape where it runs or models one, and what it reads.
  const Mode mode = mode_of(argc, argv);
  po::options_description accepted;
  accepted.add(basics).add(json).add(preset);
  switch (mode) {
    case Mode::Run:
      accepted.add(nodes).add(per_node).add(uneven).add(servers).add(sizes).add(largest);
      accepted.add(timing).add(measure).add(datatype).add(algorithm).add(table).add(replay);
      accepted.add(iteration).add(compute).add(trace).add(strategy).add(measuring);
      break;
    case Mode::Soak:
      accepted.add(nodes).add(per_node).add(uneven).add(servers).add(largest).add(algorithm);
      accepted.add(soak_group);
      break;
    case Mode::ModelIteration:
      accepted.add(table).add(replay).add(iteration).add(compute).add(trace).add(strategy);
      accepted.add(batch);
      [[fallthrough]];
    case Mode::ModelSweep:
      accepted.add(model_only).add(nodes).add(per_node).add(uneven).add(servers).add(datatype);
      accepted.add(algorithm);
      if (mode == Mode::ModelSweep) accepted.add(sizes).add(largest);
      break;
    case Mode::EmulatedTables:
      accepted.add(emulate).add(emulation).add(nodes).add(per_node).add(timing).add(trace);
      [[fallthrough]];
    case Mode::PaperTables:
      accepted.add(paper_tables).add(table).add(strategy).add(batch).add(compute);
      break;
    case Mode::Scaling:
      accepted.add(scaling).add(per_node).add(table).add(strategy).add(batch).add(compute);
      break;
  }

  po::variables_map values;
  try {
    po::store(po::command_line_parser(argc, argv).options(accepted).run(), values);
    po::notify(values);
  } catch (const po::unknown_option& error) {
    throw UsageError(
        std::string(error.what()) +
        (mode == Mode::Run ? "" : std::string(", which ") + mode_name(mode) + " does not read"));
  } catch (const po::error& error) {
    throw UsageError(error.what());
  }
  std::ostringstream help;
  help << all;
  command.help_text = help.str();
  command.help = values.count("help") > 0;
  command.version = values.count("version") > 0;

  command.job.ranks_per_node_given =
      given(values, "ranks-per-node") || given(values, "gpus-per-node");
  command.job.nodes_given = given(values, "nodes");
  if (command.job.nodes < 1 || command.job.nodes > 1024)
    throw UsageError("--nodes must be in [1, 1024]");
  if (command.job.ranks_per_node < 1 || command.job.ranks_per_node > 256) {
    throw UsageError("--ranks-per-node must be in [1, 256]");
  }
  if (!node_sizes.empty()) {
    try {
      command.job.node_sizes = coll::tools::parse_node_sizes(node_sizes);
    } catch (const coll::Error& error) {
      throw UsageError(error.what());
    }
  }
  if (values.count("ps-servers") > 0) {
    if (command.library.ps_servers < 1 || command.library.ps_servers > 65536) {
      throw UsageError("--ps-servers must be in [1, 65536]");
    }
  }
  command.library.ps_dedicated = ps_dedicated;
  if (batch_per != "gpu" && batch_per != "node") {
    throw UsageError("--batch-per takes gpu or node, not '" + batch_per + "'");
  }
  command.study.batch_per_node = batch_per == "node";
  command.sweep.min_bytes = parse_bytes(min_bytes, "-b/--minbytes");
  command.sweep.max_bytes = parse_bytes(max_bytes, "-e/--maxbytes");
  if (command.sweep.min_bytes > command.sweep.max_bytes) {
    throw UsageError("-b/--minbytes (" + min_bytes + ") is larger than -e/--maxbytes (" +
                     max_bytes + ")");
  }
  if (command.sweep.step_factor < 2) throw UsageError("-f/--stepfactor must be at least 2");
  if (command.sweep.iterations < 1) throw UsageError("-n/--iters must be at least 1");
  if (command.sweep.warmup < 0) throw UsageError("-w/--warmup_iters must not be negative");
  if (values.count("rounds") > 0 && command.sweep.rounds < 1) {
    throw UsageError("--rounds must be at least 1");
  }
  if (check != 0 && check != 1) throw UsageError("-c/--check takes 0 or 1");
  command.sweep.check = check == 1 && !no_check;
  if (buffers != "shared" && buffers != "private") {
    throw UsageError("--buffers takes shared or private, not '" + buffers + "'");
  }
  command.sweep.buffers = buffers == "shared" ? coll::Sharing::WithPeers : coll::Sharing::Private;
  if (values.count("seed") > 0) command.soak.seed = values["seed"].as<std::uint64_t>();
  if (mode == Mode::Soak && command.soak.ops < 1) {
    throw UsageError("--soak needs at least one operation");
  }
  const auto parsed_type = coll::parse_dtype(type);
  if (!parsed_type) throw UsageError("-d/--datatype: unknown data type '" + type + "'");
  command.sweep.type = *parsed_type;
  const auto parsed_op = coll::parse_op(op);
  if (!parsed_op) throw UsageError("-o/--op: unknown operation '" + op + "'");
  command.sweep.op = *parsed_op;

  const auto parsed_collective = parse_sweep_kind(collective);
  if (!parsed_collective) {
    throw UsageError("--coll: unknown collective '" + collective +
                     "'; known: " + sweep_kind_names());
  }
  command.sweep.collective = *parsed_collective;
  if (command.sweep.collective != SweepKind::AllReduce &&
      (!algo.empty() || command.explain || !command.replay.model.empty() || command.calibrate ||
       command.tune)) {
    throw UsageError("--coll " + collective +
                     " sweeps sizes with the collective's one algorithm (no --algo, --explain, "
                     "--model-gradients, --calibrate or --tune)");
  }

  const auto known = coll::Comm::algorithms();
  // "all" stands for every available algorithm, also inside a list ("all,auto").
  for (const auto& name : split_list(algo)) {
    if (name == "all") {
      command.sweep.algorithms.insert(command.sweep.algorithms.end(), known.begin(), known.end());
    } else {
      command.sweep.algorithms.push_back(name);
    }
  }
  for (const auto& name : command.sweep.algorithms) {
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
  if (!command.library.cost_preset.empty()) {
    try {
      coll::model::preset_or_throw(command.library.cost_preset, "--cost-preset");
    } catch (const coll::Error& error) {
      throw UsageError(error.what());
    }
  }
  if (!(command.study.time_scale >= 1) || command.study.time_scale > 1e5) {
    throw UsageError("--time-scale must be in [1, 100000]");
  }
  if (clock != "real" && clock != "virtual") {
    throw UsageError("--clock takes real or virtual, not '" + clock + "'");
  }
  command.study.virtual_clock = clock == "virtual";
  if (command.study.emulate && !command.replay.trace_path.empty() &&
      (!command.study.virtual_clock || command.replay.model.empty() ||
       command.replay.strategy.empty() || !command.job.nodes_given ||
       !command.job.ranks_per_node_given)) {
    throw UsageError(
        "--trace with --emulate draws one cell's timeline in the cluster's time: give "
        "--clock virtual, --model-gradients, --strategy, --nodes and --ranks-per-node");
  }
  if (command.study.virtual_clock) {
    if (given(values, "time-scale")) {
      throw UsageError("--time-scale slows the real clock; the virtual clock needs none");
    }
    command.study.time_scale = 1;
  }
  if (command.study.emulate) {  // an emulated iteration takes K times its modelled time
    if (!given(values, "iters")) command.sweep.iterations = 3;
    if (!given(values, "warmup_iters")) command.sweep.warmup = 1;
  }
  command.strategy_list = command.replay.strategy == "list";
  if (!command.replay.strategy.empty() && !command.strategy_list) {
    apply_strategy(command, values);
  }
  if (command.scaling || command.paper_tables) command.model_only = true;
  check_server_flags(command, values, ps_dedicated);
  if (command.sweep.rounds > 0 &&
      (!command.replay.model.empty() || command.model_only || command.calibrate)) {
    throw UsageError(
        "--rounds repeats a size sweep's or --tune's measurements; it does not apply "
        "to --model-gradients, --model-only, --paper-tables, --scaling or "
        "--calibrate");
  }
  if (command.scaling && !command.job.ranks_per_node_given) command.job.ranks_per_node = 8;
  if (command.scaling && 64 % command.job.ranks_per_node != 0) {
    throw UsageError(
        "--scaling runs 64 to 4096 GPUs in nodes of --ranks-per-node, which must "
        "divide 64 (1, 2, 4, 8, 16, 32 or 64)");
  }
  try {
    coll::study::parse_policy(command.replay.fusion);
  } catch (const coll::Error& error) {
    throw UsageError(std::string("--fusion: ") + error.what());
  }
  if (!(command.replay.compute_scale > 0) || command.replay.compute_scale > 1e6) {
    throw UsageError("--compute-scale must be a positive factor");
  }
  command.replay.iteration_replay =
      command.replay.overlap || given(values, "fusion") || !command.replay.trace_path.empty() ||
      given(values, "compute-profile") || given(values, "compute-scale") ||
      !command.replay.strategy.empty();
  if (command.replay.iteration_replay && command.replay.model.empty() && !command.paper_tables &&
      !command.scaling && !command.strategy_list) {
    throw UsageError(
        "--overlap, --fusion, --compute-profile, --compute-scale, --trace and --strategy need "
        "--model-gradients");
  }
  if (command.tune && (!command.replay.model.empty() || command.calibrate || command.model_only)) {
    throw UsageError(
        "--tune measures a size sweep: no --model-gradients, --calibrate or modelled mode");
  }
  if (!command.replay.model.empty()) {
    try {  // validate now, in the launcher, rather than in every rank
      load_model_table(command.replay.models_dir, command.replay.model,
                       command.replay.model_variant);
    } catch (const coll::Error& error) {
      throw UsageError(std::string("--model-gradients: ") + error.what());
    }
  }
  return command;
}

coll::Config library_config(const LibrarySettings& settings) {
  coll::Config config = coll::Config::from_environment();
  if (!settings.cost_preset.empty()) config.cost_preset = settings.cost_preset;
  // The parameter server's and hierarchical's own options (coll::describe_algorithm_options).
  auto& algorithm_options = config.tuning.algorithm_options;
  if (settings.ps_servers > 0) {
    algorithm_options.set("COLL_PS_SERVERS", std::to_string(settings.ps_servers));
  }
  if (settings.ps_dedicated) algorithm_options.set("COLL_PS_DEDICATED", "1");
  if (!settings.hier_inter.empty()) algorithm_options.set("COLL_HIER_INTER", settings.hier_inter);
  return config;
}

}  // namespace collbench
