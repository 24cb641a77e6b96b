#include "service/audit_log.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace headroom::service {

core::Result<std::unique_ptr<AuditLog>> AuditLog::Open(const std::string& path,
                                                       const core::Clock* clock) {
  auto log = std::unique_ptr<AuditLog>(new AuditLog(path, clock));
  if (!log->out_) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--audit-log {}: cannot open for appending", path)));
  }
  return log;
}

bool AuditLog::Write(const nlohmann::ordered_json& record) {
  nlohmann::ordered_json line = {
      {"time", fmt::format("{:%Y-%m-%dT%H:%M:%S}Z",
                           std::chrono::floor<std::chrono::milliseconds>(clock_->WallNow()))}};
  line.update(record);
  out_ << (lost_ > 0 ? "\n" : "") << line.dump() << '\n';
  out_.flush();
  if (!out_) {
    if (lost_++ == 0) spdlog::error("writing the audit log {} failed (disk full?)", path_);
    out_.clear();
    return false;
  }
  if (lost_ > 0) spdlog::info("the audit log {} is written again ({} lines lost)", path_, lost_);
  lost_ = 0;
  return true;
}

}  // namespace headroom::service
