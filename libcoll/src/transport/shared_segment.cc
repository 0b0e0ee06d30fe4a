#include "transport/shared_segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <utility>

#include "bootstrap/bootstrap.hpp"

namespace coll {

SharedSegment SharedSegment::map_per_group(Bootstrap& bootstrap,
                                           const std::vector<int>& group_of_rank,
                                           const std::string& purpose, std::size_t bytes) {
  const int me = bootstrap.rank();
  int first = 0;  // of this rank's group: it creates the segment
  while (group_of_rank[first] != group_of_rank[me]) ++first;
  const bool creator = first == me;
  SharedSegment segment;
  std::string name;
  int fd = -1;
  const auto failed = [&](const char* what) {
    segment.failure_ = std::string(what) + " " + name + ": " + std::strerror(errno);
  };
  if (creator) {  // created before its name is published, so that no rank opens it too early
    name = "/coll-" + purpose + "-" + std::to_string(::getpid()) + "-" +
           std::to_string(std::random_device{}());
    fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
      failed("shm_open");
    } else if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
      failed("ftruncate");
      ::close(fd);
      ::shm_unlink(name.c_str());  // no rank will open it: it must not outlive the job
      fd = -1;
    }
  }
  name = bootstrap.allgather(purpose + "/name", fd >= 0 ? name : "")[first];
  if (!creator && !name.empty()) {
    fd = ::shm_open(name.c_str(), O_RDWR, 0600);
    if (fd < 0) failed("shm_open");
  }
  if (fd >= 0) {
    void* memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (memory == MAP_FAILED) {
      failed("mmap");
    } else {
      segment.base_ = memory;
      segment.bytes_ = bytes;
    }
    ::close(fd);
  } else if (segment.failure_.empty()) {
    segment.failure_ = "rank " + std::to_string(first) + " could not create it";
  }
  bootstrap.barrier(purpose + "/mapped");
  if (creator && !name.empty()) ::shm_unlink(name.c_str());
  return segment;
}

SharedSegment& SharedSegment::operator=(SharedSegment&& other) noexcept {
  std::swap(base_, other.base_);
  std::swap(bytes_, other.bytes_);
  std::swap(failure_, other.failure_);
  return *this;
}

SharedSegment::~SharedSegment() {
  if (base_ != nullptr) ::munmap(base_, bytes_);
}

}  // namespace coll
