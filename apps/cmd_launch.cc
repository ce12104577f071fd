// `directgnn launch -n N -- train ...`: starts N ranks of a directgnn command on this machine
// with torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT), forwards Ctrl-C and SIGTERM to them, and exits with the first failure.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "directgnn/error.h"
#include "options.h"

namespace directgnn::cli {
namespace {

std::vector<pid_t> g_children;

void forward_signal(int sig) {
  for (const pid_t pid : g_children) kill(pid, sig);
}

// A port the kernel says is free now (the ranks bind it a moment later).
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  DGNN_CHECK(fd >= 0, "launch: cannot create a socket: ", std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  close(fd);
  DGNN_CHECK(ok, "launch: cannot find a free port; pass --master-port");
  return ntohs(addr.sin_port);
}

int run_launch(int ranks, int port, const std::vector<std::string>& command) {
  DGNN_CHECK(!command.empty(),
             "launch: give the command after --, e.g. "
             "`directgnn launch -n 2 -- train --dataset cora.npz`");
  if (port == 0) port = free_port();
  // The binary's real path, so the ranks show up as `directgnn` (not `exe`) in ps and top.
  std::string self(4096, '\0');
  const ssize_t len = readlink("/proc/self/exe", self.data(), self.size() - 1);
  DGNN_CHECK(len > 0, "launch: cannot find this program's path: ", std::strerror(errno));
  self.resize(static_cast<size_t>(len));
  std::vector<std::string> args{"directgnn"};
  args.insert(args.end(), command.begin(), command.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  for (int r = 0; r < ranks; ++r) {
    const pid_t pid = fork();
    DGNN_CHECK(pid >= 0, "launch: fork failed: ", std::strerror(errno));
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);  // no orphaned ranks if the launcher dies
      setenv("RANK", std::to_string(r).c_str(), 1);
      setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      setenv("WORLD_SIZE", std::to_string(ranks).c_str(), 1);
      setenv("LOCAL_WORLD_SIZE", std::to_string(ranks).c_str(), 1);
      setenv("MASTER_ADDR", "127.0.0.1", 1);
      setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      execv(self.c_str(), argv.data());
      std::fprintf(stderr, "error: launch: cannot run %s: %s\n", self.c_str(),
                   std::strerror(errno));
      _exit(127);
    }
    g_children.push_back(pid);
  }
  signal(SIGINT, forward_signal);
  signal(SIGTERM, forward_signal);
  int status_out = 0;
  for (size_t left = g_children.size(); left > 0; --left) {
    int status = 0;
    const pid_t pid = wait(&status);
    if (pid < 0) break;
    int rank = 0;
    while (g_children[static_cast<size_t>(rank)] != pid) ++rank;
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (code != 0) {
      std::fprintf(stderr, "launch: rank %d exited with status %d\n", rank, code);
      if (status_out == 0) status_out = code;
    }
  }
  return status_out;
}

}  // namespace

void register_launch(CLI::App& app) {
  struct Args {
    int ranks = 2;
    int port = 0;
    std::vector<std::string> command;
  };
  auto args = std::make_shared<Args>();
  CLI::App* c = app.add_subcommand(
      "launch", "run N ranks of a command on this machine, as torchrun --no-python would");
  c->add_option("-n,--nproc-per-node", args->ranks, "number of ranks")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  c->add_option("--master-port", args->port, "rank 0's port (default: a free one)")
      ->check(CLI::Range(0, 65535));
  c->add_option("command", args->command, "the directgnn command to run, after --");
  c->callback([args] {
    const int code = run_launch(args->ranks, args->port, args->command);
    if (code != 0) std::exit(code);
  });
}

}  // namespace directgnn::cli
