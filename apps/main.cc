// directgnn: GNN training with feature tables in host memory.
#include <c10/util/Exception.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>

#include "core/build_info.h"
#include "core/signals.h"
#include "core/threads.h"
#include "directgnn/error.h"
#include "options.h"

namespace {

// OpenMP threads that spin while waiting for work steal the core from any other busy process
// on a small machine: beside one busy thread a 2-core epoch took 2.4x as long with libgomp's
// default spinning and 1.55x with passive waiting, at the same speed alone (docs/benchmarks.md).
// libgomp reads OMP_WAIT_POLICY once, in its own initialiser, which runs before main(); only
// the executable's pre-initialisers run earlier. A value the user set is kept.
void prefer_passive_openmp_wait() { setenv("OMP_WAIT_POLICY", "PASSIVE", /*overwrite=*/0); }

}  // namespace

// Runs before any shared library's initialiser (ELF DT_PREINIT_ARRAY).
__attribute__((section(".preinit_array"),
               used)) static void (*const g_preinit)() = prefer_passive_openmp_wait;

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
