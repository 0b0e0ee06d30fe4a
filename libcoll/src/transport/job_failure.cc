#include "transport/job_failure.hpp"

#include "coll/error.hpp"

namespace coll {

void fail_everywhere(Transport& transport, const std::string& reason) {
  throw Error(Status::InvalidUsage, transport.fail_job(reason));
}

}  // namespace coll
