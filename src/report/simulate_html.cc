#include "report/simulate_html.h"

#include <fmt/format.h>

#include "format/table.h"
#include "report/plan_plots.h"
#include "report/reductions.h"

namespace headroom::report {
namespace {

// Points per CDF: smooth at 800 px wide, small in the page.
constexpr std::size_t kCdfPoints = 400;

format::Series CdfSeries(std::string label, const std::vector<double>& values, bool dashed) {
  return {.label = std::move(label),
          .points = Cdf(values, kCdfPoints),
          .style = format::Style::kLines,
          .dashed = dashed};
}

format::CaptionedPlot LatencyCdf(const SimulateReport& r, const char* name, const char* title,
                                 std::vector<double> RequestLatencies::*hp,
                                 std::vector<double> RequestLatencies::*lp, const char* what) {
  format::Plot plot{.name = name,
                    .title = title,
                    .x_label = fmt::format("{} (s, log scale)", what),
                    .y_label = "fraction of requests at or below",
                    .y_min = 0.0,
                    .log_x = true};
  const std::string& policy = r.run.policy;
  const bool both = lp != nullptr;
  plot.series.push_back(CdfSeries(both ? fmt::format("HP, {}", policy) : policy, r.requests.*hp,
                                  /*dashed=*/false));
  if (r.uncapped_requests) {
    plot.series.push_back(
        CdfSeries(both ? "HP, uncapped" : "uncapped", (*r.uncapped_requests).*hp, /*dashed=*/true));
  }
  if (both) {
    plot.series.push_back(CdfSeries(fmt::format("LP, {}", policy), r.requests.*lp, false));
    if (r.uncapped_requests) {
      plot.series.push_back(CdfSeries("LP, uncapped", (*r.uncapped_requests).*lp, true));
    }
  }
  const std::string against =
      r.uncapped_requests
          ? " The dashed line is the uncapped row (policy none) on the same servers and trace: "
            "where the lines part, capping slowed requests down."
          : " The uncapped row was not simulated beside it (simulate --report does).";
  return {std::move(plot),
          fmt::format("Share of requests whose {} is at most x, from every request of the run "
                      "(requests.csv).{}",
                      what, against)};
}

std::string Header(const SimulateReport& r) {
  const sim::RunSummary& s = r.run;
  return format::HtmlHeader(
      SimulateQuestion(r), SimulateAnswer(r),
      fmt::format("Scenario <b>{}</b>: {}. {:.1f} h of arrivals; mean row power "
                  "{:.1f}% of the budget; {} HP and {} LP requests.",
                  format::HtmlEscape(r.inputs.scenario), format::HtmlEscape(r.inputs.description),
                  r.duration_s / 3600, s.mean_frac * 100, s.hp.requests, s.lp.requests));
}

std::string Inputs(const SimulateInputs& in) {
  return format::HtmlInputs(
      {{"scenario", in.scenario},
       {"scenario file", in.scenario_source},
       {"trace", in.trace.empty() ? "the scenario's workload" : in.trace},
       {"seed", std::to_string(in.seed)},
       {"policy", in.policy},
       {"servers", fmt::format("{} (provisioned row: {})", in.servers, in.provisioned_servers)},
       {"policy overrides",
        in.overrides.empty() ? "none" : fmt::format("{}", fmt::join(in.overrides, ", "))},
       {"thresholds",
        fmt::format("T1 {:.0f}%, T2 {:.0f}% of the budget", in.t1_frac * 100, in.t2_frac * 100)},
       {"headroom", in.version}});
}

std::string RowTable(const sim::RunSummary& s, const std::optional<sim::RunSummary>& uncapped) {
  std::string out = "<section id=\"summary\">\n<h2>Summary</h2>\n<table class=\"row\">\n" +
                    format::HtmlRow({"run", "peak", "mean", "largest rise", "brakes", "over budget",
                                     "capped", "energy"},
                                    "th");
  const auto row = [](const sim::RunSummary& r, const char* css) {
    return format::HtmlRow(
        {r.policy, fmt::format("{:.1f}%", r.peak_frac * 100),
         fmt::format("{:.1f}%", r.mean_frac * 100), fmt::format("{:.1f}%", r.max_rise_frac * 100),
         std::to_string(r.brake_events), fmt::format("{:.0f} s", r.over_budget_s),
         fmt::format("{:.1f}%", r.capped_server_fraction * 100),
         fmt::format("{:.1f} kWh", r.energy_j / 3.6e6)},
        "td", css);
  };
  out += row(s, "chosen");
  if (uncapped) out += row(*uncapped, nullptr);
  out += "</table>\n";
  out += "<table class=\"classes\">\n" +
         format::HtmlRow({"class", "run", "requests", "TTFT P50", "TTFT P99", "TBT P50", "TBT P99",
                          "E2E P50", "E2E P90", "E2E P99", "tokens/s", "E2E P50 vs uncapped"},
                         "th");
  for (const auto& [class_name, class_member] :
       {std::pair{"HP", &sim::RunSummary::hp}, std::pair{"LP", &sim::RunSummary::lp}}) {
    // Copies: clang before 16 cannot capture structured bindings in a lambda.
    const char* name = class_name;
    const auto cls = class_member;
    const auto cells = [&](const sim::RunSummary& r, const std::string& change) {
      const sim::RunSummary::Class& c = r.*cls;
      return std::vector<std::string>{name,
                                      r.policy,
                                      std::to_string(c.requests),
                                      format::FormatSeconds(c.ttft_p50_s),
                                      format::FormatSeconds(c.ttft_p99_s),
                                      format::FormatSeconds(c.tbt_p50_s),
                                      format::FormatSeconds(c.tbt_p99_s),
                                      format::FormatSeconds(c.e2e_p50_s),
                                      format::FormatSeconds(c.e2e_p90_s),
                                      format::FormatSeconds(c.e2e_p99_s),
                                      fmt::format("{:.0f}", c.throughput_tok_s),
                                      change};
    };
    std::string change = "-";
    if (uncapped && ((*uncapped).*cls).e2e_p50_s > 0) {
      change = format::FormatChange((s.*cls).e2e_p50_s / ((*uncapped).*cls).e2e_p50_s - 1);
    }
    out += format::HtmlRow(cells(s, change), "td", "chosen");
    if (uncapped) out += format::HtmlRow(cells(*uncapped, "-"));
  }
  return out +
         "</table>\n<p class=\"note\">Peak and mean are metered 1 s row power as a share of the "
         "budget; the largest rise is within one capping delay; capped is the share of "
         "server-time under a clock cap or power limit; latency percentiles come from the "
         "simulator's histograms.</p>\n</section>\n";
}

std::vector<format::CaptionedPlot> SimulatePlots(const SimulateReport& r) {
  std::vector<format::CaptionedPlot> plots;
  plots.push_back(RowPowerPlot(
      r.power, r.inputs.t1_frac, r.inputs.t2_frac,
      fmt::format("Metered row power of {} at {} servers", r.run.policy, r.run.servers)));
  plots.push_back(LatencyCdf(r, "latency-hp", "High-priority end-to-end latency, CDF",
                             &RequestLatencies::hp_e2e_s, nullptr, "end-to-end latency"));
  plots.push_back(LatencyCdf(r, "latency-lp", "Low-priority end-to-end latency, CDF",
                             &RequestLatencies::lp_e2e_s, nullptr, "end-to-end latency"));
  plots.push_back(LatencyCdf(r, "ttft", "Time to first token per priority, CDF",
                             &RequestLatencies::hp_ttft_s, &RequestLatencies::lp_ttft_s,
                             "time to first token"));
  return plots;
}

format::HtmlReport SimulateReportHtml(const SimulateReport& r, const std::string& plot_dir) {
  format::HtmlReport out;
  const std::string body = Header(r) + Inputs(r.inputs) + RowTable(r.run, r.uncapped) +
                           format::HtmlPlots(SimulatePlots(r), plot_dir, out.warnings) +
                           format::HtmlFooter(r.inputs.version, "headroom simulate --out DIR");
  out.html = format::HtmlPage(
      fmt::format("headroom simulate: {} on {} servers", r.run.policy, r.run.servers), body);
  return out;
}

}  // namespace

core::Result<format::WrittenReport> WriteSimulateReport(const std::string& dir) {
  HEADROOM_ASSIGN_OR_RETURN(SimulateReport report, ReadSimulateDir(dir));
  return format::WriteReportPage(
      dir, [&](const std::string& plot_dir) { return SimulateReportHtml(report, plot_dir); });
}

}  // namespace headroom::report
