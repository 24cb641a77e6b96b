#include "service/engine_metrics.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <httplib.h>

#include "service/http_client.h"

namespace headroom::service {
namespace {

constexpr std::string_view kBlank = " \t\r";

std::string_view Trim(std::string_view s) {
  const size_t begin = s.find_first_not_of(kBlank);
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(kBlank) - begin + 1);
}

// The text after a label set that starts at `s[0] == '{'`; nullopt when it does not close.
std::optional<std::string_view> SkipLabels(std::string_view s) {
  bool quoted = false;
  for (size_t i = 1; i < s.size(); ++i) {
    if (quoted && s[i] == '\\') {
      ++i;  // an escaped character, whatever it is
    } else if (s[i] == '"') {
      quoted = !quoted;
    } else if (!quoted && s[i] == '}') {
      return s.substr(i + 1);
    }
  }
  return std::nullopt;
}

std::optional<double> ParseSampleValue(std::string_view text) {
  if (text == "+Inf" || text == "Inf") return std::numeric_limits<double>::infinity();
  if (text == "-Inf") return -std::numeric_limits<double>::infinity();
  if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

struct Wanted {
  const std::string* name;
  double* sum;
  bool seen = false;
};

}  // namespace

core::Result<EngineSample> ParseEngineMetrics(std::string_view text,
                                              const EngineMetricNames& names) {
  const std::string_view page = text;
  EngineSample sample;
  Wanted wanted[] = {{&names.prompt_tokens, &sample.prompt_tokens},
                     {&names.generation_tokens, &sample.generation_tokens},
                     {&names.running, &sample.running},
                     {&names.waiting, &sample.waiting}};
  auto bad = [](int line, std::string what) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("engine metrics, line {}: {}", line, std::move(what))));
  };
  int number = 0;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = Trim(text.substr(0, eol));
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    ++number;
    if (line.empty() || line.front() == '#') continue;
    const size_t name_end = line.find_first_of("{ \t");
    if (name_end == 0 || name_end == std::string_view::npos) {
      return bad(number, fmt::format("'{}' is not NAME[{{LABELS}}] VALUE", line.substr(0, 80)));
    }
    const std::string_view name = line.substr(0, name_end);
    std::string_view rest = line.substr(name_end);
    if (rest.front() == '{') {
      auto after = SkipLabels(rest);
      if (!after) return bad(number, fmt::format("the labels of {} do not close", name));
      rest = *after;
    }
    rest = Trim(rest);
    const std::string_view value_text = rest.substr(0, rest.find_first_of(kBlank));
    const std::optional<double> value = ParseSampleValue(value_text);
    if (!value) {
      return bad(number, fmt::format("{} has no number as its value ('{}')", name,
                                     value_text.substr(0, 40)));
    }
    for (Wanted& w : wanted) {
      if (name != *w.name) continue;
      if (!std::isfinite(*value) || *value < 0) {
        return bad(number, fmt::format("{} is {}: a count must be finite and not negative", name,
                                       value_text));
      }
      *w.sum += *value;
      w.seen = true;
    }
  }
  for (const Wanted& w : wanted) {
    if (!w.seen) {
      return core::Fail(core::Error::InvalidArgument(
          fmt::format("engine metrics: no '{}' (is the URL the engine's metrics page, and the "
                      "name right?)",
                      *w.name)));
    }
  }
  for (const auto& [name, histogram] :
       {std::pair{&names.ttft, &sample.ttft}, std::pair{&names.itl, &sample.itl}}) {
    if (name->empty()) continue;
    HEADROOM_ASSIGN_OR_RETURN(*histogram, ParseLatencyHistogram(page, *name));
  }
  if (!names.iterations.empty()) {
    HEADROOM_ASSIGN_OR_RETURN(auto steps, ParseLatencyHistogram(page, names.iterations));
    if (steps) sample.iterations = steps->count();
  }
  return sample;
}

namespace {

// The value of label `key` in a label set `{a="1",le="0.5"}`; nullopt when absent.
std::optional<std::string_view> LabelValue(std::string_view labels, std::string_view key) {
  const std::string wanted = std::string(key) + "=\"";
  for (size_t at = labels.find(wanted); at != std::string_view::npos;
       at = labels.find(wanted, at + 1)) {
    if (at > 0 && labels[at - 1] != '{' && labels[at - 1] != ',' && labels[at - 1] != ' ') continue;
    const size_t begin = at + wanted.size();
    const size_t end = labels.find('"', begin);
    if (end == std::string_view::npos) return std::nullopt;
    return labels.substr(begin, end - begin);
  }
  return std::nullopt;
}

}  // namespace

