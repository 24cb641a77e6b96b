#include "sim/trace_writer.h"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

namespace headroom::sim {
namespace {

using Ticks = std::chrono::duration<std::int64_t, std::ratio<1, 10'000'000>>;  // 100 ns
constexpr size_t kFlushBytes = 1 << 20;
constexpr std::string_view kHeader = "TIMESTAMP,ContextTokens,GeneratedTokens\r\n";

std::string TmpPath(const std::string& path) { return path + ".tmp"; }

}  // namespace

core::Result<std::unique_ptr<AzureTraceWriter>> AzureTraceWriter::Create(std::string path,
                                                                         core::Duration start) {
  std::ofstream out(TmpPath(path), std::ios::binary | std::ios::trunc);
  if (!out) {
    return core::Fail(core::Error::Unavailable(
        fmt::format("{}: cannot write: {}", TmpPath(path), std::strerror(errno))));
  }
  auto writer = std::unique_ptr<AzureTraceWriter>(
      new AzureTraceWriter(std::move(path), std::move(out), start));
  writer->buffer_.reserve(kFlushBytes + 256);
  writer->buffer_.append(kHeader);
  return writer;
}

AzureTraceWriter::~AzureTraceWriter() {
  if (committed_) return;
  out_.close();
  std::remove(TmpPath(path_).c_str());
}

core::Status AzureTraceWriter::Write(const TraceRequest& request) {
  // The published files end their last line without a newline: each row after the first starts
  // with the previous row's CRLF.
  if (count_ > 0) buffer_.append("\r\n");
  const Ticks offset(std::llround(request.arrival_s * 1e7));
  buffer_.append(FormatAzureTimestamp(start_ + offset));
  fmt::format_to(std::back_inserter(buffer_), ",{},{}", request.prompt_tokens,
                 request.output_tokens);
  ++count_;
  if (buffer_.size() >= kFlushBytes) return Flush();
  return core::Ok();
}

core::Status AzureTraceWriter::Flush() {
  out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  buffer_.clear();
  if (!out_) {
    return core::Fail(core::Error::DataLoss(
        fmt::format("{}: write failed: {}", TmpPath(path_), std::strerror(errno))));
  }
  return core::Ok();
}

core::Status AzureTraceWriter::Commit() {
  HEADROOM_RETURN_IF_ERROR(Flush());
  out_.close();
  if (!out_) {
    return core::Fail(core::Error::DataLoss(fmt::format("{}: write failed", TmpPath(path_))));
  }
  if (std::rename(TmpPath(path_).c_str(), path_.c_str()) != 0) {
    return core::Fail(core::Error::Unavailable(
        fmt::format("{}: cannot rename into place: {}", path_, std::strerror(errno))));
  }
  committed_ = true;
  return core::Ok();
}

core::Result<std::int64_t> WriteTrace(RequestSource& source, const std::string& path,
                                      core::Duration start, const WriteTraceOptions& options) {
  HEADROOM_ASSIGN_OR_RETURN(std::unique_ptr<AzureTraceWriter> writer,
                            AzureTraceWriter::Create(path, start));
  while (true) {
    HEADROOM_ASSIGN_OR_RETURN(std::optional<TraceRequest> next, source.Next());
    if (!next) break;
    HEADROOM_RETURN_IF_ERROR(writer->Write(*next));
    if (writer->count() % kWriteTraceCheckEvery != 0) continue;
    if (options.stop != nullptr && options.stop->load()) {
      return core::Fail(core::Error::Cancelled(fmt::format("interrupted; {} not written", path)));
    }
    if (options.progress) options.progress(writer->count(), next->arrival_s);
  }
  HEADROOM_RETURN_IF_ERROR(writer->Commit());
  return writer->count();
}

}  // namespace headroom::sim
