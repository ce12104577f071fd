#include "core/signals.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>

namespace directgnn {
namespace {

std::atomic<int> g_stop{0};

void write_stderr(const char* text) {
  // write(2) is async-signal-safe; its result cannot be acted on here.
  const ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

void on_signal(int signal) {
  int expected = 0;
  if (!g_stop.compare_exchange_strong(expected, signal)) {
    write_stderr("\ndirectgnn: second signal, exiting now without saving\n");
    _exit(128 + signal);
  }
  write_stderr(signal == SIGINT
                   ? "\ndirectgnn: SIGINT received, finishing the current step and saving the "
                     "training state (press Ctrl-C again to exit at once)\n"
                   : "\ndirectgnn: SIGTERM received, finishing the current step and saving the "
                     "training state (a second signal exits at once)\n");
}

}  // namespace

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // reads and writes in progress carry on
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int stop_signal() { return g_stop.load(std::memory_order_relaxed); }

void request_stop(int signal) {
  int expected = 0;
  g_stop.compare_exchange_strong(expected, signal);
}

void clear_stop() { g_stop.store(0); }

}  // namespace directgnn
