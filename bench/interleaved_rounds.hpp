// Several algorithms measured against each other: each size in rounds, every round running them
// in turn, in reverse order every other round, so that a burst of load on the machine hits all
// of them alike; the median of the rounds counts (collbench's sweeps and --tune).
#pragma once

#include <cstddef>

namespace collbench {

// Rounds per size unless --rounds says otherwise.
inline constexpr int kDefaultRounds = 5;

// Calls measure(a) for every algorithm index a below `algorithms`, `rounds` times over.
template <typename Measure>
void interleaved_rounds(int rounds, std::size_t algorithms, Measure&& measure) {
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t i = 0; i < algorithms; ++i) {
      measure(round % 2 == 0 ? i : algorithms - 1 - i);
    }
  }
}

}  // namespace collbench
