#include "report/study_report.h"

#include <filesystem>

#include <fmt/format.h>

#include "core/files.h"
#include "format/html.h"
#include "format/json_fields.h"
#include "format/table.h"
#include "report/plan_dir.h"
#include "sim/capacity_planner.h"

namespace headroom::report {
namespace {

// What the table and study.json say of one policy of one plan.
struct StudyRow {
  std::string plan = {};
  std::string policy = {};
  bool chosen = false;
  int servers = 0;
  int provisioned = 0;
  double extra_pct = 0;
  double hp_p99_pct = 0;
  double lp_p50_pct = 0;
  std::optional<double> risk_upper = {};  // at the answer, from the unseen weeks; none without
};

std::vector<StudyRow> Rows(const StudyReport& study) {
  std::vector<StudyRow> rows;
  for (const StudyPlan& s : study.plans) {
    const sim::CapacityPlan& plan = s.plan.plan;
    const sim::PolicyPlan* chosen = sim::ChosenPolicy(plan);
    for (const sim::PolicyPlan& p : plan.policies) {
      StudyRow r{.plan = s.name,
                 .policy = p.policy,
                 .chosen = &p == chosen,
                 .servers = p.max_servers,
                 .provisioned = plan.baseline_servers,
                 .extra_pct = p.extra_pct,
                 .hp_p99_pct = p.impact.hp_p99_e2e_pct,
                 .lp_p50_pct = p.impact.lp_p50_e2e_pct,
                 .risk_upper = {}};
      if (plan.validation_weeks > 0 && p.max_servers > 0) {
        if (auto risk = sim::CountRiskAt(plan, p.policy, p.max_servers)) {
          r.risk_upper = risk->unseen_risk_upper;
        }
      }
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

std::string RiskText(const StudyRow& r) {
  return r.risk_upper ? fmt::format("<={:.1f}%", *r.risk_upper * 100) : "-";
}

}  // namespace

std::string StudyText(const StudyReport& study, const format::TextStyle& style) {
  format::TextTable t({{"PLAN", format::TextTable::Align::kLeft},
                       {"POLICY", format::TextTable::Align::kLeft},
                       {"SERVERS"},
                       {"EXTRA"},
                       {"WEEKLY RISK"},
                       {"HP P99"},
                       {"LP P50"}});
  for (const StudyRow& r : Rows(study)) {
    t.AddRow({r.plan, r.chosen ? r.policy + "*" : r.policy,
              fmt::format("{}/{}", r.servers, r.provisioned), fmt::format("{:+.0f}%", r.extra_pct),
              RiskText(r), format::FormatChange(r.hp_p99_pct / 100),
              format::FormatChange(r.lp_p50_pct / 100)},
             r.chosen ? format::Tone::kGreen : format::Tone::kPlain);
  }
  return fmt::format(
      "{}: {} plan{}\n{}(* each plan's answer; servers that fit / provisioned; the weekly risk "
      "of a power event bounded from unseen weeks at each plan's confidence; latency against "
      "the uncapped row)\n{} plans {}\n",
      style.Bold(study.name), study.plans.size(), study.plans.size() == 1 ? "" : "s",
      t.Render(style), study.plans.size(), study.ran_on);
}

nlohmann::ordered_json StudyJson(const StudyReport& study) {
  nlohmann::ordered_json plans = nlohmann::ordered_json::array();
  const std::vector<StudyRow> rows = Rows(study);
  for (const StudyPlan& s : study.plans) {
    nlohmann::ordered_json settings = nlohmann::ordered_json::object();
    for (const auto& [k, v] : s.settings) settings[k] = v;
    nlohmann::ordered_json policies = nlohmann::ordered_json::array();
    for (const StudyRow& r : rows) {
      if (r.plan != s.name) continue;
      policies.push_back({{"policy", r.policy},
                          {"chosen", r.chosen},
                          {"max_servers", r.servers},
                          {"extra_pct", r.extra_pct},
                          {"weekly_risk_upper", r.risk_upper ? nlohmann::ordered_json(*r.risk_upper)
                                                             : nlohmann::ordered_json()},
                          {"hp_p99_impact_pct", r.hp_p99_pct},
                          {"lp_p50_impact_pct", r.lp_p50_pct}});
    }
    plans.push_back({{"name", s.name},
                     {"scenario", s.plan.inputs.scenario},
                     {"settings", std::move(settings)},
                     {"dir", s.dir},
                     {"baseline_servers", s.plan.plan.baseline_servers},
                     {"policies", std::move(policies)}});
  }
  return {{"name", study.name},       {"description", study.description},
          {"source", study.source},   {"ran_on", study.ran_on},
          {"version", study.version}, {"plans", std::move(plans)}};
}

core::Status WriteStudyDir(const std::string& dir, const StudyReport& study) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--out {}: cannot create the directory: {}", dir, ec.message())));
  }
  return core::WriteFileAtomically(fmt::format("{}/{}", dir, kStudyFile),
                                   StudyJson(study).dump(2) + "\n");
}

namespace {

// The servers that fit per plan, one bar per policy beside each other.
format::CaptionedPlot ServersPlot(const StudyReport& study) {
  format::Plot plot{.name = "servers",
                    .title = "Servers that fit in each plan's budget",
                    .x_label = "plan",
                    .y_label = "servers",
                    .rotate_x_tics = true};
  std::vector<std::string> policies;
  for (const StudyPlan& s : study.plans) {
    for (const sim::PolicyPlan& p : s.plan.plan.policies) {
      if (std::find(policies.begin(), policies.end(), p.policy) == policies.end()) {
        policies.push_back(p.policy);
      }
    }
  }
  const double width = 0.8 / static_cast<double>(std::max<std::size_t>(1, policies.size()));
  plot.box_width = width;
  for (std::size_t k = 0; k < policies.size(); ++k) {
    format::Series series{.label = policies[k], .style = format::Style::kBoxes};
    for (std::size_t i = 0; i < study.plans.size(); ++i) {
      for (const sim::PolicyPlan& p : study.plans[i].plan.plan.policies) {
        if (p.policy != policies[k]) continue;
        const double x = static_cast<double>(i) - 0.4 + width * (static_cast<double>(k) + 0.5);
        series.points.emplace_back(x, p.max_servers);
      }
    }
    plot.series.push_back(std::move(series));
  }
  for (std::size_t i = 0; i < study.plans.size(); ++i) {
    plot.x_tics.emplace_back(static_cast<double>(i), study.plans[i].name);
  }
  plot.y_min = 0;
  return {std::move(plot),
          "Each plan's answer per policy: the most servers that keep the SLO on the planning "
          "weeks and stress cases and whose weekly risk, bounded from the unseen weeks, meets "
          "the plan's target."};
}

std::string TableHtml(const StudyReport& study) {
  std::string out =
      "<section id=\"plans\">\n<h2>Plans</h2>\n<table>\n" +
      format::HtmlRow({"plan", "policy", "servers", "extra", "weekly risk", "HP P99", "LP P50"},
                      "th");
  for (const StudyRow& r : Rows(study)) {
    out += format::HtmlRow(
        {r.plan, r.chosen ? r.policy + " (answer)" : r.policy,
         fmt::format("{}/{}", r.servers, r.provisioned), fmt::format("{:+.0f}%", r.extra_pct),
         RiskText(r), format::FormatChange(r.hp_p99_pct / 100),
         format::FormatChange(r.lp_p50_pct / 100)},
        "td", r.chosen ? "chosen" : nullptr);
  }
  return out + "</table>\n</section>\n";
}

}  // namespace

core::Result<StudyReport> ReadStudyDir(const std::string& dir) {
  const std::string path = fmt::format("{}/{}", dir, kStudyFile);
  HEADROOM_ASSIGN_OR_RETURN(const nlohmann::json j, format::ReadJsonObject(path));
  format::FieldReader r(path, "headroom study --out");
  StudyReport study{.name = r.Text(j, "name", ""),
                    .description = r.Text(j, "description", ""),
                    .source = r.Text(j, "source", ""),
                    .ran_on = r.Text(j, "ran_on", ""),
                    .version = r.Text(j, "version", "")};
  const nlohmann::json& plans = r.List(j, "plans", "");
  for (std::size_t i = 0; !r.error() && i < plans.size(); ++i) {
    const std::string at = fmt::format("plans[{}].", i);
    StudyPlan plan{.name = r.Text(plans[i], "name", at), .dir = r.Text(plans[i], "dir", at)};
    const nlohmann::json& settings = r.Object(plans[i], "settings", at);
    for (auto it = settings.begin(); !r.error() && it != settings.end(); ++it) {
      plan.settings.emplace_back(it.key(), r.Text(&it.value(), at + "settings." + it.key()));
    }
    study.plans.push_back(std::move(plan));
  }
  if (r.error()) return core::Fail(*r.error());
  for (StudyPlan& plan : study.plans) {
    HEADROOM_ASSIGN_OR_RETURN(plan.plan, ReadPlanDir(fmt::format("{}/{}", dir, plan.dir)));
  }
  return study;
}

core::Result<format::WrittenReport> WriteStudyReport(const std::string& dir) {
  HEADROOM_ASSIGN_OR_RETURN(const StudyReport study, ReadStudyDir(dir));
  return format::WriteReportPage(dir, [&](const std::string& plot_dir) {
    format::HtmlReport out;
    std::vector<std::pair<std::string, std::string>> inputs = {
        {"study", study.source},
        {"plans", std::to_string(study.plans.size())},
        {"ran", study.ran_on}};
    for (const StudyPlan& s : study.plans) inputs.emplace_back(s.name, s.dir + "/plan.json");
    const std::string body =
        format::HtmlHeader(fmt::format("How many servers fit, plan by plan: {}", study.name),
                           study.description, format::HtmlEscape(study.ran_on)) +
        format::HtmlInputs(inputs) + TableHtml(study) +
        format::HtmlPlots({ServersPlot(study)}, plot_dir, out.warnings) +
        format::HtmlFooter(study.version, "headroom study FILE --out DIR");
    out.html = format::HtmlPage(fmt::format("headroom study: {}", study.name), body);
    return out;
  });
}

}  // namespace headroom::report
