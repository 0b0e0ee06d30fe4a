// Where collbench finds the model tables when --models-dir is not given: next to the
// executable, so that an installed collbench and one run from the build tree both find theirs.
#pragma once

#include <string>

namespace collbench {

// <prefix>/share/coll/models when the executable is installed in <prefix>/bin; otherwise (a
// build-tree run) the source tree's bench/models, reached by COLL_MODELS_RELATIVE_DIR from the
// build directory of the executable. Relative lookups only: no source path is baked in.
std::string default_models_dir();

}  // namespace collbench