core::Result<std::optional<LatencyHistogramSample>> ParseLatencyHistogram(std::string_view text,
                                                                          std::string_view name) {
  const std::string bucket = std::string(name) + "_bucket{";
  std::map<double, double> counts;  // by le, summed over label sets
  int number = 0;
  const auto bad = [&](std::string why) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("engine metrics, line {}: {}: {}", number, name, std::move(why))));
  };
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    const std::string_view line = Trim(text.substr(0, eol));
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    ++number;
    if (line.rfind(bucket, 0) != 0) continue;
    const std::string_view rest = line.substr(bucket.size() - 1);
    const auto after = SkipLabels(rest);
    if (!after) return bad("the labels do not close");
    const std::string_view labels = rest.substr(0, rest.size() - after->size());
    const std::optional<std::string_view> le = LabelValue(labels, "le");
    const std::optional<double> bound = le ? ParseSampleValue(*le) : std::nullopt;
    // Bounds are finite but the last, +Inf.
    if (!bound || std::isnan(*bound) || *bound == -std::numeric_limits<double>::infinity()) {
      return bad("a bucket without a numeric le");
    }
    const std::string_view tail = Trim(*after);
    const std::string_view value_text = tail.substr(0, tail.find_first_of(kBlank));
    const std::optional<double> value = ParseSampleValue(value_text);
    if (!value || !std::isfinite(*value) || *value < 0) {
      return bad(fmt::format("a bucket count '{}' is not a finite count", value_text));
    }
    counts[*bound] += *value;
  }
  if (counts.empty()) return std::nullopt;
  LatencyHistogramSample out;
  for (const auto& [le, count] : counts) {
    if (!out.buckets.empty() && count < out.buckets.back().second) {
      return bad(fmt::format("bucket le={} holds fewer than the one below it", le));
    }
    out.buckets.emplace_back(le, count);
  }
  if (!std::isinf(out.buckets.back().first)) return bad("no le=\"+Inf\" bucket");
  return out;
}

namespace {

// The engine's latencies at a good scrape (`invalid` says why there are none), from the reader
// that has seen every good scrape since the last failure; nullopt at the first.
std::optional<policy::LatencyWindow> LatencyAt(telemetry::EngineLatencyReader& reader,
                                               const EngineSample& sample, core::TimePoint at) {
  policy::LatencyWindow w{.at = at.time_since_epoch()};
  if (!sample.itl || !sample.ttft) {
    reader.Reset();
    w.invalid = "the engine's page has no inter-token or first-token latency histogram";
    return w;
  }
  const telemetry::EngineLatencyReader::Reading r =
      reader.Add(*sample.itl, *sample.ttft, at.time_since_epoch());
  if (r.first) return std::nullopt;
  w.itl_p50_s = r.itl_p50_s;
  w.ttft_p99_s = r.ttft_p99_s;
  w.invalid = r.invalid;
  return w;
}

}  // namespace

void EngineWindow::Add(const EngineSample& sample, core::TimePoint at) {
  if (!last_ || at <= last_at_) {
    (void)LatencyAt(reader_, sample, at);  // the reader's first sample: no window yet
  } else {
    const double prompt = sample.prompt_tokens - last_->prompt_tokens;
    const double generated = sample.generation_tokens - last_->generation_tokens;
    if (prompt < 0 || generated < 0) {
      window_.reset();
      error_ = "a token counter went down (the engine restarted): no window until the next scrape";
      latency_ = policy::LatencyWindow{.at = at.time_since_epoch(), .invalid = error_};
      reader_.Reset();
      (void)LatencyAt(reader_, sample, at);
    } else {
      if (auto w = LatencyAt(reader_, sample, at)) latency_ = *w;
      window_ = policy::ServingSignal{
          .prefill_share = prompt + generated > 0 ? prompt / (prompt + generated) : 0,
          .waiting = sample.waiting,
          .running = sample.running};
      window_at_ = at;
      error_.clear();
    }
  }
  last_ = sample;
  last_at_ = at;
}

void EngineWindow::Fail(std::string error) {
  last_.reset();
  reader_.Reset();
  window_.reset();
  latency_ = policy::LatencyWindow{.at = latency_ ? latency_->at : core::Duration::zero(),
                                   .invalid = error};
  error_ = std::move(error);
  ++failures_;
}

std::optional<policy::ServingSignal> EngineWindow::Signal(core::TimePoint now) const {
  if (!window_) return std::nullopt;
  policy::ServingSignal signal = *window_;
  signal.age = std::max(core::Duration::zero(), now - window_at_);
  return signal;
}

core::Status CheckEngineMetricsUrl(std::string_view url) {
  const size_t scheme_end = url.find("://");
  const std::string_view scheme = url.substr(0, scheme_end);
  const size_t path =
      scheme_end == std::string_view::npos ? scheme_end : url.find('/', scheme_end + 3);
  if ((scheme != "http" && scheme != "https") || path == std::string_view::npos ||
      path == scheme_end + 3) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("engine metrics URL '{}' is not http(s)://HOST[:PORT]/PATH, e.g. "
                    "http://127.0.0.1:8000/metrics",
                    url)));
  }
  return core::Ok();
}

EngineScraper::EngineScraper(std::string url, EngineMetricNames names, core::Duration timeout)
    : url_(std::move(url)), names_(std::move(names)) {
  const size_t path = url_.find('/', url_.find("://") + 3);
  path_ = url_.substr(path);
  client_ = std::make_unique<httplib::Client>(url_.substr(0, path));
  ConfigureHttpClient(*client_, timeout, "");
}

EngineScraper::~EngineScraper() = default;

core::Result<EngineSample> EngineScraper::Scrape() {
  const httplib::Result got = client_->Get(path_);
  if (!got) {
    return core::Fail(core::Error::Unavailable(
        fmt::format("engine metrics {}: {}", url_, httplib::to_string(got.error()))));
  }
  if (got->status != 200) {
    return core::Fail(
        core::Error::Unavailable(fmt::format("engine metrics {}: HTTP {}", url_, got->status)));
  }
  auto sample = ParseEngineMetrics(got->body, names_);
  if (!sample) return core::Fail(sample.error().WithContext(url_));
  return sample;
}

}  // namespace headroom::service
