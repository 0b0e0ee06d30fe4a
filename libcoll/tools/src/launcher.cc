#include "coll/tools/launcher.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>

#include "bootstrap/store_server.hpp"
#include "bootstrap/wait_record.hpp"
#include "coll/clock.hpp"
#include "coll/env.hpp"
#include "coll/error.hpp"
#include "coll/tools/core_binding.hpp"
#include "coll/tools/stall_diagnosis.hpp"

extern char** environ;

namespace coll::tools {
namespace {

volatile std::sig_atomic_t interrupted_by = 0;
void on_signal(int signal) {
  interrupted_by = signal;
}

struct RankProcess {
  int rank = 0;
  pid_t pid = -1;
  int out = -1;  // pipe from the rank's stdout (ranks other than 0)
  int err = -1;  // pipe from the rank's stderr
  std::string out_partial, err_partial, last_error_line;
  bool running = true;
  int status = 0;
};

std::vector<std::string> rank_environment(int rank, int size, int node, int local_rank,
                                          const StoreServer& store) {
  return environment_with({"COLL_RANK=" + std::to_string(rank), "COLL_SIZE=" + std::to_string(size),
                           "COLL_STORE=" + store.address(), "COLL_TOKEN=" + store.token(),
                           "COLL_NODE=" + std::to_string(node),
                           "COLL_LOCAL_RANK=" + std::to_string(local_rank)});
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (auto& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

// `pin`: the CPUs the rank may run on, or null to leave it to the scheduler.
void spawn(RankProcess& process, const LaunchSpec& spec, std::vector<std::string> env,
           const cpu_set_t* pin) {
  int out[2] = {-1, -1};
  int err[2];
  if (process.rank != 0 && ::pipe2(out, O_CLOEXEC) != 0) throw_system_error("pipe");
  if (::pipe2(err, O_CLOEXEC) != 0) throw_system_error("pipe");
  std::vector<std::string> argv{spec.program};
  argv.insert(argv.end(), spec.args.begin(), spec.args.end());
  auto argv_c = c_strings(argv);
  auto env_c = c_strings(env);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw_system_error("fork");
  if (pid == 0) {
    // Only async-signal-safe calls from here to exec: the parent has threads.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a killed launcher takes its ranks with it
    if (::getppid() != parent) ::_exit(127);
    if (pin != nullptr) ::sched_setaffinity(0, sizeof *pin, pin);
    if (out[1] >= 0) ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    ::execve(argv_c[0], argv_c.data(), env_c.data());
    const int error = errno;
    const char* reason = error == ENOENT    ? ": no such file or directory\n"
                         : error == EACCES  ? ": permission denied\n"
                         : error == ENOEXEC ? ": not an executable format (a script without #!?)\n"
                                            : ": exec failed\n";
    for (const char* part :
         {"launcher: cannot execute ", static_cast<const char*>(argv_c[0]), reason}) {
      [[maybe_unused]] auto ignored = ::write(STDERR_FILENO, part, std::strlen(part));
    }
    ::_exit(127);
  }
  process.pid = pid;
  if (out[1] >= 0) ::close(out[1]);
  ::close(err[1]);
  process.out = out[0];
  process.err = err[0];
  // The launcher never blocks on a rank's output: a process the rank left behind may hold the
  // pipe open without writing.
  for (int fd : {process.out, process.err}) {
    if (fd >= 0) ::fcntl(fd, F_SETFL, O_NONBLOCK);
  }
}

// Forwards complete lines with a rank prefix; keeps the last stderr line for the summary.
void forward(RankProcess& process, int& fd, std::string& partial, std::ostream& sink, bool is_error,
             bool flush_all) {
  char buffer[65536];
  const ssize_t n = fd >= 0 ? ::read(fd, buffer, sizeof buffer) : 0;
  if (n > 0) partial.append(buffer, static_cast<std::size_t>(n));
  if (n == 0 && fd >= 0) {
    ::close(fd);
    fd = -1;
    flush_all = true;
  }
  std::size_t start = 0;
  for (std::size_t end; (end = partial.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string line = partial.substr(start, end - start);
    sink << "[rank " << process.rank << "] " << line << '\n';
    if (is_error && !line.empty()) process.last_error_line = line;
  }
  partial.erase(0, start);
  if (flush_all && !partial.empty()) {
    sink << "[rank " << process.rank << "] " << partial << '\n';
    if (is_error) process.last_error_line = partial;
    partial.clear();
  }
  sink.flush();
}

// Forwards what the ranks' pipes have ready, waiting up to timeout_ms for something; false when
// nothing was.
bool forward_ready(std::vector<RankProcess>& ranks, int timeout_ms) {
  std::vector<pollfd> fds;
  std::vector<std::pair<RankProcess*, bool>> owners;  // (process, is stderr)
  for (auto& process : ranks) {
    if (process.out >= 0) {
      fds.push_back({process.out, POLLIN, 0});
      owners.emplace_back(&process, false);
    }
    if (process.err >= 0) {
      fds.push_back({process.err, POLLIN, 0});
      owners.emplace_back(&process, true);
    }
  }
  if (::poll(fds.data(), fds.size(), timeout_ms) <= 0) return false;
  for (std::size_t i = 0; i < fds.size(); ++i) {
    if (!fds[i].revents) continue;
    RankProcess& process = *owners[i].first;
    if (owners[i].second) {
      forward(process, process.err, process.err_partial, std::cerr, true, false);
    } else {
      forward(process, process.out, process.out_partial, std::cout, false, false);
    }
  }
  return true;
}

// Prints the last unterminated lines and stops reading the rank's pipes.
void close_output(RankProcess& process) {
  int nothing_more = -1;
  forward(process, nothing_more, process.out_partial, std::cout, false, true);
  forward(process, nothing_more, process.err_partial, std::cerr, true, true);
  for (int* fd : {&process.out, &process.err}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

std::string describe_exit(const RankProcess& process) {
  std::string text = "rank " + std::to_string(process.rank);
  if (WIFSIGNALED(process.status)) {
    const int signal = WTERMSIG(process.status);
    text += " was killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  } else {
    text += " exited with status " + std::to_string(WEXITSTATUS(process.status));
    if (!process.last_error_line.empty()) text += ": " + process.last_error_line;
  }
  return text;
}

bool failed(const RankProcess& process) {
  return WIFSIGNALED(process.status) || WEXITSTATUS(process.status) != 0;
}

// Why the job failed, starting with the rank that stalled when the failing rank gave up waiting
// (it blames the peer it waited for, which may be a healthy rank waiting in turn).
std::string failure_reason_of(const RankProcess& failure, const std::vector<RankProcess>& ranks,
                              const StoreServer& store) {
  std::string reason = describe_exit(failure);
  if (WIFSIGNALED(failure.status)) return reason;  // it died: it is the cause
  std::vector<RankWaitState> states(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    states[r].running = ranks[r].running;
    states[r].stopped = ranks[r].running && process_is_stopped(ranks[r].pid);
    if (auto record = store.value(wait_key(static_cast<int>(r)))) {
      states[r].waits_on = waited_peer(*record);
    }
  }
  if (auto stalled = find_stalled_rank(failure.rank, states)) reason = *stalled + ". " + reason;
  return reason;
}

// When some ranks have finished and every rank still running is stopped, the job can only end
// by the launcher's hand (no rank is left to time out): the first stopped rank, named as stalled.
std::optional<std::string> stopped_after_others_finished(const std::vector<RankProcess>& ranks) {
  std::optional<int> stopped;
  bool any_finished = false;
  for (const auto& process : ranks) {
    if (!process.running) {
      any_finished = true;
    } else if (!process_is_stopped(process.pid)) {
      return std::nullopt;
    } else if (!stopped) {
      stopped = process.rank;
    }
  }
  if (!any_finished || !stopped) return std::nullopt;
  return "rank " + std::to_string(*stopped) +
         " stalled: its process is stopped, and the other ranks have finished";
}

}  // namespace

std::vector<std::string> environment_with(const std::vector<std::string>& settings) {
  const auto names = [](const std::string& setting) { return setting.find('=') + 1; };
  std::vector<std::string> result;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const bool replaced = std::any_of(settings.begin(), settings.end(), [&](const auto& setting) {
      return text.compare(0, names(setting), setting, 0, names(setting)) == 0;
    });
    if (!replaced) result.push_back(text);
  }
  result.insert(result.end(), settings.begin(), settings.end());
  return result;
}

bool is_rank_process() {
  return std::getenv("COLL_RANK") != nullptr || coll::launched_by_mpi();
}

std::string own_executable() {
  char path[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<std::size_t>(n)) : std::string();
}

std::vector<int> parse_node_sizes(const std::string& text) {
  std::vector<int> sizes;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    int ranks = 0;
    try {
      std::size_t used = 0;
      ranks = std::stoi(item, &used);
      if (used != item.size()) ranks = 0;
    } catch (const std::exception&) {
    }
    if (ranks < 1 || ranks > 256) {
      throw Error(Status::InvalidArgument,
                  "--node-sizes takes ranks per node in [1, 256] such as 3,2, not '" + text + "'");
    }
    sizes.push_back(ranks);
    if (comma == text.size()) return sizes;
    start = comma + 1;
  }
}

int launch_local(const LaunchSpec& spec) {
  std::vector<int> node_sizes = spec.node_sizes;
  if (node_sizes.empty())
    node_sizes.assign(static_cast<std::size_t>(spec.nodes), spec.ranks_per_node);
  int size = 0;
  for (int ranks : node_sizes) {
    if (ranks < 1) throw Error(Status::InvalidArgument, "every node needs at least one rank");
    size += ranks;
  }
  if (size < 1) throw Error(Status::InvalidArgument, "the launcher needs at least one rank");
  const double grace_s = env_seconds("COLL_LAUNCH_GRACE").value_or(spec.grace_s);
  const RankPinning pinning = RankPinning::from_env();
  StoreServer store("127.0.0.1", 0, make_job_token(), size);
  struct sigaction action {};
  action.sa_handler = on_signal;
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(signal, &action, nullptr);

  std::vector<RankProcess> ranks(static_cast<std::size_t>(size));
  for (int node = 0, r = 0; node < static_cast<int>(node_sizes.size()); ++node) {
    for (int local = 0; local < node_sizes[static_cast<std::size_t>(node)]; ++local, ++r) {
      ranks[r].rank = r;
      spawn(ranks[r], spec, rank_environment(r, size, node, local, store), pinning.core_of(r));
    }
  }

  const RankProcess* first_failure = nullptr;
  std::string failure_reason;
  bool stalled_at_end = false;
  double all_stopped_since = 0;
  double kill_at = 0;
  int running = size;
  while (running > 0) {
    forward_ready(ranks, 50);
    for (auto& process : ranks) {
      if (!process.running || ::waitpid(process.pid, &process.status, WNOHANG) != process.pid) {
        continue;
      }
      process.running = false;
      --running;
      if (failed(process) && first_failure == nullptr && !stalled_at_end) {
        // Read what the rank said before dying, so its message is the one reported.
        forward(process, process.err, process.err_partial, std::cerr, true, true);
        first_failure = &process;
        failure_reason = failure_reason_of(process, ranks, store);
        store.abort_all(failure_reason);
        kill_at = now_seconds() + grace_s;
      }
    }
    if (first_failure == nullptr && kill_at == 0 && running < size) {
      if (const auto stalled = stopped_after_others_finished(ranks); !stalled) {
        all_stopped_since = 0;
      } else if (all_stopped_since == 0) {
        all_stopped_since = now_seconds();
      } else if (now_seconds() - all_stopped_since > grace_s) {
        stalled_at_end = true;
        failure_reason = *stalled;
        store.abort_all(failure_reason);
        kill_at = now_seconds();
      }
    }
    if (interrupted_by != 0 && first_failure == nullptr && kill_at == 0) {
      failure_reason = std::string("launcher interrupted by ") + strsignal(interrupted_by);
      store.abort_all(failure_reason);
      for (auto& process : ranks) {
        if (process.running) ::kill(process.pid, SIGTERM);
      }
      kill_at = now_seconds() + 2;
    }
    if (kill_at != 0 && now_seconds() > kill_at) {
      for (auto& process : ranks) {
        if (process.running) ::kill(process.pid, SIGKILL);
      }
    }
  }
  // Every rank is gone: forward what they wrote, without waiting for pipes that something they
  // left behind still holds open (and may still write to: the draining stops after a second).
  const double stop_draining = now_seconds() + 1;
  while (now_seconds() < stop_draining && forward_ready(ranks, 0)) {
  }
  for (auto& process : ranks) close_output(process);
  if (first_failure != nullptr || stalled_at_end) {
    std::cerr << "launcher: job failed: " << failure_reason << std::endl;
    return first_failure != nullptr && WIFEXITED(first_failure->status)
               ? WEXITSTATUS(first_failure->status)
               : 1;
  }
  if (interrupted_by != 0) {
    std::cerr << "launcher: " << failure_reason << std::endl;
    return 128 + interrupted_by;
  }
  return 0;
}

}  // namespace coll::tools
