#include "emulator/cluster_clock.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>

#include "coll/clock.hpp"

namespace coll::cluster_clock {
namespace {

std::atomic<int> virtual_users{0};
std::atomic<double> reduction_s_per_byte{0};
thread_local std::int64_t thread_virtual_ns = 0;

}  // namespace

bool is_virtual() {
  return virtual_users.load(std::memory_order_acquire) > 0;
}

std::int64_t virtual_now_ns() {
  return thread_virtual_ns;
}

void advance_to_ns(std::int64_t ns) {
  thread_virtual_ns = std::max(thread_virtual_ns, ns);
}

double now() {
  return is_virtual() ? double(thread_virtual_ns) * 1e-9 : now_seconds();
}

void advance_to(double seconds) {
  if (is_virtual()) advance_to_ns(std::llround(seconds * 1e9));
}

void charge_reduction(std::size_t bytes) {
  if (!is_virtual()) return;
  const double per_byte = reduction_s_per_byte.load(std::memory_order_relaxed);
  thread_virtual_ns += std::llround(double(bytes) * per_byte * 1e9);
}

void sleep_until(double seconds) {
  if (is_virtual()) {
    advance_to(seconds);
    return;
  }
  const double wait = seconds - now_seconds();
  if (wait > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait));
}

VirtualClockUser::VirtualClockUser(double reduction_s_per_byte_in) {
  reduction_s_per_byte.store(reduction_s_per_byte_in, std::memory_order_relaxed);
  virtual_users.fetch_add(1, std::memory_order_acq_rel);
}
VirtualClockUser::~VirtualClockUser() {
  virtual_users.fetch_sub(1, std::memory_order_acq_rel);
}

}  // namespace coll::cluster_clock
