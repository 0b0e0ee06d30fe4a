// Writing the cost model's files (calibration, decision table) so that a reader never sees half
// of one: the text goes to a temporary file beside it, which then replaces it.
#pragma once

#include <string>

namespace coll::model {

// Creates the parent directory. Throws coll::Error (SystemError) "cannot write WHAT PATH: ...".
void write_file_atomically(const std::string& path, const std::string& text,
                           const std::string& what);

}  // namespace coll::model
