// Graceful stop for long runs. After install_stop_handlers(), the first SIGINT or SIGTERM only
// records the signal (and says so on stderr); work polls stop_signal() at safe points, such as
// the end of a training step, saves its state and exits 128 + signal. A second signal exits
// at once with that status, whatever the process is doing.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace directgnn {

// What the first signal's notice says the process does before stopping: saves the training
// state (node training), writes the results it has (benchmarks, link training), or removes its
// temporary files (embed).
enum class StopAction { kSaveState, kWriteResults, kRemoveTemporaries };
void install_stop_handlers(StopAction action = StopAction::kSaveState);
// The signal that asked for a stop (SIGINT, SIGTERM), or 0.
int stop_signal();
// Records `signal` as if it had arrived (tests, and ranks told by another rank to stop).
void request_stop(int signal);
// Forgets a recorded stop (tests).
void clear_stop();

// Thrown once work has stopped cleanly on a signal; the front end prints `message`, says how
// to resume from state_dir() where the work saved its state there, and exits with exit_code()
// (130 for SIGINT, 143 for SIGTERM).
class Interrupted : public std::runtime_error {
 public:
  Interrupted(int signal, const std::string& message, std::string state_dir = {})
      : std::runtime_error(message), signal_(signal), state_dir_(std::move(state_dir)) {}
  int signal() const { return signal_; }
  int exit_code() const { return 128 + signal_; }
  // Where the training state was saved, or empty.
  const std::string& state_dir() const { return state_dir_; }

 private:
  int signal_;
  std::string state_dir_;
};

}  // namespace directgnn
