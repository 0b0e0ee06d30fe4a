#include "algorithms/pipeline.hpp"

namespace coll {

Segmentation::Segmentation(std::size_t longest, std::size_t wanted,
                           std::size_t messages_per_segment) {
  elems_ = std::max<std::size_t>(1, std::min(wanted, longest));
  const std::size_t limit = TagSpace::kMaxMessages / std::max<std::size_t>(1, messages_per_segment);
  if (segments_of(longest) > limit) elems_ = (longest + limit - 1) / limit;
  segments_ = segments_of(longest);
}

}  // namespace coll
