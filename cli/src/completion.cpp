#include "completion.hpp"

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "capsim/hardware/schema.hpp"
#include "capsim/scenarios/escape.hpp"
#include "output.hpp"

namespace capsim::cli {
namespace {

// An option's completion values ride on the option itself, as a Validator that checks nothing
// and whose name carries them: "capsim-complete:=table json" (fixed words) or
// "capsim-complete:@gpus" (a catalog lookup). CLI11 keeps no other user data on an option.
constexpr std::string_view kMark = "capsim-complete:";

const char* lookup_name(CatalogValues v) {
  switch (v) {
    case CatalogValues::gpus:
      return "gpus";
    case CatalogValues::node_types:
      return "node-types";
    case CatalogValues::ids:
      return "ids";
  }
  return "ids";
}

CLI::Option* mark(CLI::Option* option, const std::string& what) {
  option->check(CLI::Validator([](std::string&) { return std::string(); }, "", std::string(kMark) + what));
  return option;
}

// What a value completes to: fixed words, or a catalog lookup ("gpus"); neither: a file.
struct Values {
  std::vector<std::string> words;
  std::string lookup;
  bool empty() const { return words.empty() && lookup.empty(); }
};

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> out;
  std::string word;
  for (char c : text) {
    if (c == separator) {
      if (!word.empty()) out.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) out.push_back(word);
  return out;
}

#include "capsim/hardware/schema.hpp"
#include "capsim/scenarios/escape.hpp"
#include "output.hpp"
std::string bash_script(const std::vector<Node>& nodes) {
  std::string out =
      "# capsim completion for bash: source <(capsim completion bash)\n"
      "_capsim_reply() {\n"
      "  local word\n"
      "  COMPREPLY=()\n"
      "  while IFS= read -r word; do COMPREPLY+=(\"$word\"); done\n"
      "}\n"
      "_capsim() {\n"
      "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" cmdpath=capsim i w v opt='' skip=0 npos=0 values='' lookup=''\n"
      "  local -a globals=()\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    w=\"${COMP_WORDS[i]}\"\n"
      "    if [[ \"$w\" == \"=\" ]]; then skip=1; continue; fi\n"
      "    if ((skip)); then skip=0; continue; fi\n"
      "    case \"$cmdpath $w\" in\n";
  for (const auto& n : nodes)
#include "capsim/hardware/schema.hpp"
#include "capsim/scenarios/escape.hpp"
#include "output.hpp"
  return out;
}

std::string zsh_script(const std::vector<Node>& nodes) {
  return "#compdef capsim\n# capsim completion for zsh: source <(capsim completion zsh)\n"
         "autoload -U +X bashcompinit && bashcompinit\n" +
         bash_script(nodes);
}

std::string fish_escape(const std::string& s) {
  std::string out;
  for (char c : s) out += (c == '\'' || c == '\\') ? "\\" + std::string(1, c) : std::string(1, c);
  return out;
}

// fish's argument list for a value: fixed words, or the lookup run when completing.
std::string fish_arguments(const Values& v) {
  if (!v.lookup.empty()) return "'(capsim __complete " + v.lookup + " 2>/dev/null)'";
  return "'" + fish_escape(joined(v.words)) + "'";
}

// fish: each node's subcommands, options and values, offered once every word of its path was seen.
std::string fish_script(const std::vector<Node>& nodes) {
  std::string out = "# capsim completion for fish: capsim completion fish | source\ncomplete -c capsim -f\n";
  for (const auto& n : nodes) {
    std::string condition;
    if (n.path == "capsim") {
      condition = "__fish_use_subcommand";
    } else {
      for (const auto& word : split(n.path.substr(7), ' '))  // after "capsim "
        condition += (condition.empty() ? "" : "; and ") + std::string("__fish_seen_subcommand_from ") + word;
    }
    for (const auto& [name, help] : n.commands)
      out += "complete -c capsim -n '" + condition + "' -a " + name + " -d '" + fish_escape(help) + "'\n";
    for (const auto& o : n.options) {
      std::string flags;
      for (const auto& name : o.names)
        flags += name.starts_with("--") ? " -l " + name.substr(2) : " -s " + name.substr(1);
      // -r: takes a value (a file unless listed); -x: takes one of the listed values only.
      const std::string value = !o.takes_value     ? ""
                                : o.values.empty() ? " -r -F"
                                                   : " -x -a " + fish_arguments(o.values);
      out += "complete -c capsim -n '" + condition + "'" + flags + value + " -d '" + fish_escape(o.help) + "'\n";
    }
    for (const auto& p : n.positionals)
      if (!p.empty()) out += "complete -c capsim -n '" + condition + "' -a " + fish_arguments(p) + "\n";
  }
  out += "complete -c capsim -n 'not __fish_use_subcommand' -F\n";
  return out;
}

// The ids `capsim __complete KIND` prints, from the catalog the global options select.
int print_catalog_ids(const GlobalOptions& global, const std::string& kind) {
  auto ws = open_workspace(global, hardware::Access::read_only);
  if (!ws) return report_errors(ws.errors());
  using hardware::EntityKind;
  std::vector<EntityKind> kinds;
  if (kind == "gpus")
    kinds = {EntityKind::gpu};
  else if (kind == "node-types")
    kinds = {EntityKind::instance, EntityKind::server};
  else
    kinds.assign(std::begin(hardware::kAllKinds), std::end(hardware::kAllKinds));
  for (const auto k : kinds)
    for (const auto& id : ws->catalog->ids(k)) std::cout << id << '\n';
  return kExitOk;
}

}  // namespace

CLI::Option* complete_values(CLI::Option* option, const std::vector<std::string>& words) {
  return mark(option, "=" + joined(words));
}

CLI::Option* complete_from_catalog(CLI::Option* option, CatalogValues values) {
  return mark(option, std::string("@") + lookup_name(values));
}

void add_completion_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto shell = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("completion", "Print a shell completion script: bash, zsh or fish");
  cmd->add_option("shell", *shell, "bash, zsh or fish")->required()->check(CLI::IsMember({"bash", "zsh", "fish"}));
  cmd->footer(
      "Examples:\n"
      "  capsim completion bash > ~/.local/share/bash-completion/completions/capsim\n"
      "  source <(capsim completion bash)                  # this shell only\n"
      "  capsim completion zsh > \"${fpath[1]}/_capsim\"\n"
      "  capsim completion fish > ~/.config/fish/completions/capsim.fish\n"
      "Commands, options and fixed values (formats, export targets, sections, presets) are written into\n"
      "the script; GPU ids, node types and catalog ids are looked up in the catalog when completing.");
  cmd->callback([&app, &exit_code, shell] {
    std::vector<Node> nodes;
    collect(app, "capsim", nodes);
    std::cout << (*shell == "bash" ? bash_script(nodes) : *shell == "zsh" ? zsh_script(nodes) : fish_script(nodes));
    exit_code = kExitOk;
  });

  // Hidden (no group): the scripts' catalog lookups.
  auto kind = std::make_shared<std::string>();
  auto* lookup = app.add_subcommand("__complete", "Print catalog ids for shell completion, one a line")->group("");
  lookup->add_option("kind", *kind, "gpus, node-types or ids")
      ->required()
      ->check(CLI::IsMember({"gpus", "node-types", "ids"}));
  lookup->callback([&global, &exit_code, kind] { exit_code = print_catalog_ids(global, *kind); });
}

}  // namespace capsim::cli
