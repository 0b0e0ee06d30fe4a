// Private interface between reducer.cc (checks and dispatch on the data type) and the kernel
// families, one per file: native C++ types, float16 and bfloat16.
#pragma once

#include <cstddef>
#include <cstdint>

#include "coll/types.hpp"

// Function multi-versioning: one clone per x86-64 level, chosen once at load time (ifunc). The
// v3 level is AVX2+FMA+F16C, v4 adds AVX-512. Elsewhere the loops are plain (and still
// auto-vectorized for the baseline ISA). Not under ThreadSanitizer: it instruments the ifunc
// resolvers, which the dynamic loader runs while relocating libcoll, before the TSan runtime
// is initialized (from the executable's preinit_array), so every program died before main.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define COLL_TARGET_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define COLL_TARGET_CLONES
#endif

// Kernel bodies must be inlined into the cloned functions to be compiled for their ISA.
#define COLL_ALWAYS_INLINE __attribute__((always_inline))

namespace coll::reduce_detail {

// Integer, float32 and float64 types. `type` must be one of those.
void reduce_native(DataType type, ReduceOp op, void* dst, const void* a, const void* b,
                   std::size_t count);
void average_native(DataType type, void* data, std::size_t count, int divisor);

void reduce_bf16(ReduceOp op, std::uint16_t* dst, const std::uint16_t* a, const std::uint16_t* b,
                 std::size_t count);
void average_bf16(std::uint16_t* data, std::size_t count, int divisor);

// Float16 has hand-written SIMD paths; each one can be forced so that tests cover them all.
enum class Fp16Path { Best, Avx512, F16c, Portable };
bool fp16_path_supported(Fp16Path path);  // by this CPU and this build
void reduce_fp16(ReduceOp op, std::uint16_t* dst, const std::uint16_t* a, const std::uint16_t* b,
                 std::size_t count, Fp16Path path = Fp16Path::Best);
void average_fp16(std::uint16_t* data, std::size_t count, int divisor,
                  Fp16Path path = Fp16Path::Best);

}  // namespace coll::reduce_detail
