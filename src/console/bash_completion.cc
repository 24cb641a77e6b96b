#include "console/bash_completion.h"

#include <cctype>
#include <map>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace headroom::console {
namespace {

// One command of the tree as the script sees it.
struct Node {
  std::string path = {};                          // "headroom mig plan"
  std::vector<std::string> words = {};            // subcommands, then the positionals' choices
  std::vector<std::string> options = {};          // "--name", "-n": own, then inherited ones
  std::map<std::string, std::string> kinds = {};  // option -> "flag", "value" or "value a b c"
};

// `text` as one single-quoted bash word.
std::string Quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// "flag" for an option that takes no value, else "value" and its choices, if it has any.
std::string Kind(CLI::Option& option) {
  if (option.get_expected_max() == 0) return "flag";
  const std::vector<std::string> choices = OptionChoices(option);
  return choices.empty() ? "value" : fmt::format("value {}", fmt::join(choices, " "));
}

// Appends `app`'s node, then its subcommands' nodes, depth first. `parent` is the node of the
// command above (nullptr at the top); with CLI11's fallthrough its options also work here.
void Collect(CLI::App& app, const std::string& path, const Node* parent, std::vector<Node>* out) {
  Node node{.path = path};
  const auto subcommands = app.get_subcommands([](CLI::App*) { return true; });
  for (CLI::App* sub : subcommands) {
    if (!sub->get_group().empty()) node.words.push_back(sub->get_name());  // empty: hidden
  }
  for (CLI::Option* option : app.get_options()) {
    if (option->get_group().empty()) continue;  // hidden
    if (!option->nonpositional()) {
      for (std::string& choice : OptionChoices(*option)) node.words.push_back(std::move(choice));
      continue;
    }
    std::vector<std::string> names;
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    for (const std::string& name : option->get_snames()) names.push_back("-" + name);
    const std::string kind = Kind(*option);
    for (const std::string& name : names) {
      if (node.kinds.emplace(name, kind).second) node.options.push_back(name);
    }
  }
  if (parent != nullptr && app.get_fallthrough()) {
    for (const std::string& name : parent->options) {
      if (node.kinds.emplace(name, parent->kinds.at(name)).second) node.options.push_back(name);
    }
  }
  out->push_back(node);
  for (CLI::App* sub : subcommands) {
    if (!sub->get_group().empty()) Collect(*sub, path + " " + sub->get_name(), &node, out);
  }
}

// The completion function itself: walks the words before the cursor to find the command (and
// skips option values), then offers the previous option's choices, the command's options, or
// its subcommands. An empty reply falls back to file names (`complete -o default`), which is what
// free values such as --out and --scenario FILE want.
constexpr std::string_view kCompleteFunction = R"sh(_{fn}() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} prev='' path={name} word kind i
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${{COMP_WORDS[i]}}
    case $word in
      --) return 0 ;;
      -*=*) ;;
      -*)
        kind=$(_{fn}_option "$path" "$word")
        if [[ $kind == value* ]]; then
          [[ ${{COMP_WORDS[i + 1]}} == = ]] && ((i++))
          ((i++))
        fi
        ;;
      *)
        _{fn}_command "$path $word" && path="$path $word"
        ;;
    esac
  done
  ((COMP_CWORD > 0)) && prev=${{COMP_WORDS[COMP_CWORD - 1]}}
  # bash splits --opt=value at '=' (COMP_WORDBREAKS).
  if [[ $cur == = ]]; then
    cur=''
  elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
    prev=${{COMP_WORDS[COMP_CWORD - 2]}}
  fi
  if [[ $prev == -* ]]; then
    kind=$(_{fn}_option "$path" "$prev")
    if [[ $kind == value ]]; then
      return 0
    elif [[ $kind == value\ * ]]; then
      mapfile -t COMPREPLY < <(compgen -W "${{kind#value }}" -- "$cur")
      return 0
    fi
  fi
  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_{fn}_options "$path")" -- "$cur")
  else
    mapfile -t COMPREPLY < <(compgen -W "$(_{fn}_words "$path")" -- "$cur")
  fi
  return 0
}}
complete -o bashdefault -o default -F _{fn} {name}
)sh";

}  // namespace

std::vector<std::string> OptionChoices(CLI::Option& option) {
  for (int i = 0;; ++i) {
    const CLI::Validator* validator = nullptr;
    try {
      validator = option.get_validator(i);
    } catch (const CLI::OptionNotFound&) {  // CLI11 2.1: past the last validator
      return {};
    }
    if (validator == nullptr) return {};
    // IsMember describes itself as "{a,b,c}"; a map (CheckedTransformer) as "{a->1,...}".
    const std::string text = validator->get_description();
    if (text.size() < 2 || text.front() != '{' || text.back() != '}') continue;
    const std::string_view inner = std::string_view(text).substr(1, text.size() - 2);
    if (inner.empty() || inner.find_first_of("{} \t->") != std::string_view::npos) continue;
    std::vector<std::string> choices;
    std::size_t start = 0;
    for (std::size_t comma; (comma = inner.find(',', start)) != std::string_view::npos;) {
      choices.emplace_back(inner.substr(start, comma - start));
      start = comma + 1;
    }
    choices.emplace_back(inner.substr(start));
    return choices;
  }
}

std::string BashCompletion(CLI::App& app) {
  const std::string name = app.get_name();
  std::string fn;  // a bash identifier from the program name
  for (char c : name) fn += std::isalnum(static_cast<unsigned char>(c)) != 0 ? c : '_';
  std::vector<Node> nodes;
  Collect(app, name, nullptr, &nodes);

  std::string words = fmt::format(
      "# The subcommands of a command (and its positionals' choices).\n"
      "_{}_words() {{\n  case $1 in\n",
      fn);
  std::string options = fmt::format(
      "# The options of a command, inherited ones included.\n"
      "_{}_options() {{\n  case $1 in\n",
      fn);
  std::string kinds = fmt::format(
      "# What an option of a command takes: flag (nothing), value, or value and its choices.\n"
      "_{}_option() {{\n  case \"$1 $2\" in\n",
      fn);
  for (const Node& node : nodes) {
    if (!node.words.empty()) {
      words += fmt::format("    {}) echo {} ;;\n", Quote(node.path),
                           Quote(fmt::format("{}", fmt::join(node.words, " "))));
    }
    options += fmt::format("    {}) echo {} ;;\n", Quote(node.path),
                           Quote(fmt::format("{}", fmt::join(node.options, " "))));
    for (const std::string& option : node.options) {
      kinds += fmt::format("    {}) echo {} ;;\n", Quote(node.path + " " + option),
                           Quote(node.kinds.at(option)));
    }
  }
  std::string commands =
      fmt::format("# Whether the words are a command.\n_{}_command() {{\n  case $1 in\n", fn);
  for (const Node& node : nodes) commands += fmt::format("    {}) return 0 ;;\n", Quote(node.path));
  commands += "  esac\n  return 1\n}\n\n";
  const std::string tail = "  esac\n}\n\n";
  return fmt::format(
             "# bash completion for {0}, generated by `{0} completion bash` from its command-line\n"
             "# definition; regenerate it after upgrading {0}. Install: docs/cli.md.\n\n",
             name) +
         commands + words + tail + options + tail + kinds + tail +
         fmt::format(fmt::runtime(kCompleteFunction), fmt::arg("fn", fn), fmt::arg("name", name));
}

}  // namespace headroom::console
