#include "core/signals.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>

namespace directgnn {
namespace {

std::atomic<int> g_stop{0};
// What the first signal says the process does before it stops (set before the handlers).
const char* g_sigint_text = "";
const char* g_sigterm_text = "";

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
  write_stderr(signal == SIGINT ? g_sigint_text : g_sigterm_text);
}

}  // namespace

void install_stop_handlers(StopAction action_on_stop) {
  switch (action_on_stop) {
    case StopAction::kSaveState:
      g_sigint_text =
          "\ndirectgnn: SIGINT received, finishing the current step and saving the training "
          "state (press Ctrl-C again to exit at once)\n";
      g_sigterm_text =
          "\ndirectgnn: SIGTERM received, finishing the current step and saving the training "
          "state (a second signal exits at once)\n";
      break;
    case StopAction::kWriteResults:
      g_sigint_text =
          "\ndirectgnn: SIGINT received, finishing the current step and writing the results so "
          "far (press Ctrl-C again to exit at once)\n";
      g_sigterm_text =
          "\ndirectgnn: SIGTERM received, finishing the current step and writing the results "
          "so far (a second signal exits at once)\n";
      break;
    case StopAction::kRemoveTemporaries:
      g_sigint_text =
          "\ndirectgnn: SIGINT received, stopping after the current chunk and removing the "
          "temporary files (press Ctrl-C again to exit at once)\n";
      g_sigterm_text =
          "\ndirectgnn: SIGTERM received, stopping after the current chunk and removing the "
          "temporary files (a second signal exits at once)\n";
      break;
  }
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
