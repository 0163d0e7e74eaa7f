// A worker process steered over pipes, one line each way: the benchmark's engines each run in one.
#pragma once

#include <errno.h>  // program_invocation_short_name
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace tapegrad::process {

// Runs `exe` with `argv` (argv[0] is the name the worker sees) and `env`, NAME=VALUE settings for
// its environment only ("NAME=" alone removes NAME). The worker reads lines on its stdin and
// answers on its stdout; its stderr is this process's. The destructor closes both pipes and waits
// for the worker to end.
class WorkerProcess {
 public:
  WorkerProcess(const std::string& exe, const std::vector<std::string>& argv,
                const std::vector<std::string>& env = {}) {
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) fail("pipe failed");
    pid_ = fork();
    if (pid_ < 0) fail("fork failed");
    if (pid_ == 0) {
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      close(to_child[0]);
      close(to_child[1]);
      close(from_child[0]);
      close(from_child[1]);
      for (const std::string& e : env) {
        const size_t eq = e.find('=');
        if (eq == std::string::npos) continue;
        if (eq + 1 == e.size()) {
          unsetenv(e.substr(0, eq).c_str());
        } else {
          setenv(e.substr(0, eq).c_str(), e.substr(eq + 1).c_str(), 1);
        }
      }
      std::vector<char*> args;
      for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(exe.c_str(), args.data());
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    in_ = fdopen(to_child[1], "w");
    out_ = fdopen(from_child[0], "r");
  }
  ~WorkerProcess() {
    if (in_ != nullptr) std::fclose(in_);
    if (out_ != nullptr) std::fclose(out_);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  void send(const char* line) {
    std::fputs(line, in_);
    std::fflush(in_);
  }
  // The worker's next line, without its newline; a worker that ended instead ends this program
  // (its own message is on stderr above).
  std::string receive() {
    char buffer[8192];
    if (std::fgets(buffer, sizeof buffer, out_) == nullptr) fail("a worker died (see above)");
    std::string s(buffer);
    if (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  }

 private:
  [[noreturn]] static void fail(const char* what) {
    std::fprintf(stderr, "%s: %s\n", program_invocation_short_name, what);
    std::exit(2);
  }

  pid_t pid_ = -1;
  FILE* in_ = nullptr;
  FILE* out_ = nullptr;
};

}  // namespace tapegrad::process
