// Which ranks of a group still run, for the message of a collective that failed. Gloo's and
// NCCL's errors name a peer's address at best; this names the rank.
//
// Each rank beats: a thread adds 1 to the rank's counter in the group's store once per `beat`,
// over a store connection of its own. When a collective fails, the survivor reads every
// counter, waits a little over two beats and reads them again: a rank whose counter did not
// move has stopped (killed, crashed, or hung). A rank whose group is destroyed (it finished,
// or is exiting on its own error) posts that it left before its beats stop. When the store
// cannot be reached, its host (rank 0, or torchrun's agent) is the one gone.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace directgnn {

class Liveness {
 public:
  // Starts beating as `rank` of `world_size` through the store at host:port, its keys under
  // `prefix`; `store_host` names the store's host in messages ("rank 0, which hosts the
  // group's store,").
  Liveness(int rank, int world_size, const std::string& host, int port, const std::string& prefix,
           std::string store_host,
           std::chrono::milliseconds beat = std::chrono::milliseconds(1000));
  // Posts that this rank left, then stops beating.
  ~Liveness();
  Liveness(const Liveness&) = delete;
  Liveness& operator=(const Liveness&) = delete;

  // What has become of the other ranks, as a clause for an error message: "rank 1 stopped
  // responding (killed, crashed or hung)", "rank 2 left the group (exited; its output says
  // why)", "rank 0, which hosts the group's store, cannot be reached (it stopped, or its
  // machine is unreachable)", or "every rank still runs" when none is missing. Takes a little
  // over two beats.
  std::string absent_ranks() const;

 private:
  struct Impl;
  void beat_loop();
  int rank_, world_size_;
  std::string store_host_;
  std::chrono::milliseconds beat_;
  std::unique_ptr<Impl> impl_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace directgnn
