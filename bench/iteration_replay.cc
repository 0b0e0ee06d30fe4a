#include "iteration_replay.hpp"

#include <cstdio>

#include "coll/buffer_pool.hpp"
#include "coll/tools/chrome_trace.hpp"
#include "coll/tools/json_writer.hpp"
#include "emulator/cluster_clock.hpp"
#include "exact_data.hpp"
#include "explain.hpp"
#include "rank_stats.hpp"
#include "study/compute_profile.hpp"
#include "study/fusion_plan.hpp"
#include "study/iteration_sim.hpp"
#include "study/model_table.hpp"

namespace collbench {

using coll::study::load_model_table;
using coll::study::ModelTable;

namespace {

using coll::study::Bucket;
using coll::study::ComputeProfile;

struct Iteration {
  double iteration_s = 0;
  double backward_s = 0;
  double comm_s = 0;                   // sum of the buckets' all-reduce durations
  std::vector<double> start_s, end_s;  // per bucket, from the iteration's start
};

ComputeProfile load_profile(const ReplayOptions& replay, const ModelTable& table) {
  std::vector<coll::study::TensorFlops> flops;
  std::vector<std::string> layers;
  for (const auto& tensor : table.tensors) {
    flops.push_back({tensor.layer, tensor.forward_flops});
    layers.push_back(tensor.layer);
  }
  const ComputeProfile base = replay.compute_profile == "p40"
                                  ? coll::study::p40_preset(table.model, flops)
                                  : coll::study::load_profile_csv(replay.compute_profile, layers);
  return coll::study::scale_profile(base, replay.compute_scale);
}

Iteration run_once(coll::Comm& comm, const ReplayOptions& replay, const SweepOptions& sweep,
                   const std::vector<Bucket>& buckets, const std::vector<double>& ready,
                   const std::vector<std::size_t>& offsets, std::byte* grads, std::byte* reduced) {
  const std::size_t elem = coll::dtype_size(sweep.type);
  const std::string algorithm = sweep.algorithms.empty() ? "" : sweep.algorithms.front();
  std::vector<coll::Request> requests;
  auto enqueue = [&](const Bucket& bucket) {
    const std::size_t offset = offsets[bucket.first] * elem;
    requests.push_back(comm.allreduce_async(grads + offset, reduced + offset, bucket.bytes / elem,
                                            sweep.type, sweep.op, algorithm, bucket.first + 1));
  };
  // The emulated cluster's time: on the virtual clock backward advances it without sleeping.
  namespace clock = coll::cluster_clock;
  comm.barrier();
  const double start = clock::now();
  std::size_t next = 0;
  for (std::size_t k = 0; k < ready.size(); ++k) {
    clock::sleep_until(start + ready[k]);  // layer k's backward
    while (replay.overlap && next < buckets.size() && buckets[next].last == k + 1) {
      enqueue(buckets[next++]);
    }
  }
  Iteration result;
  result.backward_s = clock::now() - start;
  while (next < buckets.size()) enqueue(buckets[next++]);
  for (auto& request : requests) request.wait();
  result.iteration_s = clock::now() - start;
  for (const auto& request : requests) {
    result.start_s.push_back(request.started_at() - start);
    result.end_s.push_back(request.finished_at() - start);
    result.comm_s += request.finished_at() - request.started_at();
  }
  return result;
}

// Rank 0 collects every rank's bucket timings of one iteration for the trace.
std::vector<std::vector<double>> gather_timings(coll::Comm& comm, const Iteration& mine) {
  std::vector<double> flat = mine.start_s;
  flat.insert(flat.end(), mine.end_s.begin(), mine.end_s.end());
  std::vector<std::vector<double>> all;
  if (comm.rank() != 0) {
    comm.send(flat.data(), flat.size() * sizeof(double), 0, 1);
    return all;
  }
  all.push_back(flat);
  for (int peer = 1; peer < comm.size(); ++peer) {
    all.emplace_back(flat.size());
    comm.recv(all.back().data(), flat.size() * sizeof(double), peer, 1);
  }
  return all;
}

void write_trace(const ReplayOptions& replay, const ComputeProfile& profile,
                 const ModelTable& table, const std::vector<Bucket>& buckets,
                 const std::vector<std::vector<double>>& timings) {
  std::vector<coll::tools::TraceEvent> events;
  const auto ready = profile.ready_s();
  for (int rank = 0; rank < static_cast<int>(timings.size()); ++rank) {
    double previous = 0;
    for (std::size_t k = 0; k < ready.size(); ++k) {
      if (ready[k] > previous) {
        events.push_back(
            {rank, "backward", table.tensors[k].layer, previous, ready[k] - previous, {}});
      }
      previous = std::max(previous, ready[k]);
    }
    const auto& flat = timings[static_cast<std::size_t>(rank)];
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      const double begin = flat[b], end = flat[buckets.size() + b];
      events.push_back({rank,
                        "all-reduce",
                        "bucket " + std::to_string(b),
                        begin,
                        end - begin,
                        {{"bytes", double(buckets[b].bytes)},
                         {"tensors", double(buckets[b].last - buckets[b].first)},
                         {"first tensor", table.tensors[buckets[b].first].layer}}});
    }
  }
  coll::tools::write_chrome_trace(replay.trace_path, events);
}

}  // namespace

