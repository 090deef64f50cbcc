// `halfway completion bash|zsh`: a shell completion script, written from the CLI11 definition of
// every subcommand at the time it runs, so it always offers the options this binary has.
// Subcommand names and options are completed; any other word falls back to file names (kernel
// files, buffers, dump folders).
#include "cli_util.hpp"
#include "commands.hpp"

#include <set>
#include <sstream>

namespace halfway::cli {
namespace {

// Every option name of `app`, including those of its option groups (nameless subcommands).
void collect_options(const CLI::App& app, std::set<std::string>& names) {
  for (const CLI::Option* o : app.get_options()) {
    for (const auto& l : o->get_lnames())
      names.insert("--" + l);
    for (const auto& s : o->get_snames())
      names.insert("-" + s);
  }
  for (const CLI::App* group : app.get_subcommands([](const CLI::App*) { return true; }))
    if (group->get_name().empty())
      collect_options(*group, names);
}

std::string join(const std::set<std::string>& words) {
  std::string out;
  for (const auto& w : words)
    out += (out.empty() ? "" : " ") + w;
  return out;
}

std::string bash_script(const CLI::App& app) {
  std::set<std::string> top;
  collect_options(app, top);
  std::vector<std::pair<std::string, std::set<std::string>>> subs;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name().empty())
      continue;
    std::set<std::string> options;
    collect_options(*sub, options);
    top.insert(sub->get_name());
    subs.emplace_back(sub->get_name(), std::move(options));
  }
  std::ostringstream s;
  s << "# bash completion for halfway, written by `halfway completion bash`.\n"
       "_halfway() {\n"
       "  local cur=${COMP_WORDS[COMP_CWORD]} sub='' i words\n"
       "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
       "    case ${COMP_WORDS[i]} in\n";
  std::string alternatives;
  for (const auto& [name, options] : subs)
    alternatives += (alternatives.empty() ? "" : "|") + name;
  s << "    " << alternatives << ")\n"
    << "      sub=${COMP_WORDS[i]}\n"
       "      break\n"
       "      ;;\n"
       "    esac\n"
       "  done\n"
       "  case $sub in\n";
  for (const auto& [name, options] : subs)
    s << "  " << name << ") words='" << join(options) << "' ;;\n";
  s << "  *) words='" << join(top) << "' ;;\n"
    << "  esac\n"
       "  # After the subcommand, words that are not options are files: leave them to readline.\n"
       "  if [[ -n $sub && $cur != -* ]]; then\n"
       "    COMPREPLY=()\n"
       "    return\n"
       "  fi\n"
       "  mapfile -t COMPREPLY < <(compgen -W \"$words\" -- \"$cur\")\n"
       "}\n"
       "complete -o default -F _halfway halfway\n";
  return s.str();
}

} // namespace

Runner add_completion(CLI::App& app) {
  auto* sub = app.add_subcommand("completion", "Print a shell completion script (bash or zsh)");
  auto shell = std::make_shared<std::string>();
  sub->add_option("shell", *shell, "bash or zsh")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh"}));
  sub->footer("bash: source <(halfway completion bash)\n"
              "zsh:  source <(halfway completion zsh)");
  return [&app, shell] {
    if (*shell == "bash") {
      Output::get().text(bash_script(app));
    } else {
      // zsh runs the bash function through its bash-completion emulation.
      Output::get().text("#compdef halfway\n"
                         "# zsh completion for halfway, written by `halfway completion zsh`.\n"
                         "autoload -U +X bashcompinit && bashcompinit\n" +
                         bash_script(app));
    }
    return 0;
  };
}

} // namespace halfway::cli
