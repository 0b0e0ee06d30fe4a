#include "colltopo_options.hpp"

#include <boost/program_options.hpp>
#include <sstream>

#include "coll/env.hpp"
#include "coll/error.hpp"
#include "coll/tools/launcher.hpp"

namespace po = boost::program_options;

namespace colltopo {

Options parse_options(int argc, const char* const* argv) {
  Options options;
  std::string node_sizes, measure_bytes = "16M";
  po::options_description job("Job (ranks launched on this machine, or under mpirun)");
  job.add_options()("help,h", "print this help")("version", "print the version and exit")(
      "nodes", po::value(&options.nodes)->default_value(1),
      "nodes to run (emulated on this machine: COLL_NODE is set per rank)")(
      "ranks-per-node,g", po::value(&options.ranks_per_node)->default_value(1), "ranks per node")(
      "node-sizes", po::value(&node_sizes), "uneven nodes: ranks on each node, e.g. 3,2")(
      "cuda", po::bool_switch(&options.cuda), "ask the CUDA driver for device ordinals");
  po::options_description show("What to show");
  show.add_options()("xml", po::value(&options.xml_files)->composing(),
                     "describe this hwloc XML file instead of running ranks (repeatable)")(
      "measure", po::bool_switch(&options.measure),
      "measure latency and bandwidth between every pair of ranks")(
      "measure-bytes", po::value(&measure_bytes)->default_value("16M"),
      "bandwidth message size (K/M/G suffixes)")(
      "measure-iters", po::value(&options.measure_iters)->default_value(200),
      "latency round trips per pair")("recommend", po::bool_switch(&options.recommend),
                                      "what the cost model picks for a few message sizes, and why")(
      "json", po::value(&options.json_path), "write everything printed to this JSON file");
  po::options_description all("colltopo: nodes, devices, link classes and link speeds");
  all.add(job).add(show);

  po::variables_map values;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).run(), values);
    po::notify(values);
  } catch (const po::error& error) {
    throw UsageError(error.what());
  }
  std::ostringstream help;
  help << "usage: colltopo [--nodes N] [--ranks-per-node G | --node-sizes A,B] [--measure] "
          "[--recommend] [--json FILE]\n"
          "       colltopo --xml FILE [--xml FILE...] [--json FILE]\n"
       << all;
  options.help_text = help.str();
  options.help = values.count("help") > 0;
  options.version = values.count("version") > 0;

  if (options.nodes < 1 || options.nodes > 1024) throw UsageError("--nodes must be in [1, 1024]");
  if (options.ranks_per_node < 1 || options.ranks_per_node > 256)
    throw UsageError("--ranks-per-node must be in [1, 256]");
  if (!node_sizes.empty()) {
    if (!values["ranks-per-node"].defaulted())
      throw UsageError("--node-sizes and --ranks-per-node exclude each other");
    try {
      options.node_sizes = coll::tools::parse_node_sizes(node_sizes);
    } catch (const coll::Error& error) {
      throw UsageError(error.what());
    }
    if (!values["nodes"].defaulted() &&
        options.nodes != static_cast<int>(options.node_sizes.size()))
      throw UsageError("--nodes disagrees with the number of --node-sizes entries");
  }
  const auto bytes = coll::parse_size(measure_bytes);
  if (!bytes || *bytes < 1 || *bytes > (1ll << 30))
    throw UsageError("--measure-bytes '" + measure_bytes + "' is not a size in [1, 1G]");
  options.measure_bytes = static_cast<std::size_t>(*bytes);
  if (options.measure_iters < 1 || options.measure_iters > 100000)
    throw UsageError("--measure-iters must be in [1, 100000]");
  for (const auto& file : options.xml_files)
    if (file.empty()) throw UsageError("--xml needs a file name");
  const bool shaped = !values["nodes"].defaulted() || !values["ranks-per-node"].defaulted() ||
                      !options.node_sizes.empty();
  if (!options.xml_files.empty() && shaped)
    throw UsageError("--xml describes files; it takes no job shape (--nodes, --ranks-per-node)");
  if (!options.xml_files.empty() && (options.measure || options.recommend))
    throw UsageError("--xml describes files; --measure and --recommend need running ranks");
  return options;
}

}  // namespace colltopo
