// Two ranks of a c10d group on two threads of one test process (each with its own group over
// one TCP store on loopback, which the harness hosts), for the tests of the collectives' users
// (dist/).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <exception>
#include <memory>
#include <thread>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <vector>

#include "dist/process_group.h"

namespace directgnn::testing {

// The group's TCP store, hosted here on a port the kernel picks as it starts listening (as
// torchrun's agent hosts it): a port picked first and bound later could meanwhile become the
// local end of another connection on this busy loopback.
inline c10::intrusive_ptr<c10d::TCPStore> store_host() {
  c10d::TCPStoreOptions options;
  options.port = 0;
  options.isServer = true;
  options.waitWorkers = false;
  return c10::make_intrusive<c10d::TCPStore>("127.0.0.1", options);
}

// Rank `rank` of `size` joining the store on `port` as a client, on Gloo.
inline std::unique_ptr<ProcessGroup> join(int rank, int size, int port) {
  DistEnv env;
  env.rank = rank;
  env.world_size = size;
  env.local_rank = rank;
  env.local_world_size = size;
  env.master_addr = "127.0.0.1";
  env.master_port = port;
  env.agent_store = true;
  DistOptions options;
  options.backend = DistBackend::kGloo;
  options.timeout = std::chrono::seconds(30);
  return ProcessGroup::create(env, options);
}

// Runs `body(rank, group)` on two ranks, each on its own thread; rethrows what one threw.
template <typename Body>
void on_two_ranks(Body body) {
  const auto store = store_host();
  const int port = store->getPort();
  std::vector<std::exception_ptr> errors(2);
  auto rank_main = [&](int r) {
    try {
      auto group = join(r, 2, port);
      body(r, *group);
    } catch (...) {
      errors[r] = std::current_exception();
    }
  };
  std::thread a(rank_main, 0), b(rank_main, 1);
  a.join();
  b.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace directgnn::testing
