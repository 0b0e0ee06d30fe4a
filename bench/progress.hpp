// A one-line progress indicator on a terminal, shown only for runs longer than a couple of
// seconds and never written into redirected output.
#pragma once

#include <string>

namespace collbench {

class Progress {
 public:
  Progress(std::string label, std::size_t total, bool enabled);
  ~Progress();
  void update(std::size_t done);
  // Erases the progress line (if shown) so that a table row can be printed in its place.
  void clear();

 private:
  std::string label_;
  std::size_t total_;
  bool enabled_;
  bool shown_ = false;
  double started_;
};

}  // namespace collbench
