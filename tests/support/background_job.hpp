// A job started in the background for fault injection: its own process group (so that whatever
// it leaves behind can be found, and cleaned up), output to a file, its ranks found by the
// COLL_RANK in their environment.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace coll::testing {

class BackgroundJob {
 public:
  // Runs argv with `extra_env` ("NAME=value") added to this process's environment.
  BackgroundJob(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                std::string output_path)
      : output_path_(std::move(output_path)) {
    std::vector<std::string> env(extra_env);
    for (char** entry = environ; *entry != nullptr; ++entry) env.emplace_back(*entry);
    std::vector<char*> argv_c, env_c;
    for (const auto& arg : argv) argv_c.push_back(const_cast<char*>(arg.c_str()));
    for (const auto& entry : env) env_c.push_back(const_cast<char*>(entry.c_str()));
    argv_c.push_back(nullptr);
    env_c.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output_path_.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
    if (posix_spawn(&pid_, argv_c[0], &actions, &attributes, argv_c.data(), env_c.data()) != 0) {
      pid_ = -1;
    }
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    started_ = std::chrono::steady_clock::now();
  }

  // Whatever is left of the group is killed (stopped processes too).
  ~BackgroundJob() {
    if (pid_ <= 0) return;
    ::kill(-pid_, SIGKILL);
    if (!reaped_) ::waitpid(pid_, &status_, 0);
  }

  BackgroundJob(const BackgroundJob&) = delete;
  BackgroundJob& operator=(const BackgroundJob&) = delete;

  bool started() const { return pid_ > 0; }

  std::string output() const {
    std::ifstream file(output_path_);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }

  // Polls the output for `text`; false once `limit_s` seconds have passed or the job ended.
  bool wait_for_output(const std::string& text, double limit_s) {
    while (seconds_since(started_) < limit_s) {
      if (output().find(text) != std::string::npos) return true;
      if (exited()) return output().find(text) != std::string::npos;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  // Waits up to `limit_s` seconds for the job to exit; true when it did.
  bool wait(double limit_s) {
    const auto start = std::chrono::steady_clock::now();
    while (!exited()) {
      if (seconds_since(start) >= limit_s) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }

  bool exited() {
    if (!reaped_ && ::waitpid(pid_, &status_, WNOHANG) == pid_) reaped_ = true;
    return reaped_;
  }
  // The exit status, or 128 + signal.
  int exit_code() const {
    return WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
  }

  // The process of rank `rank` among the job's processes (0 when there is none).
  pid_t rank_pid(int rank) const {
    for (pid_t pid : group_members()) {
      std::ifstream file("/proc/" + std::to_string(pid) + "/environ");
      std::string entry;
      while (std::getline(file, entry, '\0')) {
        if (entry == "COLL_RANK=" + std::to_string(rank)) return pid;
      }
    }
    return 0;
  }

  // Processes still running in the job's process group (the job itself and zombies, already
  // dead, excluded).
  std::vector<pid_t> group_members() const {
    std::vector<pid_t> members;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      const std::string name = entry.path().filename();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      const pid_t pid = std::stoi(name);
      if (pid == pid_ || ::getpgid(pid) != pid_) continue;
      std::ifstream stat("/proc/" + name + "/stat");
      std::string field;
      stat >> field >> field >> field;  // pid, (name): process names here have no spaces
      if (field != "Z") members.push_back(pid);
    }
    return members;
  }

 private:
  static double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  std::string output_path_;
  pid_t pid_ = -1;
  int status_ = 0;
  bool reaped_ = false;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace coll::testing
