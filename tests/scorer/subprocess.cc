#include "tests/scorer/subprocess.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace kscore::testing {

Subprocess::~Subprocess() {
  if (Running()) {
    Signal(SIGKILL);
    Wait(5000);
  }
  if (!log_path_.empty()) unlink(log_path_.c_str());
}

bool Subprocess::Start(const std::vector<std::string>& argv) {
  char tmpl[] = "/tmp/kscore-subprocess-XXXXXX";
  int fd = mkstemp(tmpl);
  if (fd < 0) return false;
  log_path_ = tmpl;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fd, STDERR_FILENO);
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int rc = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fd);
  if (rc != 0) pid_ = -1;
  return rc == 0;
}

bool Subprocess::Signal(int sig) { return pid_ > 0 && kill(pid_, sig) == 0; }

bool Subprocess::Running() {
  if (pid_ <= 0 || exit_code_ >= 0) return false;
  return Wait(0) < 0;
}

int Subprocess::Wait(int timeout_ms) {
  if (exit_code_ >= 0) return exit_code_;
  if (pid_ <= 0) return -1;
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exit_code_ =
          WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return exit_code_;
    }
    if (std::chrono::steady_clock::now() >= deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string Subprocess::Output() const {
  std::ifstream in(log_path_);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<int> FreePorts(int n) {
  // All n sockets stay bound until every port is known, so the kernel cannot
  // hand out the same port twice (it did: a scorer got the metrics port as
  // its gRPC port and could not listen).
  std::vector<int> fds;
  std::vector<int> ports;
  for (int i = 0; i < n; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) break;
    fds.push_back(fd);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof(addr);
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      break;
    }
    ports.push_back(ntohs(addr.sin_port));
  }
  for (int fd : fds) close(fd);
  if (static_cast<int>(ports.size()) != n) return {};
  return ports;
}

int FreePort() {
  std::vector<int> ports = FreePorts(1);
  return ports.empty() ? -1 : ports[0];
}

}  // namespace kscore::testing
