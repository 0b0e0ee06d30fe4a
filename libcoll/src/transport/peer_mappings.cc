#include "transport/peer_mappings.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/log.hpp"

namespace coll {
namespace {

bool same_region(const SharedRegionRef& a, const SharedRegionRef& b) {
  return a.inode == b.inode && a.base == b.base && a.size == b.size;
}

}  // namespace

PeerMappings::~PeerMappings() {
  for (const Mapping& mapping : mappings_) {
    ::munmap(mapping.data, mapping.region.size);
  }
}

const std::byte* PeerMappings::view(int peer, pid_t pid, const SharedRegionRef& region,
                                    std::uint64_t remote, std::size_t bytes) {
  if (region.fd < 0 || remote < region.base || remote - region.base > region.size ||
      bytes > region.base + region.size - remote) {
    return nullptr;
  }
  std::lock_guard lock(mutex_);
  const std::byte* data = nullptr;
  for (auto it = mappings_.begin(); it != mappings_.end(); ++it) {
    if (it->peer == peer && same_region(it->region, region)) {
      data = it->data;
      mappings_.splice(mappings_.begin(), mappings_, it);
      break;
    }
  }
  if (data == nullptr) data = map(peer, pid, region);
  return data == nullptr ? nullptr : data + (remote - region.base);
}

const std::byte* PeerMappings::map(int peer, pid_t pid, const SharedRegionRef& region) {
  if (refused_[static_cast<std::size_t>(peer)]) return nullptr;
  const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(region.fd);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat status {};
  void* mapped = MAP_FAILED;
  std::string failure;
  if (fd < 0) {
    failure = std::strerror(errno);
  } else if (::fstat(fd, &status) != 0 ||
             static_cast<std::uint64_t>(status.st_ino) != region.inode ||
             static_cast<std::uint64_t>(status.st_size) != region.size) {
    failure = "not the region it published";
  } else {
    // Populated now: faulting page by page inside the collective would cost more than the read.
    mapped = ::mmap(nullptr, region.size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (mapped == MAP_FAILED) failure = std::strerror(errno);
  }
  if (fd >= 0) ::close(fd);
  if (mapped == MAP_FAILED) {
    refused_[static_cast<std::size_t>(peer)] = true;
    log_line(LogLevel::Info, me_,
             "cannot map rank " + std::to_string(peer) + "'s shared buffer (" + path + ": " +
                 failure + "); reading it through system calls");
    return nullptr;
  }
  if (log_enabled(LogLevel::Info)) {
    log_line(LogLevel::Info, me_,
             "mapped rank " + std::to_string(peer) + "'s shared buffer of " +
                 std::to_string(region.size) + " bytes");
  }
  mappings_.push_front({peer, region, static_cast<std::byte*>(mapped)});
  if (mappings_.size() > capacity_) {
    ::munmap(mappings_.back().data, mappings_.back().region.size);
    mappings_.pop_back();
  }
  return static_cast<const std::byte*>(mapped);
}

}  // namespace coll
