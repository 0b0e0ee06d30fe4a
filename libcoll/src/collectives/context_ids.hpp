// Tag contexts of the communicators that share one transport (coll::Comm::split). Messages of
// two communicators must never match each other's receives; the context in every tag keeps
// them apart. A new communicator takes the lowest context that none of its future members
// uses (the union of their masks), as MPI allocates context ids; members of different colors
// may take the same one, since no message ever passes between them.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>

namespace coll {

class ContextIds {
 public:
  using Mask = std::array<std::uint64_t, 4>;  // TagSpace::kMaxContexts bits

  Mask in_use() const;
  void take(unsigned id);
  void release(unsigned id);
  // The lowest context free in `used`; throws InvalidUsage when all are taken.
  static unsigned lowest_free(const Mask& used);

 private:
  mutable std::mutex mutex_;  // communicators may be destroyed on any thread
  Mask used_{1, 0, 0, 0};     // context 0: the communicator the transport was built for
};

}  // namespace coll
