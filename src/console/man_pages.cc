#include "console/man_pages.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string_view>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "console/bash_completion.h"
#include "core/files.h"

namespace headroom::console {
namespace {

// `text` safe as roff running text: backslashes escaped, hyphens of option names kept as
// hyphens (\-), and a line that would start with a control character ('.' or ') guarded.
std::string Roff(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (const char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
    line_start = c == '\n';
  }
  return out;
}

std::string Upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return text;
}

// `text` ending in a full stop, so that what is appended to it reads as the next sentence.
std::string Sentence(std::string text) {
  if (!text.empty() && text.back() != '.') text += '.';
  return text;
}

// The visible (non-hidden) subcommands of `app`.
std::vector<CLI::App*> VisibleSubcommands(CLI::App& app) {
  std::vector<CLI::App*> out;
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (!sub->get_group().empty()) out.push_back(sub);
  }
  return out;
}

// "headroom mig plan" -> "headroom-mig-plan".
std::string PageName(const std::string& path) {
  std::string name = path;
  std::replace(name.begin(), name.end(), ' ', '-');
  return name;
}

// The top of the tree `app` is in.
CLI::App& Top(CLI::App& app) {
  CLI::App* top = &app;
  while (top->get_parent() != nullptr) top = top->get_parent();
  return *top;
}

// The first sentence or line of a description, for the NAME line.
std::string Summary(const std::string& description, const std::string& top_name) {
  std::string first = description.substr(0, description.find('\n'));
  if (const size_t colon = first.find(": "); first.rfind(top_name, 0) == 0 && colon != first.npos) {
    first = first.substr(colon + 2);  // the top command's "headroom: find ..."
  }
  if (const size_t stop = first.find(". "); stop != std::string::npos) first.resize(stop);
  while (!first.empty() && (first.back() == '.' || first.back() == ' ')) first.pop_back();
  return first;
}

// An option's names as they are typed: "-o, --out".
std::string OptionNames(CLI::Option& option) {
  std::vector<std::string> names;
  for (const std::string& name : option.get_snames()) names.push_back("-" + name);
  for (const std::string& name : option.get_lnames()) names.push_back("--" + name);
  return fmt::format("{}", fmt::join(names, ", "));
}

// One option as a tagged paragraph: names and value, then its description, choices, default and
// environment variable.
std::string OptionEntry(CLI::Option& option) {
  std::string head = option.nonpositional() ? fmt::format("\\fB{}\\fR", Roff(OptionNames(option)))
                                            : fmt::format("\\fI{}\\fR", Roff(option.get_name()));
  const std::vector<std::string> choices = OptionChoices(option);
  if (option.nonpositional() && option.get_expected_max() != 0) {
    std::string value = option.get_option_text();
    if (value.empty()) value = option.get_type_name().substr(0, option.get_type_name().find(':'));
    if (value.empty()) value = "VALUE";
    head += fmt::format(" \\fI{}\\fR", Roff(value));
  }
  std::string body = Sentence(option.get_description());
  if (!choices.empty()) body += fmt::format(" One of: {}.", fmt::join(choices, ", "));
  if (!option.get_default_str().empty()) {
    body += fmt::format(" Default: {}.", option.get_default_str());
  }
  if (!option.get_envname().empty()) {
    body += fmt::format(" Environment: {}.", option.get_envname());
  }
  if (option.get_required()) body += " Required.";
  return fmt::format(".TP\n{}\n{}\n", head, Roff(body));
}

