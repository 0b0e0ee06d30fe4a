// Reading COLL_* environment variables with validation: a malformed value is an error that
// names the variable, never a silent default.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace coll {

std::optional<std::string> env_string(const char* name);
// Integer in [min, max]; accepts K/M/G suffixes (powers of 1024) when allow_suffix is set.
std::optional<long long> env_integer(const char* name, long long min, long long max,
                                     bool allow_suffix = false);
std::optional<double> env_seconds(const char* name);
// The integer `text` a setting `name` holds (from the environment or a Config), as env_integer
// reads it: throws InvalidArgument "NAME='text' is not an integer in [min, max]".
long long parse_integer_setting(std::string_view name, const std::string& text, long long min,
                                long long max, bool allow_suffix = false);

// Whether an MPI launcher started this process as a rank: Open MPI's mpirun
// (OMPI_COMM_WORLD_RANK) or a PMIx launcher such as Slurm's srun --mpi=pmix (PMIX_RANK).
bool launched_by_mpi();

// Parses "64", "64K", "4M", "1G" (powers of 1024); nullopt on anything else.
std::optional<long long> parse_size(const std::string& text);

}  // namespace coll
