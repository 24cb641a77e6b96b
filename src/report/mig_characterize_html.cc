#include "report/mig_characterize_html.h"

#include <map>

#include <fmt/format.h>

#include "core/files.h"
#include "format/html.h"
#include "format/table.h"
#include "report/mig_slots.h"

namespace headroom::report {
namespace {

std::string Header(const MigCharacterizeReport& r) {
  return format::HtmlHeader(
      MigCharacterizeQuestion(r), MigCharacterizeAnswer(r),
      fmt::format("{} layouts x {} workloads on the slice model (simulated; docs/mig.md). No GPU "
                  "reports power per MIG instance, so each instance's power is the whole GPU's, "
                  "attributed two ways: <b>activity</b> (idle power by SM share, the rest by SMs "
                  "x busy time) and <b>SM share</b> (all of it by SM share).",
                  r.inputs.layouts.size(), r.inputs.workloads.size()));
}

std::string Inputs(const MigCharacterizeReport& r) {
  const MigCharacterizeInputs& in = r.inputs;
  std::vector<std::string> layouts;
  for (const std::string& l : in.layouts) layouts.push_back(ShortLayoutName(in.geometry, l));
  std::string rows;
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"GPU", fmt::format("{} ({} compute and {} memory slices)", in.geometry.gpu,
                               in.geometry.compute_slices, in.geometry.memory_slices)},
           {"power limit", fmt::format("{:.0f} W", in.power_limit_w)},
           {"workloads", fmt::format("{}", fmt::join(in.workloads, ", "))},
           {"layouts", fmt::format("{}", fmt::join(layouts, "; "))},
           {"headroom", in.version}}) {
    rows += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", format::HtmlEscape(key),
                        format::HtmlEscape(value));
  }
  return "<section id=\"inputs\">\n<h2>Inputs</h2>\n<table class=\"inputs\">\n" + rows +
         "</table>\n</section>\n";
}

std::string Best(const MigCharacterizeReport& r) {
  std::string out =
      "<section id=\"best\">\n<h2>Best layout per workload</h2>\n<table class=\"best\">\n" +
      format::HtmlRow({"workload", "MIG off samples/s", "MIG off J/sample", "fastest layout",
                       "throughput", "least-energy layout", "J/sample"},
                      "th");
  for (const MigWorkloadBest& b : BestPerWorkload(r.results)) {
    if (b.off == nullptr || b.fastest == nullptr || b.off->gpu_samples_per_s <= 0) {
      out += format::HtmlRow({b.workload, "-", "-", "-", "-", "-", "-"});
      continue;
    }
    out += format::HtmlRow(
        {b.workload, fmt::format("{:.1f}", b.off->gpu_samples_per_s),
         fmt::format("{:.4f}", b.off->gpu_j_per_sample),
         ShortLayoutName(r.inputs.geometry, b.fastest->layout),
         format::FormatChange(b.fastest->gpu_samples_per_s / b.off->gpu_samples_per_s - 1),
         ShortLayoutName(r.inputs.geometry, b.leanest->layout),
         format::FormatChange(b.leanest->gpu_j_per_sample / b.off->gpu_j_per_sample - 1)});
  }
  return out +
         "</table>\n<p class=\"note\">Whole-GPU figures: every instance's samples/s summed; "
         "J/sample is the whole GPU's power over that. Changes are against MIG off.</p>\n"
         "</section>\n";
}

