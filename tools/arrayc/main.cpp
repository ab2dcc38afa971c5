// arrayc: the REPL and batch runner that shows every compiler stage (docs/repl.md).
//
//   arrayc                      REPL on a terminal; a program from stdin otherwise
//   arrayc FILE | -             run a program, print its results
//   arrayc -c 'PROGRAM'         run the program given on the command line
//   arrayc --emit=STAGE FILE    print one stage of each bare expression instead of its value
//
// Exit status: 0 success, 1 an error in the program (syntax, names, shapes, dtypes, a stage
// that cannot be made here), 2 bad command-line usage, 130 stopped by Ctrl-C (SIGINT).
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "gpu_stages.h"
#include "interrupt.h"
#include "repl.h"
#include "session.h"

namespace {

const char* kUsage =
    "usage: arrayc [options] [FILE | -]\n"
    "  (no FILE)          the REPL on a terminal, else read the program from stdin\n"
    "  -c PROGRAM         run PROGRAM (statements separated by newlines or ';')\n"
    "  -i                 the REPL even when stdin is not a terminal\n"
    "  --emit=STAGE       print STAGE of each bare expression instead of its value:\n"
    "                     graph, optgraph, fused, kernels, llvm, opt, asm, ptx, cubin\n"
    "  --sm=sm_NN         the GPU architecture for --emit=ptx (default sm_90)\n"
    "  --fusion=on|off    fuse elementwise work (default on; ARRAYC_FUSION=0 also turns it off)\n"
    "  --fast-math=on|off the math library's fast mode (default off; ARRAYC_FAST_MATH=1 turns it on)\n"
    "  --device=cpu|gpuN  where arrays live (default cpu; ARRAYC_DEVICE)\n"
    "  -h, --help         this text\n";

int usage_error(const std::string& msg) {
  std::cerr << "arrayc: " << msg << "\n" << kUsage;
  return 2;
}

int batch_status(const arrayc::tool::Session& s, bool ok) {
  if (s.interrupted()) return 130;
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace arrayc::tool;
  Options opts;
  std::string file;
  std::string inline_program;
  bool have_inline = false, force_repl = false, have_file = false;
  std::string device;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* name) -> std::optional<std::string> {
      std::string prefix = std::string(name) + "=";
      if (a.rfind(prefix, 0) == 0) return a.substr(prefix.size());
      return std::nullopt;
    };
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (a == "-c") {
      if (i + 1 >= argc) return usage_error("-c needs a program");
      inline_program = argv[++i];
      have_inline = true;
    } else if (a == "-i") {
      force_repl = true;
    } else if (auto v = value("--emit")) {
      auto s = stage_from_name(*v);
      if (!s) return usage_error("unknown stage '" + *v + "'");
      opts.emit = s;
    } else if (auto v2 = value("--sm")) {
      if (v2->rfind("sm_", 0) != 0 || v2->size() < 5) return usage_error("--sm wants sm_NN, as sm_90");
      opts.sm = *v2;
    } else if (auto v3 = value("--fusion")) {
      if (*v3 != "on" && *v3 != "off") return usage_error("--fusion wants on or off");
      arrayc::set_fusion(*v3 == "on");
    } else if (auto v5 = value("--fast-math")) {
      if (*v5 != "on" && *v5 != "off") return usage_error("--fast-math wants on or off");
      arrayc::set_fast_math(*v5 == "on");
    } else if (auto v4 = value("--device")) {
      device = *v4;
    } else if (a.size() > 1 && a[0] == '-') {
      return usage_error("unknown option '" + a + "'");
    } else {
      if (have_file) return usage_error("one program file at a time");
      file = a;
      have_file = true;
    }
  }
  if (have_file && have_inline) return usage_error("give a FILE or -c PROGRAM, not both");

  Session session(opts);
  if (!device.empty()) {
    try {
      arrayc::set_default_device(parse_device(device));
    } catch (const UserError& e) {
      std::cerr << "arrayc: --device: " << e.message << "\n";
      return 1;
    } catch (const arrayc::Error& e) {
      std::cerr << "arrayc: --device: " << e.what() << "\n";
      return 1;
    }
  }

  if (force_repl || (!have_file && !have_inline && !opts.emit && isatty(STDIN_FILENO))) {
    Options ropts = opts;
    ropts.interactive = true;
    Session repl(ropts);
    return run_repl(repl);
  }

  install_sigint_handler();  // Ctrl-C stops the computation; the run exits with 130
  std::string source, name;
  if (have_inline) {
    source = inline_program;
    name = "<command line>";
  } else if (!have_file || file == "-") {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    source = ss.str();
    name = "<stdin>";
  } else {
    std::ifstream f(file, std::ios::binary);
    if (!f) {
      std::cerr << "arrayc: cannot open '" << file << "': " << std::strerror(errno) << "\n";
      return 1;
    }
    std::ostringstream ss;
    ss << f.rdbuf();
    source = ss.str();
    name = file;
    size_t slash = file.rfind('/');
    Options fopts = opts;
    fopts.base_dir = slash == std::string::npos ? "." : file.substr(0, slash);
    Session fs(fopts);
    return batch_status(fs, fs.run_source(std::move(source), name));
  }
  return batch_status(session, session.run_source(std::move(source), name));
}
