#include "collectives/context_ids.hpp"

#include <bit>
#include <string>

#include "algorithms/collective.hpp"
#include "coll/error.hpp"

namespace coll {

static_assert(sizeof(ContextIds::Mask) * 8 == TagSpace::kMaxContexts);

ContextIds::Mask ContextIds::in_use() const {
  std::lock_guard lock(mutex_);
  return used_;
}

void ContextIds::take(unsigned id) {
  std::lock_guard lock(mutex_);
  used_[id / 64] |= std::uint64_t{1} << (id % 64);
}

void ContextIds::release(unsigned id) {
  std::lock_guard lock(mutex_);
  used_[id / 64] &= ~(std::uint64_t{1} << (id % 64));
}

unsigned ContextIds::lowest_free(const Mask& used) {
  for (unsigned word = 0; word < used.size(); ++word) {
    if (~used[word] != 0) return word * 64 + static_cast<unsigned>(std::countr_one(used[word]));
  }
  throw Error(Status::InvalidUsage,
              "split: " + std::to_string(TagSpace::kMaxContexts) +
                  " communicators already share this transport; destroy some first");
}

}  // namespace coll
