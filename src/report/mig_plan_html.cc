#include "report/mig_plan_html.h"

#include <fmt/format.h>

#include "core/files.h"
#include "format/html.h"
#include "format/table.h"
#include "report/mig_slots.h"

namespace headroom::report {
namespace {

std::string Header(const MigPlanReport& r) {
  return format::HtmlHeader(
      MigPlanQuestion(r), MigPlanAnswer(r),
      fmt::format("{} partitions searched, {} schedules evaluated. Every option is scored by the "
                  "same event-driven evaluation of the slice model (docs/mig.md); energy per "
                  "job: idle power by SM share, dynamic power by activity.",
                  r.layouts_considered, r.schedules_evaluated));
}

std::string Inputs(const MigPlanReport& r) {
  const MigPlanInputs& in = r.inputs;
  std::string rows;
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"jobs file", in.jobs_file},
           {"jobs", std::to_string(r.jobs)},
           {"GPU", fmt::format("{} ({} compute and {} memory slices)", in.geometry.gpu,
                               in.geometry.compute_slices, in.geometry.memory_slices)},
           {"power limit", fmt::format("{:.0f} W", in.power_limit_w)},
           {"objective", in.objective == "makespan" ? "shortest makespan" : "least energy"},
           {"makespan bound",
            in.makespan_bound_s ? fmt::format("{:.0f} s", *in.makespan_bound_s) : "none"},
           {"headroom", in.version}}) {
    rows += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", format::HtmlEscape(key),
                        format::HtmlEscape(value));
  }
  return "<section id=\"inputs\">\n<h2>Inputs</h2>\n<table class=\"inputs\">\n" + rows +
         "</table>\n</section>\n";
}

std::string Options(const MigPlanReport& r) {
  std::string out =
      "<section id=\"options\">\n<h2>Options</h2>\n<table class=\"options\">\n" +
      format::HtmlRow({"option", "layout", "energy (kJ)", "makespan (s)", "samples/s", "samples/J",
                       "energy vs whole GPU", "throughput vs whole GPU", "note"},
                      "th");
  const MigOption* whole = r.Reference();
  for (const MigOption* o : r.Options()) {
    const char* css = o == &r.plan ? "chosen" : nullptr;
    if (!o->feasible) {
      out += format::HtmlRow({o->name, PlacedLayoutName(r.inputs.geometry, o->layout), "-", "-",
                              "-", "-", "-", "-", "infeasible: " + o->reason},
                             "td", css);
      continue;
    }
    out += format::HtmlRow(
        {o->name, PlacedLayoutName(r.inputs.geometry, o->layout),
         fmt::format("{:.1f}", o->energy_j / 1e3), fmt::format("{:.0f}", o->makespan_s),
         fmt::format("{:.1f}", o->samples_per_s), fmt::format("{:.3f}", o->samples_per_j),
         whole != nullptr ? format::FormatChange(o->energy_j / whole->energy_j - 1) : "-",
         whole != nullptr ? format::FormatChange(o->samples_per_s / whole->samples_per_s - 1) : "-",
         o->meets_bound ? ""
                        : fmt::format("misses the bound or a deadline by {:.0f} s", o->overrun_s)},
        "td", css);
  }
  return out +
         "</table>\n<p class=\"note\">Layouts as profile class @ first memory slice (the full "
         "profile names are under the drawings below). samples/s is every job's samples over the "
         "makespan; changes are against every job one after another on the whole GPU with MIG "
         "off. The chosen plan is highlighted.</p>\n</section>\n";
}

std::string Why(const MigPlanReport& r) {
  std::string out = "<section id=\"why\">\n<h2>Why each job runs where it does</h2>\n";
  if (r.plan.jobs.empty()) {
    return out +
           fmt::format("<p class=\"note\">{}</p>\n</section>\n", format::HtmlEscape(r.plan.reason));
  }
  out += "<ul class=\"why\">\n";
  for (const MigJobRun& job : r.plan.jobs) {
    out += fmt::format("<li>{}</li>\n", format::HtmlEscape(job.explanation));
  }
  return out + fmt::format(
                   "</ul>\n<p class=\"note\">{:.1f} kJ of idle power falls on instances with no "
                   "job left and is not attributed to any job.</p>\n</section>\n",
                   r.plan.unattributed_j / 1e3);
}

std::vector<std::string> SideLines(const MigOption& o, const MigOption* whole) {
  std::vector<std::string> side = {o.name};
  if (!o.feasible) {
    side.push_back("infeasible:");
    side.push_back(o.reason);
    return side;
  }
  const auto vs = [&](double value, double MigOption::*field) {
    return whole != nullptr
               ? fmt::format(" ({})", format::FormatChange(value / ((*whole).*field) - 1))
               : "";
  };
  side.push_back(fmt::format("{:.1f} samples/s{}", o.samples_per_s,
                             vs(o.samples_per_s, &MigOption::samples_per_s)));
  side.push_back(
      fmt::format("{:.1f} kJ{}", o.energy_j / 1e3, vs(o.energy_j, &MigOption::energy_j)));
  side.push_back(fmt::format("done after {:.0f} s", o.makespan_s));
  if (!o.meets_bound) side.push_back(fmt::format("late by {:.0f} s", o.overrun_s));
  return side;
}

