#include "dist/liveness.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <thread>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <vector>

#include "dist/process_group.h"

namespace directgnn {
namespace {

// A store on loopback, on a port of the kernel's choosing, as rank 0 of a group hosts it.
c10::intrusive_ptr<c10d::TCPStore> host_store() {
  c10d::TCPStoreOptions options;
  options.port = 0;
  options.isServer = true;
  options.waitWorkers = false;
  return c10::make_intrusive<c10d::TCPStore>("127.0.0.1", options);
}

// Long enough that a beat thread on a busy two-core machine (ctest runs tests side by side)
// still beats inside absent_ranks' window of two and a half beats.
constexpr std::chrono::milliseconds kBeat(400);
const char kHost[] = "rank 0, which hosts the group's store,";

TEST(Liveness, ARankThatNeverBeatsIsNamedAsStopped) {
  auto store = host_store();
  Liveness zero(0, 3, "127.0.0.1", store->getPort(), "t", kHost, kBeat);
  Liveness one(1, 3, "127.0.0.1", store->getPort(), "t", kHost, kBeat);
  // Rank 2 joined nothing: its counter never moves.
  EXPECT_EQ(zero.absent_ranks(), "rank 2 stopped responding (killed, crashed or hung)");
  EXPECT_EQ(one.absent_ranks(), "rank 2 stopped responding (killed, crashed or hung)");
}

TEST(Liveness, EveryRankBeatingNamesNone) {
  auto store = host_store();
  Liveness zero(0, 2, "127.0.0.1", store->getPort(), "t", kHost, kBeat);
  Liveness one(1, 2, "127.0.0.1", store->getPort(), "t", kHost, kBeat);
  EXPECT_EQ(zero.absent_ranks().rfind("every rank still runs", 0), 0u);
}

TEST(Liveness, ARankThatLeftSaysSoAndSeveralAreListed) {
  auto store = host_store();
  Liveness zero(0, 4, "127.0.0.1", store->getPort(), "t", kHost, kBeat);
  std::optional<Liveness> one(std::in_place, 1, 4, "127.0.0.1", store->getPort(), "t", kHost,
                              kBeat);
  one.reset();
  // Ranks 2 and 3 never beat; rank 1 left.
  EXPECT_EQ(zero.absent_ranks(),
            "ranks 2 and 3 stopped responding (killed, crashed or hung); rank 1 left the group "
            "(exited; its output says why)");
}

TEST(Liveness, AStoreThatIsGoneNamesRankZero) {
  auto store = host_store();
  const int port = store->getPort();
  Liveness one(1, 2, "127.0.0.1", port, "t", kHost, kBeat);
  store.reset();  // rank 0, which hosts the store, is gone
  EXPECT_EQ(one.absent_ranks().rfind("rank 0, which hosts the group's store, cannot be reached", 0),
            0u);
}

// torchrun's agent hosts the store (TORCHELASTIC_USE_AGENT_STORE=True): every rank joins as a
// client, and a restart (TORCHELASTIC_RESTART_COUNT) joins the same store again under its own
// keys, never an earlier attempt's.
TEST(ProcessGroupStore, RanksJoinTorchrunsAgentStoreAsClientsAttemptByAttempt) {
  auto agent = host_store();
  for (const int attempt : {0, 1}) {
    std::vector<float> sums(2, 0.0f);
    const auto rank_main = [&](int rank) {
      DistEnv env;
      env.rank = env.local_rank = rank;
      env.world_size = env.local_world_size = 2;
      env.master_port = agent->getPort();
      env.agent_store = true;
      env.restart_count = attempt;
      DistOptions options;
      options.backend = DistBackend::kGloo;
      options.timeout = std::chrono::seconds(30);
      auto group = ProcessGroup::create(env, options);
      std::vector<at::Tensor> t{at::full({1}, rank + 1.0f)};
      group->all_reduce_sum(t);
      sums[rank] = t[0].item<float>();
    };
    std::thread a(rank_main, 0), b(rank_main, 1);
    a.join();
    b.join();
    EXPECT_EQ(sums, (std::vector<float>{3.0f, 3.0f})) << "attempt " << attempt;
  }
}

}  // namespace
}  // namespace directgnn
