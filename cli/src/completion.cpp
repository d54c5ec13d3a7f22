#include "completion.hpp"

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "capsim/hardware/schema.hpp"
#include "capsim/scenarios/escape.hpp"

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

Values values_of(CLI::Option& o) {
  for (int i = 0;; ++i) {
    const CLI::Validator* v = nullptr;
    try {
      v = o.get_validator(i);
    } catch (const CLI::OptionNotFound&) {
      break;  // CLI11 says how many validators there are only this way
    }
    const std::string& name = v->get_name();
    if (name.starts_with(kMark)) {
      const std::string what = name.substr(kMark.size());
      if (what.starts_with("@")) return Values{{}, what.substr(1)};
      return Values{split(what.substr(1), ' '), ""};
    }
    // CLI::IsMember describes itself as its set, "{train,infer}"; a transformer's map has "->".
    const std::string d = v->get_description();
    if (d.size() > 2 && d.front() == '{' && d.back() == '}' && d.find("->") == std::string::npos)
      return Values{split(d.substr(1, d.size() - 2), ','), ""};
  }
  return {};
}

struct OptionEntry {
  std::vector<std::string> names;  // "--format", "-f"
  std::string help;
  bool takes_value = false;
  Values values;
};

struct Node {
  std::string path;                                           // "capsim catalog list"
  std::vector<std::pair<std::string, std::string>> commands;  // name, description
  std::vector<OptionEntry> options;
  std::vector<Values> positionals;  // in the order they are given
};

bool hidden(const CLI::App& app) { return app.get_group().empty(); }