std::size_t run_iteration_replay(coll::Comm& comm, const ReplayOptions& replay,
                                 const SweepOptions& sweep) {
  const ModelTable table = load_model_table(replay.models_dir, replay.model, replay.model_variant);
  const std::size_t elem = coll::dtype_size(sweep.type);
  std::vector<std::size_t> offsets, tensor_bytes;
  std::vector<std::string> layers;
  std::size_t total = 0;
  for (const auto& tensor : table.tensors) {
    offsets.push_back(total);
    tensor_bytes.push_back(tensor.elements * elem);
    layers.push_back(tensor.layer);
    total += tensor.elements;
  }
  const ComputeProfile profile = load_profile(replay, table);
  const std::string algorithm = sweep.algorithms.empty() ? "" : sweep.algorithms.front();
  // The model's time (or lead), in seconds, of this run's algorithm at `bytes`; 0 where it has no
  // formula.
  auto modelled_s = [&](std::size_t bytes, double ModelPrediction::*field) {
    const auto predicted =
        predict_for(comm, algorithm, bytes, sweep.buffers == coll::Sharing::WithPeers);
    return predicted ? (*predicted).*field * 1e-6 : 0.0;
  };
  const coll::study::AllreduceCost cost = [&](std::size_t bytes) {
    return modelled_s(bytes, &ModelPrediction::time_us);
  };
  const coll::study::AllreduceLead lead = [&](std::size_t bytes) {
    return modelled_s(bytes, &ModelPrediction::lead_us);
  };
  const auto plan = coll::study::make_plan(coll::study::parse_policy(replay.fusion), tensor_bytes,
                                           profile, cost, layers);
  // Tensors sit back to back in one gradient buffer, so every bucket is contiguous: fused
  // all-reduces run in place on it, with no packing.
  coll::BufferPool pool(sweep.buffers);
  auto grads = pool.acquire(total * elem + 64);
  auto reduced = pool.acquire(total * elem + 64);
  fill_input(sweep.type, sweep.op, comm.rank(), grads.data(), total);

  const auto ready = profile.ready_s();
  std::vector<Iteration> iterations;
  for (int i = 0; i < sweep.warmup + sweep.iterations; ++i) {
    Iteration it =
        run_once(comm, replay, sweep, plan.buckets, ready, offsets, grads.data(), reduced.data());
    // Exposed communication is what remains after the slowest rank's backward: a rank whose
    // emulated compute woke late delays the others' all-reduces, which is compute, not
    // communication (the model's ranks are identical).
    it.iteration_s = max_over_ranks(comm, it.iteration_s);
    it.backward_s = max_over_ranks(comm, it.backward_s);
    // So is communication: one rank's sum depends on the order its messages took on shared
    // links, which the emulated links decide by arrival on this machine.
    it.comm_s = max_over_ranks(comm, it.comm_s);
    if (i >= sweep.warmup) iterations.push_back(std::move(it));
  }
  const std::size_t wrong =
      sweep.check ? sum_over_ranks(
                        comm, count_wrong(sweep.type, sweep.op, comm.size(), reduced.data(), total))
                  : 0;
  const auto timings = replay.trace_path.empty() ? std::vector<std::vector<double>>{}
                                                 : gather_timings(comm, iterations.back());
  if (comm.rank() != 0) return wrong;

  std::vector<double> iteration_s, comm_s, backward_s;
  for (const auto& it : iterations) {
    iteration_s.push_back(it.iteration_s);
    comm_s.push_back(it.comm_s);
    backward_s.push_back(it.backward_s);
  }
  const double measured = median(iteration_s), backward = median(backward_s);
  const double communication = median(comm_s);
  const double exposed = std::max(0.0, measured - backward);
  const auto simulated = replay.overlap
                             ? coll::study::simulate_wfbp(plan.buckets, profile, cost, lead)
                             : coll::study::simulate_no_overlap(plan.buckets, profile, cost, lead);
  auto percent = [](double model, double real) {
    return real > 0 ? (model - real) / real * 100 : 0;
  };

  std::printf("# collbench training-iteration replay: %s (%s), %d ranks on %d node(s)\n",
              table.model.c_str(), table.variant.c_str(), comm.size(), comm.num_nodes());
  std::printf("# compute profile: %s\n", profile.source.c_str());
  std::printf("# fusion %s: %zu buckets%s%s; overlap %s; algorithm %s\n", plan.policy.c_str(),
              plan.buckets.size(), plan.note.empty() ? "" : " - ", plan.note.c_str(),
              replay.overlap ? "on (WFBP: each bucket starts when its last gradient is ready)"
                             : "off (all after backward)",
              algorithm.empty() ? "default" : algorithm.c_str());
  std::printf(
      "# iterations %d (after %d warm-up); medians; iteration, backward and communication = "
      "slowest rank's\n",
      sweep.iterations, sweep.warmup);
  std::printf("#%-24s %12s %12s %8s\n", "", "measured", "model", "error");
  std::printf(" %-24s %9.3f ms %9.3f ms\n", "backward (compute)", backward * 1e3,
              simulated.backward_s * 1e3);
  std::printf(" %-24s %9.3f ms %9.3f ms %7.0f%%\n", "iteration", measured * 1e3,
              simulated.iteration_s * 1e3, percent(simulated.iteration_s, measured));
  std::printf(" %-24s %9.3f ms %9.3f ms %7.0f%%\n", "communication (sum)", communication * 1e3,
              simulated.comm_s * 1e3, percent(simulated.comm_s, communication));
  std::printf(" %-24s %9.3f ms %9.3f ms %7.0f%%\n", "exposed communication", exposed * 1e3,
              simulated.exposed_s * 1e3, percent(simulated.exposed_s, exposed));
  std::printf(" %-24s %9.1f %% %9.1f %%\n", "hidden fraction",
              communication > 0 ? (1 - exposed / communication) * 100 : 100.0,
              simulated.hidden_fraction * 100);
  std::printf("wrong elements       %zu%s\n", wrong, sweep.check ? "" : " (check disabled)");

  const Iteration& last = iterations.back();
  coll::tools::JsonWriter json;
  json.begin_object()
      .field("tool", "collbench")
      .field("mode", "iteration-replay")
      .field("model", table.model)
      .field("variant", table.variant)
      .field("ranks", comm.size())
      .field("nodes", comm.num_nodes())
      .field("fusion", plan.policy)
      .field("overlap", replay.overlap)
      .field("compute_profile", profile.source)
      .field("backward_ms", backward * 1e3)
      .field("iteration_ms", measured * 1e3)
      .field("communication_ms", communication * 1e3)
      .field("exposed_ms", exposed * 1e3)
      .field("model_iteration_ms", simulated.iteration_s * 1e3)
      .field("model_exposed_ms", simulated.exposed_s * 1e3)
      .field("wrong", wrong);
  if (replay.per_layer) {
    std::printf("#\n# buckets of the last iteration (rank 0), ms from the iteration's start\n");
    std::printf("#%6s %8s %12s %10s %10s %10s\n", "bucket", "tensors", "bytes", "ready", "start",
                "end");
  }
  json.begin_array("buckets");
  for (std::size_t b = 0; b < plan.buckets.size(); ++b) {
    const double ready_ms = ready[plan.buckets[b].last - 1] * 1e3;
    if (replay.per_layer) {
      std::printf(" %6zu %8zu %12zu %10.3f %10.3f %10.3f\n", b,
                  plan.buckets[b].last - plan.buckets[b].first, plan.buckets[b].bytes, ready_ms,
                  last.start_s[b] * 1e3, last.end_s[b] * 1e3);
    }
    json.begin_object()
        .field("bytes", plan.buckets[b].bytes)
        .field("ready_ms", ready_ms)
        .field("start_ms", last.start_s[b] * 1e3)
        .field("end_ms", last.end_s[b] * 1e3)
        .end_object();
  }
  json.end_array().end_object();
  if (!sweep.json_path.empty()) json.save(sweep.json_path);
  if (!replay.trace_path.empty()) {
    write_trace(replay, profile, table, plan.buckets, timings);
    std::printf("# trace written to %s (open in chrome://tracing or ui.perfetto.dev)\n",
                replay.trace_path.c_str());
  }
  return wrong;
}

}  // namespace collbench
