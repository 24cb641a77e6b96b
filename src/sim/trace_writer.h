// AzureTraceWriter: writes requests as an Azure LLM inference trace (2023 format, header
// "TIMESTAMP,ContextTokens,GeneratedTokens", timestamps "2023-11-16 18:17:03.9799600", CRLF line
// endings as in the published files) one at a time, so that memory stays flat in the trace's
// length. The file appears complete or not at all: rows go to "<path>.tmp", renamed on Commit.
// The format has those three columns only: a request's priority and recorded cached tokens are
// not written (tools that read Azure traces expect exactly them; a log's cached prefix stays in
// the generic CSV it came from, which the simulator reads directly).
// Not thread-safe.
#ifndef HEADROOM_SIM_TRACE_WRITER_H_
#define HEADROOM_SIM_TRACE_WRITER_H_

#include <atomic>
#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <string>

#include "core/result.h"
#include "core/time.h"
#include "sim/request_source.h"

namespace headroom::sim {

// "YYYY-MM-DD HH:MM:SS.fffffff" of a time since 1970 (UTC), truncated to the 100 ns tick; the
// inverse of ParseAzureTimestamp (trace_reader.h). REQUIRES: since_epoch >= 0.
std::string FormatAzureTimestamp(core::Duration since_epoch);

class AzureTraceWriter {
 public:
  // Request arrival_s maps to the time start + arrival_s (since 1970, UTC), rounded to 100 ns.
  [[nodiscard]] static core::Result<std::unique_ptr<AzureTraceWriter>> Create(std::string path,
                                                                              core::Duration start);
  // Removes "<path>.tmp" unless Commit succeeded.
  ~AzureTraceWriter();
  AzureTraceWriter(const AzureTraceWriter&) = delete;
  AzureTraceWriter& operator=(const AzureTraceWriter&) = delete;

  // REQUIRES: arrivals non-decreasing and >= 0, as every RequestSource gives them.
  [[nodiscard]] core::Status Write(const TraceRequest& request);
  // Flushes and renames into place. REQUIRES: called once.
  [[nodiscard]] core::Status Commit();

  std::int64_t count() const { return count_; }

 private:
  AzureTraceWriter(std::string path, std::ofstream out, core::Duration start)
      : path_(std::move(path)), out_(std::move(out)), start_(start) {}
  core::Status Flush();

  std::string path_;
  std::ofstream out_;
  core::Duration start_;
  std::string buffer_;
  std::int64_t count_ = 0;
  bool committed_ = false;
};

struct WriteTraceOptions {
  // Read every kWriteTraceCheckEvery requests: set, nothing is written and the result is
  // kCancelled ("interrupted; PATH not written").
  const std::atomic<bool>* stop = nullptr;
  // Heard every kWriteTraceCheckEvery requests: the requests written, the last one's arrival.
  std::function<void(std::int64_t written, double arrival_s)> progress = {};
};
// Requests between checks of WriteTraceOptions: about a millisecond's work.
inline constexpr std::int64_t kWriteTraceCheckEvery = 1 << 12;

// Every request of `source` written to `path` (AzureTraceWriter, committed at the end): how many.
// The source's and the writer's errors as they are.
[[nodiscard]] core::Result<std::int64_t> WriteTrace(RequestSource& source, const std::string& path,
                                                    core::Duration start,
                                                    const WriteTraceOptions& options);

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_TRACE_WRITER_H_
