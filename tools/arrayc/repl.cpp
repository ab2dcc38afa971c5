// The interactive loop: libedit line editing, history in a file, tab completion of commands,
// functions, dtypes, variables and (after :load) file names, multi-line input (a line that leaves
// a bracket open, or ends in an operator or '=', continues on the next; an empty line ends it),
// and Ctrl-C: at the prompt it drops the line, during a computation it stops it.
#include "repl.h"

#include <editline/readline.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "interrupt.h"

namespace arrayc::tool {

namespace {

Session* g_session = nullptr;              // for the completion callbacks (C interface)
std::vector<std::string> g_candidates;     // of the completion in progress

char* next_candidate(const char* text, int state) {
  static size_t i;
  if (state == 0) i = 0;
  size_t len = std::strlen(text);
  while (i < g_candidates.size()) {
    const std::string& c = g_candidates[i++];
    if (c.compare(0, len, text) == 0) return strdup(c.c_str());
  }
  return nullptr;
}

// The files and directories whose path starts with `path` (the argument of :load up to the
// cursor), each written as `text` (the word being completed, which ends the path) + the rest.
void add_file_candidates(const std::string& path, const std::string& text) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.compare(0, base.size(), base) != 0 || (name[0] == '.' && base.empty())) continue;
    bool is_dir = entry.is_directory(ec);
    g_candidates.push_back(text + name.substr(base.size()) + (is_dir ? "/" : ""));
  }
}

char** complete(const char* text, int start, int end) {
  rl_attempted_completion_over = 1;  // no default completion
  g_candidates.clear();
  std::string line(rl_line_buffer ? rl_line_buffer : "");
  size_t first = line.find_first_not_of(" \t");
  bool command_word = first != std::string::npos && line[first] == ':' &&
                      static_cast<size_t>(start) == first + 1;
  bool load_arg = first != std::string::npos && line.compare(first, 6, ":load ") == 0 &&
                  static_cast<size_t>(start) >= first + 6 && static_cast<size_t>(end) <= line.size();
  if (load_arg) {
    std::string path = line.substr(first + 6, static_cast<size_t>(end) - first - 6);
    path.erase(0, path.find_first_not_of(" \t") == std::string::npos ? path.size() : path.find_first_not_of(" \t"));
    add_file_candidates(path, text);
  } else if (command_word) {
    for (std::string_view c : lang::command_names()) g_candidates.emplace_back(c);
  } else {
    for (const std::string& n : Session::builtin_names()) g_candidates.push_back(n);
    for (const std::string& n : g_session->user_names()) g_candidates.push_back(n);
  }
  return rl_completion_matches(text, next_candidate);
}

bool blank(const std::string& s) { return s.find_first_not_of(" \t\r") == std::string::npos; }

// Reads one line: libedit on a terminal, plain getline otherwise. False at end of input.
bool read_line(bool edit, const char* prompt, std::string& out) {
  if (edit) {
    char* line = readline(prompt);
    if (!line) return false;
    out = line;
    std::free(line);
    return true;
  }
  std::cout << prompt << std::flush;
  return static_cast<bool>(std::getline(std::cin, out));
}

}  // namespace

std::string history_path() {
  if (const char* p = std::getenv("ARRAYC_HISTORY")) return p;
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.arrayc_history";
}

int run_repl(Session& session) {
  bool edit = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
  g_session = &session;
  std::string hist = history_path();
  if (edit) {
    rl_readline_name = "arrayc";
    rl_attempted_completion_function = complete;
    rl_completion_append_character = '\0';
    static char breaks[] = " \t\n()[],=+-*/<>&|~!@:;";
    rl_completer_word_break_characters = breaks;
    rl_basic_word_break_characters = breaks;  // the one libedit's completion reads
    rl_initialize();
    using_history();
    stifle_history(2000);
    read_history(hist.c_str());
  }
  install_sigint_handler();
  std::cout << "arrayc: array programs, compiled; :help for help, :quit or Ctrl-D to leave\n";
  std::string buffer;
  std::string line;
  for (;;) {
    clear_sigint();
    if (!read_line(edit, buffer.empty() ? ">>> " : "... ", line)) {
      if (sigint_received()) {  // Ctrl-C at the prompt: drop the line (and a multi-line input)
        std::cout << "^C\n";
        std::cin.clear();
        buffer.clear();
        continue;
      }
      std::cout << "\n";
      break;
    }
    if (edit && !blank(line)) {
      add_history(line.c_str());
      write_history(hist.c_str());
    }
    if (buffer.empty() && blank(line)) continue;
    bool force = !buffer.empty() && blank(line);  // an empty line ends a multi-line input
    buffer += line;
    buffer += '\n';
    auto prog = std::make_shared<lang::Program>();
    try {
      lang::parse_program(buffer, *prog);
    } catch (const lang::SyntaxError& e) {
      if (e.incomplete && !force) continue;
      session.report("<stdin>", prog->source, UserError{e.pos, e.message});
      buffer.clear();
      continue;
    }
    buffer.clear();
    clear_sigint();
    session.clear_interrupted();
    session.run(prog, "<stdin>", /*keep_going=*/true);
    std::cout.flush();
    if (session.quit_requested()) break;
  }
  return 0;
}

}  // namespace arrayc::tool
