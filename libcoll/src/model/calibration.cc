#include "coll/model/calibration.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string_view>
#include <vector>

#include "coll/buffer_pool.hpp"
#include "coll/clock.hpp"
#include "coll/env.hpp"
#include "coll/model/preset.hpp"
#include "model/atomic_file.hpp"
#include "model/parameter_file.hpp"
#include "reduce/reducer.hpp"

namespace coll::model {
namespace {

constexpr const char* kFormat = "libcoll-calibration 1";
constexpr std::uint32_t kTag = 0xCA11B000u;
constexpr std::string_view kKeys[] = {"format",           "host",
                                      "intra.alpha_s",    "intra.beta_s_per_byte",
                                      "inter.alpha_s",    "inter.beta_s_per_byte",
                                      "gamma_s_per_byte", "source"};

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Median one-way time (half a round trip) of `bytes` between rank 0 and `peer`; the peer echoes.
double ping_pong(Comm& comm, int peer, std::size_t bytes, int repeats, int warmup,
                 std::byte* buffer) {
  const bool initiator = comm.rank() == 0;
  std::vector<double> times;
  for (int i = 0; i < warmup + repeats; ++i) {
    if (initiator) {
      const double start = now_seconds();
      comm.send(buffer, bytes, peer, kTag);
      comm.recv(buffer, bytes, peer, kTag + 1);
      if (i >= warmup) times.push_back((now_seconds() - start) / 2);
    } else {
      comm.recv(buffer, bytes, 0, kTag);
      comm.send(buffer, bytes, 0, kTag + 1);
    }
  }
  return initiator ? median_of(times) : 0.0;
}

// Fits one link class between rank 0 and `peer`; every rank calls it (the others wait).
LinkParams measure_link(Comm& comm, int peer, const CalibrationOptions& options,
                        std::byte* buffer) {
  LinkParams link;
  if (comm.rank() == 0 || comm.rank() == peer) {
    const double small =
        ping_pong(comm, peer, options.small_bytes, options.small_repeats, options.warmup, buffer);
    const double large =
        ping_pong(comm, peer, options.large_bytes, options.large_repeats, options.warmup, buffer);
    const double span = double(options.large_bytes - options.small_bytes);
    link.beta_s_per_byte = std::max(1e-15, (large - small) / span);
    link.alpha_s = std::max(1e-9, small - double(options.small_bytes) * link.beta_s_per_byte);
  }
  comm.barrier();
  return link;
}

double measure_gamma(const CalibrationOptions& options) {
  BufferPool pool;
  auto a = pool.acquire(options.reduce_bytes);
  auto b = pool.acquire(options.reduce_bytes);
  const std::size_t count = options.reduce_bytes / sizeof(float);
  std::fill_n(reinterpret_cast<float*>(b.data()), count, 1.0f);
  std::vector<double> times;
  for (int i = 0; i < 6; ++i) {
    const double start = now_seconds();
    reduce(DataType::Float32, ReduceOp::Sum, a.data(), a.data(), b.data(), count);
    if (i > 0) times.push_back(now_seconds() - start);  // the first is a warm-up
  }
  return median_of(times) / double(count * sizeof(float));
}

std::string format_number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

}  // namespace

std::string this_host() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

std::string calibration_path() {
  if (auto path = env_string("COLL_CALIBRATION_FILE")) return *path;
  const auto home = env_string("HOME");
  return (home ? *home : std::string(".")) + "/.cache/libcoll/calibration.txt";
}

Calibration calibrate(Comm& comm, const CalibrationOptions& options) {
  const auto& nodes = comm.node_of_rank();
  int same = -1, other = -1;
  for (int r = 1; r < comm.size(); ++r) {
    const bool together = nodes[static_cast<std::size_t>(r)] == nodes[0];
    if (together && same < 0) same = r;
    if (!together && other < 0) other = r;
  }
  // A class this job cannot measure keeps this host's previous calibration, else the preset.
  Calibration result{*find_preset("this-vm"), this_host()};
  std::string kept = "preset this-vm";
  try {
    const auto previous = load_calibration(calibration_path());
    if (previous && previous->host == result.host) {
      result.params = previous->params;
      kept = "the previous calibration";
    }
  } catch (const Error&) {  // a malformed old file is about to be replaced
  }
  BufferPool pool;
  auto buffer = pool.acquire(std::max(options.large_bytes, options.small_bytes));
  std::string intra = "intra from " + kept + " (no two ranks share a node)";
  std::string inter = "inter from " + kept + " (one node)";
  comm.barrier();
  if (same > 0) {
    result.params.intra = measure_link(comm, same, options, buffer.data());
    intra = "intra measured ranks 0-" + std::to_string(same);
  }
  if (other > 0) {
    result.params.inter = measure_link(comm, other, options, buffer.data());
    inter = "inter measured ranks 0-" + std::to_string(other);
  }
  if (comm.rank() == 0) result.params.gamma_s_per_byte = measure_gamma(options);
  comm.barrier();
  result.params.source = intra + "; " + inter + "; gamma measured (float sum, " +
                         std::to_string(options.reduce_bytes >> 20) + " MiB)";
  return result;
}

void save_calibration(const Calibration& calibration, const std::string& path) {
  const CostParams& p = calibration.params;
  std::ostringstream text;
  text << "# libcoll cost-model calibration, written by collbench --calibrate\n"
       << "format = " << kFormat << "\n"
       << "host = " << calibration.host << "\n"
       << "intra.alpha_s = " << format_number(p.intra.alpha_s) << "\n"
       << "intra.beta_s_per_byte = " << format_number(p.intra.beta_s_per_byte) << "\n"
       << "inter.alpha_s = " << format_number(p.inter.alpha_s) << "\n"
       << "inter.beta_s_per_byte = " << format_number(p.inter.beta_s_per_byte) << "\n"
       << "gamma_s_per_byte = " << format_number(p.gamma_s_per_byte) << "\n"
       << "source = " << p.source << "\n";
  write_file_atomically(path, text.str(), "calibration file");
}

std::optional<Calibration> load_calibration(const std::string& path) {
  const auto file =
      ParameterFile::read(path, {std::begin(kKeys), std::end(kKeys)}, "calibration file",
                          "; rerun `collbench --calibrate` or remove the file");
  if (!file) return std::nullopt;
  if (file->text("format") != kFormat) {
    file->fail(0, "format is '" + file->text("format") + "', expected '" + kFormat + "'");
  }
  Calibration calibration;
  calibration.host = file->text("host");
  CostParams& p = calibration.params;
  p.intra = {file->positive("intra.alpha_s"), file->positive("intra.beta_s_per_byte")};
  p.inter = {file->positive("inter.alpha_s"), file->positive("inter.beta_s_per_byte")};
  p.gamma_s_per_byte = file->positive("gamma_s_per_byte");
  const std::string note = file->text("source");
  p.source = "calibration " + path + " (host " + calibration.host +
             (note.empty() ? "" : "; " + note) + ")";
  return calibration;
}

}  // namespace coll::model