std::string Layouts(const MigPlanReport& r) {
  std::string out =
      "<section id=\"layouts\">\n<h2>Layouts</h2>\n<p class=\"note\">Each option's GPU "
      "instances over the GPU's memory slices (placements are given in memory slices; each "
      "instance's compute slices are written in it), with the jobs each runs, in order.</p>\n";
  const std::vector<const MigOption*> options = r.Options();
  for (std::size_t k = 0; k < options.size(); ++k) {
    const MigOption& o = *options[k];
    std::vector<std::vector<std::string>> lines = o.Queues();
    for (std::vector<std::string>& queue : lines) {
      for (std::size_t n = 0; n < queue.size(); ++n)
        queue[n] = fmt::format("{}. {}", n + 1, queue[n]);
      if (queue.empty() && o.feasible) queue.push_back("no job");
    }
    const SlotDiagram d =
        MigSlotDiagram(r.inputs.geometry, o.instances, lines,
                       fmt::format("{}: {}", o.name, o.layout), SideLines(o, r.Reference()));
    out += format::SvgFigure(
        fmt::format("slots-{}", k), SlotDiagramSvg(d),
        fmt::format("{}{}: {}", o.name, &o == &r.plan ? " (chosen)" : "", o.layout));
  }
  return out + "</section>\n";
}

format::CaptionedPlot EnergyMakespanPlot(const MigPlanReport& r) {
  format::Plot plot{.name = "energy-makespan",
                    .title = "Energy against makespan, per option",
                    .x_label = "makespan (s)",
                    .y_label = "energy (kJ)",
                    .pad_x = true};
  for (const MigOption* o : r.Options()) {
    if (!o->feasible) continue;
    const bool chosen = o == &r.plan;
    plot.series.push_back({.label = chosen ? fmt::format("{} (chosen)", o->name) : o->name,
                           .points = {{o->makespan_s, o->energy_j / 1e3}},
                           .style = format::Style::kPoints,
                           .point_size = chosen ? 2.6 : 1.4});
  }
  return {std::move(plot),
          "Each feasible option's energy for the whole job set against the time the last job "
          "ends; lower left is better on both. The chosen plan is the large point."};
}

format::CaptionedPlot TimelinePlot(const MigPlanReport& r) {
  const MigOption& p = r.plan;
  format::Plot plot{.name = "timeline",
                    .title = fmt::format("The plan's jobs over time, per instance ({})",
                                         ShortLayoutName(r.inputs.geometry, p.layout)),
                    .x_label = "time (s)",
                    .y_label = "GPU instance",
                    .x_min = 0.0};
  for (std::size_t i = 0; i < p.instances.size(); ++i) {
    plot.y_tics.emplace_back(static_cast<double>(i), p.instances[i].slice);
  }
  for (const MigJobRun& job : p.jobs) {
    plot.series.push_back({.label = job.job,
                           .points = {{job.start_s, static_cast<double>(job.instance)},
                                      {job.end_s, static_cast<double>(job.instance)}},
                           .style = format::Style::kLines,
                           .line_width = 14});
  }
  return {std::move(plot),
          "When each job of the plan runs and on which instance: each instance runs its jobs one "
          "after another; instances run side by side under the GPU's one power limit."};
}

std::vector<format::CaptionedPlot> MigPlanPlots(const MigPlanReport& report) {
  std::vector<format::CaptionedPlot> plots;
  bool any_feasible = false;
  for (const MigOption* o : report.Options()) any_feasible = any_feasible || o->feasible;
  if (any_feasible) plots.push_back(EnergyMakespanPlot(report));
  if (report.plan.feasible && !report.plan.jobs.empty()) plots.push_back(TimelinePlot(report));
  return plots;
}

format::HtmlReport MigPlanReportHtml(const MigPlanReport& report, const std::string& plot_dir) {
  format::HtmlReport out;
  const std::string body =
      Header(report) + Inputs(report) + Options(report) + Why(report) + Layouts(report) +
      format::HtmlPlots(MigPlanPlots(report), plot_dir, out.warnings) +
      format::HtmlFooter(report.inputs.version, "headroom mig plan --report --out DIR");
  out.html = format::HtmlPage(fmt::format("headroom mig plan: {}", report.inputs.jobs_file), body);
  return out;
}

}  // namespace

core::Result<format::WrittenReport> WriteMigPlanReport(const std::string& dir) {
  HEADROOM_ASSIGN_OR_RETURN(const MigPlanReport report, ReadMigPlanDir(dir));
  return format::WriteReportPage(
      dir, [&](const std::string& plot_dir) { return MigPlanReportHtml(report, plot_dir); });
}

}  // namespace headroom::report
