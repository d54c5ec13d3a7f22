#include "completion.hpp"

#include <iostream>
#include <string>
#include <vector>

#include "capsim/scenarios/escape.hpp"
#include "output.hpp"

namespace capsim::cli {
namespace {

struct Node {
  std::string path;  // "capsim catalog list"
  std::vector<std::pair<std::string, std::string>> commands;  // name, description
  std::vector<std::pair<std::string, std::string>> options;   // --long or -s, description
};

void collect(const CLI::App& app, const std::string& path, std::vector<Node>& out) {
  Node n{path, {}, {}};
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (!sub->get_name().empty() && sub->get_group() != "") n.commands.emplace_back(sub->get_name(), sub->get_description());
  for (const CLI::Option* o : app.get_options([](const CLI::Option* opt) { return opt->get_group() != ""; }))
    for (const auto& name : o->get_lnames()) n.options.emplace_back("--" + name, o->get_description());
  n.options.emplace_back("--help", "Print this help message and exit");
  out.push_back(n);
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (!sub->get_name().empty()) collect(*sub, path + " " + sub->get_name(), out);
}

std::string words(const Node& n) {
  std::string out;
  for (const auto& [name, _] : n.commands) out += (out.empty() ? "" : " ") + name;
  for (const auto& [name, _] : n.options) out += (out.empty() ? "" : " ") + name;
  return out;
}

// bash (and zsh through bashcompinit): the command path is the words that name subcommands;
// offer that node's subcommands and options, and files for anything else.
std::string bash_script(const std::vector<Node>& nodes) {
  std::string out =
      "# capsim completion for bash: source <(capsim completion bash)\n"
      "_capsim() {\n"
      "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" path=capsim i w\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    w=\"${COMP_WORDS[i]}\"\n"
      "    case \"$path $w\" in\n";
  for (const auto& n : nodes)
    if (n.path != "capsim") out += "      " + scenarios::shell_word(n.path) + ") path=\"$path $w\" ;;\n";
  out += "    esac\n"
         "  done\n"
         "  local candidates=\"\"\n"
         "  case \"$path\" in\n";
  for (const auto& n : nodes) out += "    " + scenarios::shell_word(n.path) + ") candidates=" + scenarios::shell_word(words(n)) + " ;;\n";
  out += "  esac\n"
         "  if [[ \"$cur\" == -* ]]; then\n"
         "    mapfile -t COMPREPLY < <(compgen -W \"$candidates\" -- \"$cur\")\n"
         "  else\n"
         "    mapfile -t COMPREPLY < <(compgen -W \"$candidates\" -- \"$cur\"; compgen -f -- \"$cur\")\n"
         "  fi\n"
         "}\n"
         "complete -o filenames -F _capsim capsim\n";
  return out;
}

std::string zsh_script(const std::vector<Node>& nodes) {
  return "#compdef capsim\n# capsim completion for zsh: source <(capsim completion zsh)\n"
         "autoload -U +X bashcompinit && bashcompinit\n" +
         bash_script(nodes);
}

std::string fish_escape(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '\'' ? std::string("\\'") : std::string(1, c);
  return out;
}

// fish: each node's subcommands and options, offered once the words of its path were seen.
std::string fish_script(const std::vector<Node>& nodes) {
  std::string out = "# capsim completion for fish: capsim completion fish | source\ncomplete -c capsim -f\n";
  for (const auto& n : nodes) {
    std::string condition;
    if (n.path == "capsim") {
      condition = "__fish_use_subcommand";
    } else {
      const std::string rest = n.path.substr(7);  // after "capsim "
      std::string last = rest.substr(rest.rfind(' ') == std::string::npos ? 0 : rest.rfind(' ') + 1);
      condition = "__fish_seen_subcommand_from " + last;
    }
    for (const auto& [name, help] : n.commands)
      out += "complete -c capsim -n '" + condition + "' -a " + name + " -d '" + fish_escape(help) + "'\n";
    for (const auto& [name, help] : n.options)
      out += "complete -c capsim -n '" + condition + "' -l " + name.substr(2) + " -d '" + fish_escape(help) + "'\n";
  }
  out += "complete -c capsim -n 'not __fish_use_subcommand' -F\n";
  return out;
}

}  // namespace

void add_completion_command(CLI::App& app, int& exit_code) {
  auto shell = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("completion", "Print a shell completion script: bash, zsh or fish");
  cmd->add_option("shell", *shell, "bash, zsh or fish")->required()->check(CLI::IsMember({"bash", "zsh", "fish"}));
  cmd->footer(
      "Examples:\n"
      "  capsim completion bash > ~/.local/share/bash-completion/completions/capsim\n"
      "  source <(capsim completion bash)                  # this shell only\n"
      "  capsim completion zsh > \"${fpath[1]}/_capsim\"\n"
      "  capsim completion fish > ~/.config/fish/completions/capsim.fish");
  cmd->callback([&app, &exit_code, shell] {
    std::vector<Node> nodes;
    collect(app, "capsim", nodes);
    std::cout << (*shell == "bash" ? bash_script(nodes) : *shell == "zsh" ? zsh_script(nodes) : fish_script(nodes));
    exit_code = kExitOk;
  });
}

}  // namespace capsim::cli