std::string Layouts(const MigCharacterizeReport& r) {
  const std::vector<MigWorkloadBest> best = BestPerWorkload(r.results);
  std::map<std::string, int> fastest, leanest;
  for (const MigWorkloadBest& b : best) {
    if (b.fastest != nullptr) ++fastest[b.fastest->layout];
    if (b.leanest != nullptr) ++leanest[b.leanest->layout];
  }
  std::string out =
      "<section id=\"layouts\">\n<h2>Layouts</h2>\n<p class=\"note\">Each layout's GPU "
      "instances over the GPU's memory slices; in each, its SMs and how many of the workloads "
      "fit its memory.</p>\n";
  const std::size_t workloads = r.inputs.workloads.size();
  for (std::size_t k = 0; k < r.inputs.layouts.size(); ++k) {
    const std::string& layout = r.inputs.layouts[k];
    auto instances = InstancesOfText(r.inputs.geometry, layout);
    if (!instances) continue;  // ReadMigCharacterizeDir checked every layout of the results
    std::vector<int> fits(instances->size(), 0);
    for (const mig::LayoutResult& res : r.results) {
      if (res.layout != layout) continue;
      for (std::size_t i = 0; i < res.per_instance.size() && i < fits.size(); ++i) {
        if (res.per_instance[i].fits) ++fits[i];
        (*instances)[i].sm_count = res.per_instance[i].sm_count;
        (*instances)[i].memory_gib = res.per_instance[i].memory_gib;
      }
    }
    std::vector<std::vector<std::string>> lines;
    for (std::size_t i = 0; i < instances->size(); ++i) {
      lines.push_back({fmt::format("{} SMs", (*instances)[i].sm_count),
                       fmt::format("fits {} of {}", fits[i], workloads)});
    }
    const std::string name = ShortLayoutName(r.inputs.geometry, layout);
    const SlotDiagram d = MigSlotDiagram(
        r.inputs.geometry, *instances, lines, fmt::format("{}: {}", name, layout),
        {name, fmt::format("fastest for {} of {} workloads", fastest[layout], workloads),
         fmt::format("least energy for {} of {}", leanest[layout], workloads)});
    out += format::SvgFigure(fmt::format("slots-{}", k), SlotDiagramSvg(d), layout);
  }
  return out + "</section>\n";
}

std::string Results(const MigCharacterizeReport& r) {
  std::string out =
      "<section id=\"results\">\n<h2>Every layout, per workload</h2>\n<p class=\"note\">Per "
      "instance: samples/s, the share of time a kernel runs (busy), and power and J/sample by "
      "both attribution methods; the shaded row is the whole GPU (its power, and J/sample over "
      "every instance's samples). Instances that do not fit their copy's memory run nothing.</p>\n";
  for (std::size_t w = 0; w < r.inputs.workloads.size(); ++w) {
    const std::string& workload = r.inputs.workloads[w];
    out += fmt::format("<details{}><summary>{}</summary>\n<table class=\"results\">\n",
                       w == 0 ? " open" : "", format::HtmlEscape(workload)) +
           format::HtmlRow(
               {"layout", "instance", "SMs", "samples/s", "busy", "power W (activity)",
                "power W (SM share)", "J/sample (activity)", "J/sample (SM share)", "clock MHz"},
               "th");
    for (const mig::LayoutResult& res : r.results) {
      if (res.workload != workload) continue;
      int sms = 0;
      for (const mig::InstanceResult& in : res.per_instance) sms += in.sm_count;
      const std::string gpu_j =
          res.gpu_samples_per_s > 0 ? fmt::format("{:.4f}", res.gpu_j_per_sample) : "-";
      out += format::HtmlRow(
          {ShortLayoutName(r.inputs.geometry, res.layout), "whole GPU", std::to_string(sms),
           fmt::format("{:.1f}", res.gpu_samples_per_s), "", fmt::format("{:.0f}", res.gpu_power_w),
           fmt::format("{:.0f}", res.gpu_power_w), gpu_j, gpu_j,
           fmt::format("{:.0f}{}", res.clock_mhz, res.power_limited ? " (power-limited)" : "")},
          "td", "gpu");
      for (const mig::InstanceResult& in : res.per_instance) {
        if (!in.fits) {
          out += format::HtmlRow(
              {"", in.slice, std::to_string(in.sm_count), "does not fit", "", "", "", "", "", ""});
          continue;
        }
        out += format::HtmlRow(
            {"", in.slice, std::to_string(in.sm_count), fmt::format("{:.1f}", in.samples_per_s),
             fmt::format("{:.0f}%", in.busy * 100), fmt::format("{:.1f}", in.power_activity_w),
             fmt::format("{:.1f}", in.power_sm_share_w),
             fmt::format("{:.4f}", in.j_per_sample_activity),
             fmt::format("{:.4f}", in.j_per_sample_sm_share), ""});
      }
    }
    out += "</table>\n</details>\n";
  }
  return out + "</section>\n";
}

