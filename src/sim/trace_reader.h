// TraceReader: streams LLM inference requests from a trace file, one at a time, so memory stays
// flat in the trace's length. Formats: the Azure LLM inference trace (2023:
// "2023-11-16 18:17:03.9799600,4808,10" with CRLF endings; 2024: "+00:00" and any number of
// fractional digits), and a generic CSV with the header
//   arrival_s,prompt_tokens,output_tokens[,cached_tokens][,priority]
// (cached_tokens: the prompt tokens a prefix cache already held, as a serving log can record
// them; at most the prompt; an empty field is not recorded).
// Every bad row is an error naming the file and line. Reads a file, or text already in memory
// (the traces compiled into the binary, see named_traces.h). Not thread-safe.
#ifndef HEADROOM_SIM_TRACE_READER_H_
#define HEADROOM_SIM_TRACE_READER_H_

#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "core/time.h"
#include "sim/request_source.h"

namespace headroom::sim {

class TraceReader final : public RequestSource {
 public:
  // Recognizes the format from the header line.
  [[nodiscard]] static core::Result<std::unique_ptr<TraceReader>> Open(const std::string& path);
  // The same over a trace's text; `name` stands for the file in errors.
  [[nodiscard]] static core::Result<std::unique_ptr<TraceReader>> FromText(std::string name,
                                                                           std::string text);
  // The same over text that outlives the reader (a trace compiled into the binary), not copied.
  [[nodiscard]] static core::Result<std::unique_ptr<TraceReader>> FromView(std::string name,
                                                                           std::string_view text);

  // The next request; nullopt at the end. Errors name file:line. Arrivals never go backwards.
  [[nodiscard]] core::Result<std::optional<TraceRequest>> Next() override;
  // An Azure trace's first timestamp, once the first request has been read.
  std::optional<core::Duration> start_time() const override { return first_epoch_; }

 private:
  enum class Format { kAzure, kGeneric };
  TraceReader(std::string path, std::unique_ptr<std::istream> in, Format format, bool cached_column)
      : path_(std::move(path)),
        in_(std::move(in)),
        format_(format),
        cached_column_(cached_column) {}
  [[nodiscard]] static core::Result<std::unique_ptr<TraceReader>> FromStream(
      std::string path, std::unique_ptr<std::istream> in);
  core::Result<TraceRequest> ParseAzure(std::string_view line);
  core::Result<TraceRequest> ParseGeneric(std::string_view line) const;

  std::string path_;
  std::unique_ptr<std::istream> in_;
  Format format_;
  bool cached_column_;  // a generic header with cached_tokens
  long line_ = 1;       // the header
  std::string raw_;     // the line being read (its buffer reused line after line)
  std::optional<core::Duration> first_epoch_;
  double last_arrival_s_ = 0;
};

// Time since 1970 of an Azure timestamp "YYYY-MM-DD HH:MM:SS[.f...][+00:00]" (UTC), exact to the
// nanosecond (a double of epoch seconds would lose the traces' 100 ns ticks).
[[nodiscard]] core::Result<core::Duration> ParseAzureTimestamp(std::string_view text);

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_TRACE_READER_H_
