#include "model_replay.hpp"

#include <algorithm>
#include <cstdio>

#include "coll/buffer_pool.hpp"
#include "coll/clock.hpp"
#include "coll/tools/json_writer.hpp"
#include "exact_data.hpp"
#include "progress.hpp"
#include "rank_stats.hpp"
#include "study/model_table.hpp"

namespace collbench {

using coll::study::load_model_table;
using coll::study::ModelTable;

namespace {

// Per-iteration times (slowest rank): [0] the whole iteration, [1 + k] tensor k.
using IterationTimes = std::vector<double>;

IterationTimes replay_once(coll::Comm& comm, const SweepOptions& sweep, const ModelTable& table,
                           const std::vector<std::size_t>& offsets, std::byte* grads,
                           std::byte* reduced) {
  const std::size_t elem = coll::dtype_size(sweep.type);
  const std::string algorithm = sweep.algorithms.empty() ? "" : sweep.algorithms.front();
  IterationTimes times(table.tensors.size() + 1);
  comm.barrier();  // every rank starts the iteration together, as after a synchronous step
  const double start = coll::now_seconds();
  for (std::size_t k = 0; k < table.tensors.size(); ++k) {
    const double begin = coll::now_seconds();
    comm.allreduce(grads + offsets[k] * elem, reduced + offsets[k] * elem,
                   table.tensors[k].elements, sweep.type, sweep.op, algorithm);
    times[k + 1] = coll::now_seconds() - begin;
  }
  times[0] = coll::now_seconds() - start;
  max_over_ranks(comm, times);
  return times;
}

void print_per_layer(const ModelTable& table, const std::vector<IterationTimes>& iterations,
                     std::size_t elem, coll::tools::JsonWriter& json) {
  std::printf("#\n# per tensor (backward order), median over iterations of the slowest rank\n");
  std::printf("#%5s %-36s %-8s %12s %12s %10s %8s\n", "index", "layer", "tensor", "elements",
              "bytes", "time(us)", "algbw");
  json.begin_array("per_tensor");
  for (std::size_t k = 0; k < table.tensors.size(); ++k) {
    std::vector<double> samples;
    for (const auto& times : iterations) samples.push_back(times[k + 1]);
    const double seconds = median(samples);
    const auto& tensor = table.tensors[k];
    const double bytes = double(tensor.elements * elem);
    std::printf(" %5zu %-36s %-8s %12zu %12.0f %10.1f %8.3f\n", k, tensor.layer.c_str(),
                tensor.name.c_str(), tensor.elements, bytes, seconds * 1e6,
                seconds > 0 ? bytes / seconds / 1e9 : 0.0);
    json.begin_object()
        .field("index", k)
        .field("layer", tensor.layer)
        .field("tensor", tensor.name)
        .field("elements", tensor.elements)
        .field("bytes", tensor.elements * elem)
        .field("median_us", seconds * 1e6)
        .end_object();
  }
  json.end_array();
}

}  // namespace

std::size_t run_model_replay(coll::Comm& comm, const ReplayOptions& replay,
                             const SweepOptions& sweep) {
  const ModelTable table = load_model_table(replay.models_dir, replay.model, replay.model_variant);
  const bool lead = comm.rank() == 0;
  const std::size_t elem = coll::dtype_size(sweep.type);
  // One flat gradient buffer and one result buffer, tensors at consecutive offsets.
  const std::vector<std::size_t> offsets = table.flat_offsets();
  const std::size_t total = table.total_elements();
  coll::BufferPool pool(sweep.buffers);
  auto grads = pool.acquire(total * elem + 64);
  auto reduced = pool.acquire(total * elem + 64);
  fill_input(sweep.type, sweep.op, comm.rank(), grads.data(), total);

  Progress progress("replay " + replay.model, std::size_t(sweep.warmup + sweep.iterations), lead);
  std::vector<IterationTimes> iterations;
  for (int i = 0; i < sweep.warmup + sweep.iterations; ++i) {
    auto times = replay_once(comm, sweep, table, offsets, grads.data(), reduced.data());
    if (i >= sweep.warmup) iterations.push_back(std::move(times));
    progress.update(std::size_t(i + 1));
  }
  const std::size_t wrong =
      sweep.check ? sum_over_ranks(
                        comm, count_wrong(sweep.type, sweep.op, comm.size(), reduced.data(), total))
                  : 0;
  if (!lead) return wrong;
  progress.clear();

  std::vector<double> per_iteration;
  for (const auto& times : iterations) per_iteration.push_back(times[0]);
  const double med = median(per_iteration);
  const double fastest = *std::min_element(per_iteration.begin(), per_iteration.end());
  const double slowest = *std::max_element(per_iteration.begin(), per_iteration.end());
  const std::size_t bytes = total * elem;
  const std::string algorithm = sweep.algorithms.empty() ? "default" : sweep.algorithms.front();

  std::printf("# collbench model-gradient replay: %s (%s)\n", table.model.c_str(),
              table.variant.c_str());
  std::printf("# source: %s\n", table.source.c_str());
  std::printf("# %s\n", comm.describe().c_str());
  std::printf(
      "# %d ranks on %d node(s), algorithm %s, fusion none (one all-reduce per tensor), "
      "%s %s\n",
      comm.size(), comm.num_nodes(), algorithm.c_str(),
      std::string(coll::dtype_name(sweep.type)).c_str(),
      std::string(coll::op_name(sweep.op)).c_str());
  std::printf("# iterations %d (after %d warm-up), time = slowest rank per iteration\n",
              sweep.iterations, sweep.warmup);
  std::printf("tensors              %zu\n", table.tensors.size());
  std::printf("elements             %zu\n", total);
  std::printf("bytes                %zu\n", bytes);
  std::printf("aggregation time     %.3f ms per iteration (median; min %.3f, max %.3f)\n",
              med * 1e3, fastest * 1e3, slowest * 1e3);
  std::printf("algbw                %.3f GB/s (bytes / median time)\n", double(bytes) / med / 1e9);
  std::printf("wrong elements       %zu%s\n", wrong, sweep.check ? "" : " (check disabled)");

  coll::tools::JsonWriter json;
  json.begin_object()
      .field("tool", "collbench")
      .field("mode", "model-gradients")
      .field("model", table.model)
      .field("variant", table.variant)
      .field("source", table.source)
      .field("ranks", comm.size())
      .field("nodes", comm.num_nodes())
      .field("algorithm", algorithm)
      .field("fusion", "none")
      .field("type", coll::dtype_name(sweep.type))
      .field("tensors", table.tensors.size())
      .field("elements", total)
      .field("bytes", bytes)
      .field("median_ms", med * 1e3)
      .field("min_ms", fastest * 1e3)
      .field("max_ms", slowest * 1e3)
      .field("wrong", wrong)
      .field("checked", sweep.check);
  json.begin_array("iteration_ms");
  for (double t : per_iteration) json.element(t * 1e3);
  json.end_array();
  if (replay.per_layer) print_per_layer(table, iterations, elem, json);
  json.end_object();
  if (!sweep.json_path.empty()) json.save(sweep.json_path);
  return wrong;
}

}  // namespace collbench
