// colltopo: shows the nodes, devices and link classes libcoll sees, measures the links between
// ranks (--measure) and asks the cost model what it would pick (--recommend).
//
//   colltopo [--nodes N] [--ranks-per-node G | --node-sizes A,B] [--measure] [--recommend]
//   colltopo --xml FILE [--xml FILE...]          describe hwloc XML files (fixtures)
//   mpirun -np 3 colltopo [--measure]            ranks from the MPI launcher
//
// Without a launcher's rank variables it starts its own ranks with the local launcher, as
// collbench does. Exit codes: 0 success; 1 a rank failed; 2 bad command line. An --xml file that
// is missing or corrupt is not an error: load_xml's one-line warning goes to stderr, the report
// describes the fallback (this machine) with the warning in it, and the exit code stays 0.

#include <cstdio>
#include <cstdlib>

#include "coll/comm.hpp"
#include "coll/tools/json_writer.hpp"
#include "coll/tools/launcher.hpp"
#include "coll/tools/version_line.hpp"
#include "colltopo_options.hpp"
#include "device_tree.hpp"
#include "link_measure.hpp"
#include "rank_map_view.hpp"
#include "rank_report.hpp"
#include "recommend.hpp"
#include "text_format.hpp"

namespace {

using colltopo::appendf;

void finish(const std::string& text, coll::tools::JsonWriter& json, const std::string& json_path) {
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  json.end_object();
  if (!json_path.empty()) json.save(json_path);
}

int describe_files(const colltopo::Options& options) {
  std::string out;
  coll::tools::JsonWriter json;
  json.begin_object().field("tool", "colltopo").begin_array("files");
  for (const auto& file : options.xml_files) {
    const auto node = coll::topo::load_xml(file, coll::topo::Fallback::Local);
    const bool fell_back = node.source != "xml:" + file;
    if (!out.empty()) out += "\n";
    colltopo::print_node(out, node, fell_back ? file + " (unreadable; fallback shown)" : file);
    json.begin_object().field("file", file).field("fallback", fell_back);
    colltopo::json_node(json, node);
    json.end_object();
  }
  json.end_array();
  finish(out, json, options.json_path);
  return 0;
}

int run_rank(const colltopo::Options& options) {
  auto comm = coll::Comm::from_environment();
  const auto mine = colltopo::make_report(*comm, options.cuda);
  const auto reports = colltopo::gather_reports(*comm, mine);
  colltopo::LinkMatrix links;
  if (options.measure)
    links = colltopo::measure_links(*comm, options.measure_bytes, options.measure_iters);
  if (comm->rank() != 0) return 0;

  std::vector<coll::topo::RankInfo> infos;
  for (const auto& report : reports) infos.push_back(report.info);
  const auto map = coll::topo::build_rank_map(infos);
  std::string out;
  coll::tools::JsonWriter json;
  json.begin_object().field("tool", "colltopo").field("num_ranks", map.size);
  json.field("num_nodes", map.num_nodes()).begin_array("nodes");
  for (int n = 0; n < map.num_nodes(); ++n) {
    const auto& ranks = map.ranks_of_node[static_cast<std::size_t>(n)];
    std::string title = "node " + std::to_string(n) + " (ranks ";
    for (std::size_t i = 0; i < ranks.size(); ++i)
      title += (i ? "," : "") + std::to_string(ranks[i]);
    title += ")";
    const auto& node = reports[static_cast<std::size_t>(ranks.front())].topology;
    colltopo::print_node(out, node, title);
    out += "\n";
    json.begin_object().field("node", n).field("name", map.node_names[static_cast<std::size_t>(n)]);
    json.begin_array("ranks");
    for (int r : ranks) json.element(r);
    json.end_array();
    colltopo::json_node(json, node);
    json.end_object();
  }
  json.end_array();
  colltopo::print_rank_map(out, map, reports);
  if (map.node_of_rank != comm->node_of_rank())
    out += "warning: the communicator's node map differs from the one built here\n";
  colltopo::json_rank_map(json, map, reports);
  if (options.measure) {
    const auto flags = colltopo::flag_links(links, map, reports);
    out += "\n";
    colltopo::print_links(out, links, flags);
    json.begin_object("measure");
    colltopo::json_links(json, links, flags);
    json.end_object();
  }
  if (options.recommend) {
    std::string advice;
    if (colltopo::recommend(advice, &json, comm->selector())) out += "\n" + advice;
  }
  finish(out, json, options.json_path);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  colltopo::Options options;
  try {
    options = colltopo::parse_options(argc, argv);
  } catch (const colltopo::UsageError& error) {
    std::fprintf(stderr, "colltopo: error: %s (see --help)\n", error.what());
    return 2;
  }
  if (options.help) {
    std::printf("%s", options.help_text.c_str());
    return 0;
  }
  if (options.version) {
    std::printf("%s\n", coll::tools::version_line("colltopo").c_str());
    return 0;
  }
  try {
    if (!options.xml_files.empty()) return describe_files(options);
    if (coll::tools::is_rank_process()) return run_rank(options);
    coll::tools::LaunchSpec spec;
    spec.program = coll::tools::own_executable();
    spec.args.assign(argv + 1, argv + argc);
    spec.nodes = options.nodes;
    spec.ranks_per_node = options.ranks_per_node;
    spec.node_sizes = options.node_sizes;
    return coll::tools::launch_local(spec);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "colltopo: %s\n", error.what());
    return 1;
  }
}
