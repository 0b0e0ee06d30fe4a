// Where a buffer lives. Every buffer passed to an algorithm carries its memory type, so that an
// algorithm that only handles host memory refuses device memory clearly instead of crashing.
#pragma once

#include <string_view>
#include <utility>

namespace coll {

enum class MemoryType { Host, Device };

std::string_view memory_type_name(MemoryType type);  // "host", "device"

// Device for CUDA device memory (managed memory, which the CPU can access, counts as host).
// Asks the CUDA driver only when this process has already loaded it: device memory cannot
// exist otherwise, and a process that never uses CUDA never loads it (nor pays for it).
MemoryType memory_type_of(const void* pointer);
// Both at the cost of one look at the loaded objects (a collective's send and receive buffers).
std::pair<MemoryType, MemoryType> memory_types_of(const void* first, const void* second);

}  // namespace coll
