#ifndef KSCORE_TESTS_SCORER_SUBPROCESS_H_
#define KSCORE_TESTS_SCORER_SUBPROCESS_H_

#include <string>
#include <vector>

namespace kscore::testing {

// A child process with stdout and stderr captured to a file, for tests that
// run the real binaries.
class Subprocess {
 public:
  Subprocess() = default;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  ~Subprocess();

  // Starts argv[0] with the given arguments; false if it could not start.
  bool Start(const std::vector<std::string>& argv);
  // Sends a signal; returns false if the process is gone.
  bool Signal(int sig);
  // Waits up to timeout_ms for exit; returns the exit code, 128+signal if
  // killed, or -1 on timeout.
  int Wait(int timeout_ms);
  bool Running();
  std::string Output() const;
  int pid() const { return pid_; }

 private:
  int pid_ = -1;
  int exit_code_ = -1;
  std::string log_path_;
};

// A TCP port on 127.0.0.1 that was free a moment ago.
int FreePort();
// n distinct TCP ports on 127.0.0.1 that were free a moment ago; empty if the
// kernel would not give them.
std::vector<int> FreePorts(int n);

}  // namespace kscore::testing

#endif  // KSCORE_TESTS_SCORER_SUBPROCESS_H_