// One line per workload over the layouts (x: the layout's position in the sweep).
std::vector<format::Series> PerWorkload(const MigCharacterizeReport& r, bool relative,
                                        double mig::LayoutResult::*field) {
  std::map<std::string, std::size_t> position;
  for (std::size_t k = 0; k < r.inputs.layouts.size(); ++k) position[r.inputs.layouts[k]] = k;
  std::vector<format::Series> out;
  for (const MigWorkloadBest& b : BestPerWorkload(r.results)) {
    format::Series s{.label = b.workload};
    const bool has_base = b.off != nullptr && b.off->gpu_samples_per_s > 0;
    if (relative && !has_base) continue;
    for (const mig::LayoutResult& res : r.results) {
      const auto at = position.find(res.layout);
      if (res.workload != b.workload || res.gpu_samples_per_s <= 0 || at == position.end()) {
        continue;
      }
      const double v = relative ? res.*field / (*b.off).*field : res.*field;
      s.points.emplace_back(static_cast<double>(at->second), v);
    }
    out.push_back(std::move(s));
  }
  return out;
}

format::Plot LayoutAxisPlot(const MigCharacterizeReport& r, std::string name, std::string title,
                            std::string y_label) {
  format::Plot plot{.name = std::move(name),
                    .title = std::move(title),
                    .x_label = "layout",
                    .y_label = std::move(y_label),
                    .rotate_x_tics = true};
  for (std::size_t k = 0; k < r.inputs.layouts.size(); ++k) {
    plot.x_tics.emplace_back(static_cast<double>(k),
                             ShortLayoutName(r.inputs.geometry, r.inputs.layouts[k]));
  }
  return plot;
}

std::vector<format::CaptionedPlot> MigCharacterizePlots(const MigCharacterizeReport& r) {
  const std::string& gpu = r.inputs.geometry.gpu;
  format::Plot throughput =
      LayoutAxisPlot(r, "throughput", fmt::format("Whole-GPU samples/s per layout, {}", gpu),
                     "samples/s relative to MIG off");
  throughput.series = PerWorkload(r, true, &mig::LayoutResult::gpu_samples_per_s);
  format::Plot energy =
      LayoutAxisPlot(r, "energy", fmt::format("Energy per sample per layout, {}", gpu),
                     "J/sample relative to MIG off");
  energy.series = PerWorkload(r, true, &mig::LayoutResult::gpu_j_per_sample);
  format::Plot power = LayoutAxisPlot(
      r, "power", fmt::format("Whole-GPU power per layout, {}", gpu), "GPU power (W)");
  power.series = PerWorkload(r, false, &mig::LayoutResult::gpu_power_w);
  power.y_min = 0.0;
  const double last = static_cast<double>(r.inputs.layouts.size()) - 0.5;
  power.series.push_back(
      {.label = fmt::format("power limit ({:.0f} W)", r.inputs.power_limit_w),
       .points = {{-0.5, r.inputs.power_limit_w}, {last, r.inputs.power_limit_w}},
       .style = format::Style::kLines,
       .dashed = true});
  return {{std::move(throughput),
           "Every instance's samples/s summed, relative to the whole GPU with MIG off, one line "
           "per workload (a layout where nothing fits is left out). Above 1: the layout runs "
           "more work per second than MIG off."},
          {std::move(energy),
           "Whole-GPU energy per sample relative to MIG off, one line per workload. Below 1: "
           "the layout does the same work for less energy."},
          {std::move(power),
           "Whole-GPU power with every instance running its copy, per workload, against the "
           "power limit (when the instances would draw more, their one shared clock drops)."}};
}

format::HtmlReport MigCharacterizeReportHtml(const MigCharacterizeReport& report,
                                             const std::string& plot_dir) {
  format::HtmlReport out;
  const std::string body =
      Header(report) + Inputs(report) + Best(report) + Layouts(report) +
      format::HtmlPlots(MigCharacterizePlots(report), plot_dir, out.warnings) + Results(report) +
      format::HtmlFooter(report.inputs.version, "headroom mig characterize --report --out DIR");
  out.html = format::HtmlPage(
      fmt::format("headroom mig characterize: {}", report.inputs.geometry.gpu), body);
  return out;
}

}  // namespace

core::Result<format::WrittenReport> WriteMigCharacterizeReport(const std::string& dir) {
  HEADROOM_ASSIGN_OR_RETURN(const MigCharacterizeReport report, ReadMigCharacterizeDir(dir));
  return format::WriteReportPage(dir, [&](const std::string& plot_dir) {
    return MigCharacterizeReportHtml(report, plot_dir);
  });
}

}  // namespace headroom::report
