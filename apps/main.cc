// directgnn: GNN training with feature tables in host memory.
#include <alloca.h>
#include <c10/util/Exception.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/build_info.h"
#include "core/signals.h"
#include "core/threads.h"
#include "directgnn/error.h"
#include "options.h"

namespace {

// OpenMP threads that spin while waiting for work steal the core from any other busy process
// on a small machine: beside one busy loop a 2-core Cora link epoch took 1.7-2.0 s with
// libgomp's default spinning against 1.0-1.2 s with passive waiting, 0.55-0.59 s alone
// (docs/benchmarks.md, "Beside a busy process"). libgomp reads OMP_WAIT_POLICY once, in its
// initialiser. Setting the variable in this process does not reach it: libc's initialiser,
// which runs after the executable's pre-initialisers and before libgomp's, resets the
// environment to the one the process started with. So a run started without the variable
// starts this program again, with OMP_WAIT_POLICY=PASSIVE added to its environment, from a
// pre-initialiser: the libraries are loaded but none has initialised yet, and execve keeps the
// process, its id and its descriptors. A value the user set is kept; `info`, `--help` and
// `--version` run as they are. Nothing here may need libc initialised: no allocation, no
// getenv (the arguments and environment come as parameters).
bool wants_passive_restart(int argc, char** argv, char** envp) {
  if (argc < 2 || std::strcmp(argv[1], "info") == 0) return false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0 ||
        std::strcmp(argv[i], "--version") == 0) {
      return false;
    }
  }
  for (char** e = envp; *e != nullptr; ++e) {
    if (std::strncmp(*e, "OMP_WAIT_POLICY=", 16) == 0) return false;
  }
  return true;
}

void prefer_passive_openmp_wait(int argc, char** argv, char** envp) {
  if (!wants_passive_restart(argc, argv, envp)) return;
  size_t n = 0;
  while (envp[n] != nullptr) ++n;
  auto** env = static_cast<char**>(alloca((n + 2) * sizeof(char*)));
  std::memcpy(env, envp, n * sizeof(char*));
  static char passive[] = "OMP_WAIT_POLICY=PASSIVE";
  env[n] = passive;
  env[n + 1] = nullptr;
  execve("/proc/self/exe", argv, env);
  // Not restarted (no /proc): libgomp's default waiting.
}

}  // namespace

// Runs before any shared library's initialiser (ELF DT_PREINIT_ARRAY), given main's arguments
// and the environment.
__attribute__((section(".preinit_array"),
               used)) static void (*const g_preinit)(int, char**,
                                                     char**) = prefer_passive_openmp_wait;

int main(int argc, char** argv) {
  // Line-buffered even into a pipe or file: a run's header and epoch lines come out before an
  // error that stops it (stderr is unbuffered), in the order they happened.
  std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
  directgnn::configure_allocator();
  directgnn::configure_threads(0);
  CLI::App app{"directgnn: train graph neural networks whose features live in host memory"};
  app.require_subcommand(1);
  app.set_version_flag("--version", [] {
    const directgnn::BuildInfo b = directgnn::build_info();
    return "directgnn " + b.directgnn_version + " (torch " + b.torch_version + ", " +
           (b.cuda_compiled ? "CUDA " + b.torch_cuda + " for " + b.cuda_architectures
                            : std::string("no CUDA")) +
           "; `directgnn info --build` says more)";
  });
  directgnn::cli::register_train(app);
  directgnn::cli::register_eval(app);
  directgnn::cli::register_embed(app);
  directgnn::cli::register_convert(app);
  directgnn::cli::register_partition(app);
  directgnn::cli::register_generate(app);
  directgnn::cli::register_launch(app);
  directgnn::cli::register_info(app);
  directgnn::cli::register_bench(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const directgnn::Interrupted& e) {
    std::fprintf(stderr, "%s%s\n", e.what(), directgnn::cli::resume_hint(e.state_dir()).c_str());
    return e.exit_code();
  } catch (const directgnn::StoppedWithState& e) {
    std::fprintf(stderr, "error: %s%s\n", e.what(),
                 directgnn::cli::resume_hint(e.state_dir()).c_str());
    return 1;
  } catch (const directgnn::InvalidArgument& e) {
    std::fprintf(stderr, "error: %s\n", directgnn::cli::flag_message(e, app).c_str());
    return 1;
  } catch (const directgnn::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const c10::Error& e) {
    std::fprintf(stderr, "error: internal error in PyTorch: %s\n", e.what_without_backtrace());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
