#include "progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "coll/clock.hpp"
#include "coll/env.hpp"

namespace collbench {

constexpr double kShowAfterSeconds = 2.0;

Progress::Progress(std::string label, std::size_t total, bool enabled)
    : label_(std::move(label)),
      total_(total),
      // Under mpirun stdout is a pseudo-terminal even when the user redirects mpirun's output.
      enabled_(enabled && ::isatty(STDOUT_FILENO) && !coll::launched_by_mpi()),
      started_(coll::now_seconds()) {}

Progress::~Progress() {
  clear();
}

void Progress::clear() {
  if (!shown_) return;
  std::printf("\r\033[K");
  std::fflush(stdout);
  shown_ = false;
}

void Progress::update(std::size_t done) {
  if (!enabled_) return;
  const double elapsed = coll::now_seconds() - started_;
  if (elapsed < kShowAfterSeconds) return;
  shown_ = true;
  std::printf("\r\033[K%s %zu/%zu (%.0f s)", label_.c_str(), done, total_, elapsed);
  std::fflush(stdout);
}

}  // namespace collbench
