#include "dist/liveness.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <utility>
#include <vector>

namespace directgnn {
namespace {

std::string beat_key(int rank) { return "directgnn/liveness/beat/" + std::to_string(rank); }
std::string left_key(int rank) { return "directgnn/liveness/left/" + std::to_string(rank); }

// "rank 3" or "ranks 1, 2 and 5".
std::string rank_list(const std::vector<int>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) out += i + 1 == ranks.size() ? " and " : ", ";
    out += std::to_string(ranks[i]);
  }
  return out;
}

}  // namespace

struct Liveness::Impl {
  c10::intrusive_ptr<c10d::Store> store;
};

Liveness::Liveness(int rank, int world_size, const std::string& host, int port,
                   const std::string& prefix, std::string store_host,
                   std::chrono::milliseconds beat)
    : rank_(rank),
      world_size_(world_size),
      store_host_(std::move(store_host)),
      beat_(beat),
      impl_(std::make_unique<Impl>()) {
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(port);
  options.isServer = false;
  options.waitWorkers = false;
  // A store that stops answering must not hold a failing rank's message for long.
  options.timeout = std::max(std::chrono::milliseconds(2000), 2 * beat);
  impl_->store = c10::make_intrusive<c10d::PrefixStore>(
      prefix, c10::make_intrusive<c10d::TCPStore>(host, options));
  impl_->store->add(beat_key(rank_), 1);
  thread_ = std::thread([this] { beat_loop(); });
}

Liveness::~Liveness() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  try {
    impl_->store->set(left_key(rank_), std::string("1"));
  } catch (const std::exception&) {
    // The store is gone (rank 0 has exited): nobody is left to tell.
  }
}

void Liveness::beat_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, beat_, [this] { return stop_; })) {
    try {
      impl_->store->add(beat_key(rank_), 1);
    } catch (const std::exception&) {
      return;  // the store is gone; absent_ranks() says so when a collective fails
    }
  }
}

std::string Liveness::absent_ranks() const {
  c10d::Store& store = *impl_->store;
  try {
    const auto counts = [&] {
      std::vector<int64_t> c(world_size_);
      for (int r = 0; r < world_size_; ++r) c[r] = store.add(beat_key(r), 0);
      return c;
    };
    const std::vector<int64_t> before = counts();
    std::this_thread::sleep_for(2 * beat_ + beat_ / 2);
    const std::vector<int64_t> after = counts();
    std::vector<int> stopped, left;
    for (int r = 0; r < world_size_; ++r) {
      if (r == rank_) continue;
      if (store.check({left_key(r)})) {
        left.push_back(r);
      } else if (after[r] == before[r]) {
        stopped.push_back(r);
      }
    }
    std::string out;
    if (!stopped.empty()) {
      out = rank_list(stopped) + " stopped responding (killed, crashed or hung)";
    }
    if (!left.empty()) {
      out += (out.empty() ? "" : "; ") + rank_list(left) +
             " left the group (exited; its output says why)";
    }
    return out.empty() ? "every rank still runs (the network between them may have failed)" : out;
  } catch (const std::exception&) {
    return store_host_ + " cannot be reached (it stopped, or its machine is unreachable)";
  }
}

}  // namespace directgnn
