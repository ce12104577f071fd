// Two ranks of a c10d group on two threads of one test process (each with its own group over
// one TCP store on loopback), for the tests of the collectives' users (dist/).
#pragma once

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include "dist/process_group.h"

namespace directgnn::testing {

// A port no one listens on now (the kernel's pick for a socket bound to port 0).
inline int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  close(fd);
  return ntohs(addr.sin_port);
}

inline std::unique_ptr<ProcessGroup> join(int rank, int size, int port) {
  DistEnv env;
  env.rank = rank;
  env.world_size = size;
  env.local_rank = rank;
  env.local_world_size = size;
  env.master_port = port;
  DistOptions options;
  options.backend = DistBackend::kGloo;
  options.timeout = std::chrono::seconds(30);
  return ProcessGroup::create(env, options);
}

// Runs `body(rank, group)` on two ranks, each on its own thread; rethrows what one threw.
template <typename Body>
void on_two_ranks(Body body) {
  const int port = free_port();
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
