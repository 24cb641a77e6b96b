// A study: several capacity plans side by side (`headroom study FILE`, app/study.h), e.g. rows of
// different GPUs, or one row under a grid of SLOs, budgets or serving settings. What it prints (one
// row per plan and policy: the servers that fit, over how many, the weekly risk bound at the
// answer, the latency cost), study.json, and report.html with the comparison drawn. Reads
// results, drives nothing. Thread-compatible.
#ifndef HEADROOM_REPORT_STUDY_REPORT_H_
#define HEADROOM_REPORT_STUDY_REPORT_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "format/html.h"
#include "format/text_style.h"
#include "report/plan_report.h"

namespace headroom::report {

inline constexpr const char* kStudyFile = "study.json";

struct StudyPlan {
  std::string name;  // the plan's, with its grid settings: "a100 slo.lp_p50_e2e_pct=10"
  std::vector<std::pair<std::string, std::string>> settings = {};  // the grid's, in order
  std::string dir = {};  // its plan's directory, relative to the study's: "plans/a100-..."
  PlanReport plan = {};
};

struct StudyReport {
  std::string name;
  std::string description = {};
  std::string source = {};  // the study file
  std::string ran_on = {};  // "on 2 threads", "through Slurm: ..."
  std::string version = {};
  std::vector<StudyPlan> plans = {};
};

// One row per plan and policy, the plan's chosen policy starred, and a line on where it ran.
std::string StudyText(const StudyReport& study, const format::TextStyle& style = {});
// study.json: the study, and per plan and policy what the table shows (each plan's own plan.json
// is in its directory).
nlohmann::ordered_json StudyJson(const StudyReport& study);
// DIR/study.json (the plans' directories are written by their plans).
[[nodiscard]] core::Status WriteStudyDir(const std::string& dir, const StudyReport& study);
// The study DIR holds: study.json and each plan's directory (ReadPlanDir). kNotFound when
// study.json is missing; kInvalidArgument naming the file and the field.
[[nodiscard]] core::Result<StudyReport> ReadStudyDir(const std::string& dir);
// DIR/report.html from DIR (`headroom report DIR`, `study --report`): the table, and the
// servers that fit per plan and policy, drawn.
[[nodiscard]] core::Result<format::WrittenReport> WriteStudyReport(const std::string& dir);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_STUDY_REPORT_H_
