// The interactive loop: libedit line editing, history in a file, tab completion of commands,
// functions and variables, and multi-line input (a line that leaves a bracket open, or ends in an
// operator or '=', continues on the next; an empty line ends it).
#include "repl.h"

#include <editline/readline.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

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

char** complete(const char* text, int start, int /*end*/) {
  rl_attempted_completion_over = 1;  // no file-name completion
  g_candidates.clear();
  std::string line(rl_line_buffer ? rl_line_buffer : "");
  size_t first = line.find_first_not_of(" \t");
  bool command_word = first != std::string::npos && line[first] == ':' &&
                      static_cast<size_t>(start) == first + 1;
  if (command_word) {
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
    rl_initialize();
    using_history();
    stifle_history(2000);
    read_history(hist.c_str());
  }
  std::cout << "arrayc: array programs, compiled; :help for help, :quit or Ctrl-D to leave\n";
  std::string buffer;
  std::string line;
  for (;;) {
    if (!read_line(edit, buffer.empty() ? ">>> " : "... ", line)) {
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
    session.run(prog, "<stdin>", /*keep_going=*/true);
    std::cout.flush();
    if (session.quit_requested()) break;
  }
  return 0;
}

}  // namespace arrayc::tool
