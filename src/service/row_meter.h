// RowMeter: an external reading of the row's power, for controllers whose row has a better
// meter than the sum of the agents' reports: a Prometheus server's instant-query API (a PDU
// exporter, or Prometheus scraping the agents) or a command that prints watts (IPMI or Redfish
// scripts). The parse functions are pure and tested on their own; the meters do I/O with a
// bounded timeout. A meter is used by one thread at a time.
#ifndef HEADROOM_SERVICE_ROW_METER_H_
#define HEADROOM_SERVICE_ROW_METER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "core/units.h"

namespace headroom::service {

class RowMeter {
 public:
  virtual ~RowMeter() = default;
  [[nodiscard]] virtual core::Result<core::Watts> Read() = 0;
  virtual std::string Describe() const = 0;
};

// The body of GET /api/v1/query: a scalar, or a vector whose samples are summed. An empty
// vector, a failed query, NaN or a negative sum is an error (never read as 0 W).
[[nodiscard]] core::Result<core::Watts> ParsePrometheusQueryResponse(std::string_view body);
// A command's standard output: one number of watts, optionally followed by "W".
[[nodiscard]] core::Result<core::Watts> ParseMeterOutput(std::string_view text);

class PrometheusMeter final : public RowMeter {
 public:
  // url: http(s)://HOST:PORT[/PREFIX]; HTTPS certificates verified against ca_file (empty:
  // the system's CAs).
  PrometheusMeter(std::string url, std::string query, core::Duration timeout,
                  std::string ca_file = "");
  core::Result<core::Watts> Read() override;
  std::string Describe() const override;

 private:
  const std::string url_;
  const std::string query_;
  const core::Duration timeout_;
  const std::string ca_file_;
};

class CommandMeter final : public RowMeter {
 public:
  // REQUIRES: clock outlives the meter.
  CommandMeter(std::vector<std::string> argv, core::Duration timeout, const core::Clock* clock);
  // Runs the command (core::RunCaptured); kills it (SIGKILL) when it outlives the timeout.
  core::Result<core::Watts> Read() override;
  std::string Describe() const override;

 private:
  const std::vector<std::string> argv_;
  const core::Duration timeout_;
  const core::Clock* const clock_;
};

}  // namespace headroom::service

#endif  // HEADROOM_SERVICE_ROW_METER_H_