void collect(CLI::App& app, const std::string& path, std::vector<Node>& out) {
  Node n{path, {}, {}, {}};
  const auto subcommands = app.get_subcommands([](CLI::App* sub) { return !sub->get_name().empty() && !hidden(*sub); });
  for (const CLI::App* sub : subcommands) n.commands.emplace_back(sub->get_name(), sub->get_description());
  bool help = false;
  for (CLI::Option* o : app.get_options([](CLI::Option* opt) { return !opt->get_group().empty(); })) {
    if (!o->nonpositional()) {
      n.positionals.push_back(values_of(*o));
      continue;
    }
    OptionEntry e;
    for (const auto& name : o->get_lnames()) e.names.push_back("--" + name);
    for (const auto& name : o->get_snames()) e.names.push_back("-" + name);
    e.help = o->get_description();
    e.takes_value = o->get_type_size() != 0;
    e.values = values_of(*o);
    help = help || std::find(e.names.begin(), e.names.end(), "--help") != e.names.end();
    n.options.push_back(e);
  }
  if (!help) n.options.push_back(OptionEntry{{"--help"}, "Print this help message and exit", false, {}});
  out.push_back(n);
  for (CLI::App* sub : subcommands) collect(*sub, path + " " + sub->get_name(), out);
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// A node's subcommands and long options: what a word that is no option's value completes to.
std::string words(const Node& n) {
  std::vector<std::string> out;
  for (const auto& [name, _] : n.commands) out.push_back(name);
  for (const auto& o : n.options)
    for (const auto& name : o.names)
      if (name.starts_with("--")) out.push_back(name);
  return joined(out);
}


// The case pattern of an option of node `n` in "$cmdpath $word": 'capsim size --format'|'capsim size -f'.
// The root's options are accepted after any subcommand (CLI11 fallthrough): 'capsim'*' --data'.
std::string option_pattern(const Node& n, const OptionEntry& o) {
  std::string out;
  for (const auto& name : o.names)
    out += (out.empty() ? "" : "|") +
           (n.path == "capsim" ? "'capsim'*" + scenarios::shell_word(" " + name) : scenarios::shell_word(n.path + " " + name));
  return out;
}

// The shell assignment that selects what a value completes to.
std::string values_assignment(const Values& v) {
  return v.lookup.empty() ? "values=" + scenarios::shell_word(joined(v.words)) : "lookup=" + v.lookup;
}

// bash (and zsh through bashcompinit). The words before the cursor are walked once: a word
// naming a subcommand of the command path so far extends it, an option that takes a value
// makes the next word its value (bash splits --opt=value at '=', so the value may follow a
// '=' word), and any other word counts as a positional. The word at the cursor then
// completes to the option's values, the positional's values, or the node's subcommands,
// options and files. Catalog ids come from `capsim __complete` with the --data/--catalog
// given on the line. For zsh: no mapfile (replies are read line by line), and no variable
// named `path` (zsh ties it to $PATH, and the lookup would find no capsim).
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
    if (n.path != "capsim")
      out += "      " + scenarios::shell_word(n.path) + ") cmdpath=\"$cmdpath $w\"; npos=0; continue ;;\n";
  out +=
      "    esac\n"
      "    case \"$w\" in\n"
      "      --data=*|--catalog=*|--catalog-overlay=*) globals+=(\"$w\") ;;\n"
      "      -*=*) ;;\n"
      "      -) npos=$((npos + 1)) ;;\n"
      "      -*)\n"
      "        case \"$cmdpath $w\" in\n";
  for (const auto& n : nodes)
    for (const auto& o : n.options)
      if (o.takes_value) out += "          " + option_pattern(n, o) + ") opt=\"$w\"; skip=1 ;;\n";
  out +=
      "        esac\n"
      "        if ((skip)) && [[ \"$w\" == --data || \"$w\" == --catalog || \"$w\" == --catalog-overlay ]]; then\n"
      "          v=\"${COMP_WORDS[i+1]}\"\n"
      "          [[ \"$v\" == \"=\" ]] && v=\"${COMP_WORDS[i+2]}\"\n"
      "          globals+=(\"$w\" \"$v\")\n"
      "        fi ;;\n"
      "      *) npos=$((npos + 1)) ;;\n"
      "    esac\n"
      "  done\n"
      "  if ((skip)); then\n"
      "    [[ \"$cur\" == \"=\" ]] && cur=''\n"
      "    case \"$cmdpath $opt\" in\n";
  for (const auto& n : nodes)
    for (const auto& o : n.options)
      if (o.takes_value && !o.values.empty())
        out += "      " + option_pattern(n, o) + ") " + values_assignment(o.values) + " ;;\n";
  out +=
      "    esac\n"
      "    if [[ -z \"$values\" && -z \"$lookup\" ]]; then\n"
      "      _capsim_reply < <(compgen -f -- \"$cur\")\n"
      "      return\n"
      "    fi\n"
      "  else\n"
      "    case \"$cmdpath $npos\" in\n";
  for (const auto& n : nodes)
    for (std::size_t i = 0; i < n.positionals.size(); ++i)
      if (!n.positionals[i].empty())
        out += "      " + scenarios::shell_word(n.path + " " + std::to_string(i)) + ") " + values_assignment(n.positionals[i]) +
               " ;;\n";
  out +=
      "    esac\n"
      "    if [[ \"$cur\" == -* || ( -z \"$values\" && -z \"$lookup\" ) ]]; then\n"
      "      local candidates=''\n"
      "      case \"$cmdpath\" in\n";
  for (const auto& n : nodes)
    out += "        " + scenarios::shell_word(n.path) + ") candidates=" + scenarios::shell_word(words(n)) + " ;;\n";
  out +=
      "      esac\n"
      "      if [[ \"$cur\" == -* ]]; then\n"
      "        _capsim_reply < <(compgen -W \"$candidates\" -- \"$cur\")\n"
      "      else\n"
      "        _capsim_reply < <(compgen -W \"$candidates\" -- \"$cur\"; compgen -f -- \"$cur\")\n"
      "      fi\n"
      "      return\n"
      "    fi\n"
      "  fi\n"
      "  if [[ -n \"$lookup\" ]]; then\n"
      "    values=$(\"${COMP_WORDS[0]}\" \"${globals[@]}\" __complete \"$lookup\" 2>/dev/null)\n"
      "  fi\n"
      "  _capsim_reply < <(compgen -W \"$values\" -- \"$cur\")\n"
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
