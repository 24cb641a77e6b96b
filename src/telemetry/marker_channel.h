// MarkerChannel: a FIFO that a measured command writes "phase NAME" and "work N" lines to (its
// path goes to the command in $HEADROOM_MARKERS), read on a thread of its own. Bad lines are
// passed to Handlers::warning once each and skipped, never fatal to the command. Thread-safe.
#ifndef HEADROOM_TELEMETRY_MARKER_CHANNEL_H_
#define HEADROOM_TELEMETRY_MARKER_CHANNEL_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "core/result.h"

namespace headroom::telemetry {

class MarkerChannel {
 public:
  struct Handlers {
    std::function<void(const std::string&)> phase;
    std::function<void(double)> work;
    std::function<void(const std::string&)> warning = {};  // a malformed line, on the reader thread
  };

  // Creates the FIFO in a fresh private directory and starts reading it.
  [[nodiscard]] static core::Result<std::unique_ptr<MarkerChannel>> Create(Handlers handlers);
  ~MarkerChannel();  // stops reading, removes the FIFO and its directory

  const std::string& path() const { return path_; }
  // Reads what is left, then stops.
  void Close();

  // Applies one line; returns an error message for a malformed one (empty when fine).
  static std::string Apply(const std::string& line, const Handlers& handlers);

 private:
  MarkerChannel(std::string dir, std::string path, int fd, Handlers handlers);
  void Run();

  std::string dir_;
  std::string path_;
  int fd_;
  Handlers handlers_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace headroom::telemetry

#endif  // HEADROOM_TELEMETRY_MARKER_CHANNEL_H_