// The long names of the top command's own options ("--catalog, --verbose, ..."), which CLI11's
// fallthrough lets every subcommand take.
std::string GlobalOptionNames(CLI::App& app) {
  std::vector<std::string> names;
  for (CLI::Option* option : Top(app).get_options()) {
    if (option->get_group().empty() || !option->nonpositional()) continue;
    if (option->get_lnames().empty()) continue;
    const std::string& name = option->get_lnames().front();
    if (name != "help" && name != "version") names.push_back("--" + name);
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string Synopsis(CLI::App& app, const std::string& path,
                     const std::vector<CLI::App*>& subcommands) {
  std::string out = fmt::format(".B {}\n", Roff(path));
  bool has_options = false;
  for (CLI::Option* option : app.get_options()) {
    if (option->get_group().empty()) continue;
    if (option->nonpositional()) {
      has_options = true;
    } else {
      const std::string value = fmt::format("\\fI{}\\fR", Roff(option->get_name()));
      out += option->get_required() ? value + "\n" : "[" + value + "]\n";
    }
  }
  if (has_options) out.insert(out.find('\n') + 1, "[\\fIOPTIONS\\fR]\n");
  if (!subcommands.empty()) out += "\\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n";
  return out;
}

ManPage Page(CLI::App& app, const std::string& path, const Manual& manual,
             const std::vector<std::string>& see_also) {
  const std::string name = PageName(path);
  const std::string& top = Top(app).get_name();
  const std::vector<CLI::App*> subcommands = VisibleSubcommands(app);
  std::string text = fmt::format(".TH {} 1 \"\" \"{}\" \"{} manual\"\n", Upper(name),
                                 Roff(manual.version), Roff(top));
  text +=
      fmt::format(".SH NAME\n{} \\- {}\n", Roff(name), Roff(Summary(app.get_description(), top)));
  text += ".SH SYNOPSIS\n" + Synopsis(app, path, subcommands);
  text += fmt::format(".SH DESCRIPTION\n{}\n", Roff(app.get_description()));
  std::string options;
  for (CLI::Option* option : app.get_options()) {
    if (!option->get_group().empty()) options += OptionEntry(*option);
  }
  if (!options.empty()) text += ".SH OPTIONS\n" + options;
  if (app.get_parent() != nullptr && app.get_fallthrough()) {
    text += fmt::format(".PP\nThe global options of \\fB{}\\fR(1) ({}) also work here.\n",
                        Roff(top), Roff(GlobalOptionNames(app)));
  }
  if (!subcommands.empty()) {
    text += ".SH COMMANDS\n";
    for (CLI::App* sub : subcommands) {
      text += fmt::format(".TP\n\\fB{}\\fR\n{} See \\fB{}\\fR(1).\n", Roff(sub->get_name()),
                          Roff(Sentence(sub->get_description())),
                          Roff(PageName(path + " " + sub->get_name())));
    }
  }
  if (!manual.exit_status.empty()) {
    text += fmt::format(".SH EXIT STATUS\n{}\n", Roff(manual.exit_status));
  }
  std::vector<std::string> refs;
  for (const std::string& page : see_also) {
    if (page != name) refs.push_back(fmt::format("\\fB{}\\fR(1)", Roff(page)));
  }
  text += ".SH SEE ALSO\n";
  if (!refs.empty()) text += fmt::format("{}\n.PP\n", fmt::join(refs, ",\n"));
  if (!manual.docs.empty()) text += Roff(manual.docs) + "\n";
  return {name + ".1", text};
}

// Appends the pages of `app` and every visible command under it, depth first; each page refers
// to the top command's page and to the page of the command above it.
void CollectPages(CLI::App& app, const std::string& path, const Manual& manual,
                  const std::vector<std::string>& see_also, std::vector<ManPage>* out) {
  out->push_back(Page(app, path, manual, see_also));
  std::vector<std::string> refs = {app.get_name()};
  if (app.get_parent() != nullptr) refs = {see_also.front(), PageName(path)};
  for (CLI::App* sub : VisibleSubcommands(app)) {
    CollectPages(*sub, path + " " + sub->get_name(), manual, refs, out);
  }
}

}  // namespace

std::vector<ManPage> ManPages(CLI::App& app, const Manual& manual) {
  std::vector<ManPage> pages;
  CollectPages(app, app.get_name(), manual, {}, &pages);
  return pages;
}

core::Result<std::vector<std::string>> WriteManPages(CLI::App& app, const Manual& manual,
                                                     const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{}: cannot create the directory: {}", dir, ec.message())));
  }
  std::vector<std::string> paths;
  for (const ManPage& page : ManPages(app, manual)) {
    paths.push_back((std::filesystem::path(dir) / page.file).string());
    HEADROOM_RETURN_IF_ERROR(core::WriteFileAtomically(paths.back(), page.text));
  }
  return paths;
}

}  // namespace headroom::console
