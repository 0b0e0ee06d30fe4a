// The environment contract: which bootstrap a rank process uses.
#include <string>

#include "bootstrap/bootstrap.hpp"
#include "coll/env.hpp"
#include "coll/error.hpp"

namespace coll {

std::unique_ptr<Bootstrap> bootstrap_from_environment(double timeout_s) {
  if (env_string("COLL_RANK")) {
    const auto size = env_integer("COLL_SIZE", 1, 1 << 20);
    const auto rank = env_integer("COLL_RANK", 0, 1 << 20);
    const auto store = env_string("COLL_STORE");
    const auto token = env_string("COLL_TOKEN");
    if (!size || !store || !token) {
      throw Error(Status::InvalidArgument,
                  "COLL_RANK is set, so COLL_SIZE, COLL_STORE=host:port and COLL_TOKEN must be "
                  "set too");
    }
    return make_store_bootstrap(*store, *token, static_cast<int>(*rank), static_cast<int>(*size),
                                timeout_s);
  }
  if (launched_by_mpi()) return make_mpi_bootstrap(timeout_s);
  return make_single_bootstrap();
}

}  // namespace coll
