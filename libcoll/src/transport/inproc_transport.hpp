// Ranks as threads of one process: a mailbox per rank matches tagged sends to receives by
// (sender, tag), in order. Lets algorithm tests and emulation run many ranks cheaply; the UCX
// transport and process-based tests remain the real thing. Registered as COLL_TRANSPORT=inproc
// (every rank a thread of the process of rank 0, bootstrapped as usual) and made directly by
// tests through InprocWorld.
#pragma once

#include <memory>

#include "transport/node_resources.hpp"
#include "transport/transport.hpp"

namespace coll {

class Bootstrap;

// The ranks' shared mailboxes. Each transport keeps its world alive.
class InprocWorld : public std::enable_shared_from_this<InprocWorld> {
 public:
  static std::shared_ptr<InprocWorld> create(int size);
  ~InprocWorld();
  int size() const;

  // Rank `rank`'s transport; `bootstrap` (may be null) carries the job's abort message.
  std::unique_ptr<Transport> make_transport(int rank, const TransportOptions& options,
                                            Bootstrap* bootstrap = nullptr);
  // What rank `rank` shares with the others, all on one node: their memory, read directly
  // (unless COLL_PEER_MEMORY=0), and node slots in the world's memory (unless COLL_NODE_SLOTS=0).
  NodeResources node_resources(int rank) const;

  struct Mailbox;

 private:
  explicit InprocWorld(int size);
  std::unique_ptr<Mailbox[]> mailboxes_;
  int size_;
  bool peer_memory_enabled_;
  std::shared_ptr<void> slots_memory_;
};

}  // namespace coll
