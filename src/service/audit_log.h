// AuditLog: the controller's --audit-log, one JSON line per control step, appended, each line
// starting with the calendar time (for people reading it beside other logs). A failed write
// (disk full) is reported once per run of failures and counted by the caller; the next good
// write first ends the partial line a failure may have left. Used by one thread at a time.
#ifndef HEADROOM_SERVICE_AUDIT_LOG_H_
#define HEADROOM_SERVICE_AUDIT_LOG_H_

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "core/time.h"

namespace headroom::service {

class AuditLog {
 public:
  // kInvalidArgument naming the path when it cannot be opened for appending.
  [[nodiscard]] static core::Result<std::unique_ptr<AuditLog>> Open(const std::string& path,
                                                                    const core::Clock* clock);
  // False when the line could not be written.
  bool Write(const nlohmann::ordered_json& record);

 private:
  AuditLog(std::string path, const core::Clock* clock)
      : path_(std::move(path)), clock_(clock), out_(path_, std::ios::app) {}
  std::string path_;
  const core::Clock* clock_;
  std::ofstream out_;
  std::uint64_t lost_ = 0;  // lines lost since the last good write
};

}  // namespace headroom::service

#endif  // HEADROOM_SERVICE_AUDIT_LOG_H_
