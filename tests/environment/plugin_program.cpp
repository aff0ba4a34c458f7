// Run by tests/environment/test_plugins.py: a program that dlopen()s plugins (plugin_module.cpp), each holding its
// own copy of the static library, and calls its own and the plugins' annotated functions from two threads.
// `plugin_program CALLS [--twice] [--fork] [--dlclose] [--sigterm] [--chdir] [--at-exit] PLUGIN...`: each of two threads makes CALLS
// rounds of: the program's host::work, then for each plugin its work() and its run() (which calls the plugin's
// work() and the program's host::work). --twice opens each plugin twice; --fork forks after loading (the child
// makes the same calls); --dlclose closes the plugins before the program exits; --sigterm ends the program by
// SIGTERM after its calls; --chdir changes the working directory to / before the plugins load; --at-exit see calls_at_exit. Prints the sum of the results, the same whatever the variables. A module without
// plugin_work and plugin_run is only loaded. Built a second time with HOOKSCOPE_TEST_PLAIN_HOST, without hookscope:
// a program whose plugins alone hold copies of the library.
#ifndef HOOKSCOPE_TEST_PLAIN_HOST
#include "hookscope/observable.hpp"
#endif

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>
#include <vector>

namespace host {
#ifdef HOOKSCOPE_TEST_PLAIN_HOST
int work(int n) { return n + 1; }
#else
namespace impl {
int work(int n) { return n + 1; }
}  // namespace impl
HOOKSCOPE_OBSERVABLE(work, impl::work, n);
#endif
}  // namespace host

namespace {

struct plugin {
  void* handle = nullptr;
  int (*work)(int) = nullptr;
  int (*run)(int, int (*)(int)) = nullptr;
};

int host_work(int n) { return host::work(n); }

long rounds(const std::vector<plugin>& plugins, int calls) {
  long sum = 0;
  for (int i = 0; i < calls; ++i) {
    sum += host::work(i);
    for (const plugin& p : plugins) {
      if (p.work != nullptr) sum += p.work(i) + p.run(i, &host_work);
    }
  }
  return sum;
}

// --at-exit: a static object of the program, made before main() and so destroyed after the library's exit actions
// ran, whose destructor starts a thread that calls each plugin's work() CALLS times (n from 1000000) and joins it.
struct calls_at_exit {
  std::vector<plugin> plugins;
  int calls = 0;
  ~calls_at_exit() {
    if (calls == 0) return;
    std::thread([this] {
      for (int i = 0; i < calls; ++i) {
        for (const plugin& p : plugins) {
          if (p.work != nullptr) (void)p.work(1000000 + i);
        }
      }
    }).join();
  }
};
calls_at_exit at_exit;

long from_two_threads(const std::vector<plugin>& plugins, int calls) {
  long other = 0;
  std::thread t([&] { other = rounds(plugins, calls); });
  const long sum = rounds(plugins, calls);
  t.join();
  return sum + other;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: plugin_program CALLS [--twice] [--fork] [--dlclose] [--sigterm] [--chdir] PLUGIN...\n");
    return 2;
  }
  const int calls = std::atoi(argv[1]);
  bool twice = false, fork_after = false, close_before_exit = false, sigterm = false, calls_at_the_exit = false;
  std::vector<plugin> plugins;
  std::vector<void*> handles;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--twice") {
      twice = true;
    } else if (arg == "--fork") {
      fork_after = true;
    } else if (arg == "--dlclose") {
      close_before_exit = true;
    } else if (arg == "--sigterm") {
      sigterm = true;
    } else if (arg == "--at-exit") {
      calls_at_the_exit = true;
    } else if (arg == "--chdir") {  // the plugins load in another working directory
      if (chdir("/") != 0) return 3;
    } else {
      plugin p;
      for (int k = 0; k < (twice ? 2 : 1); ++k) {
        p.handle = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
        if (p.handle == nullptr) {
          std::fprintf(stderr, "plugin_program: %s\n", dlerror());
          return 2;
        }
        handles.push_back(p.handle);
      }
      p.work = reinterpret_cast<int (*)(int)>(dlsym(p.handle, "plugin_work"));
      p.run = reinterpret_cast<int (*)(int, int (*)(int))>(dlsym(p.handle, "plugin_run"));
      if ((p.work == nullptr) != (p.run == nullptr)) {
        std::fprintf(stderr, "plugin_program: %s has only one of plugin_work and plugin_run\n", argv[i]);
        return 2;
      }
      plugins.push_back(p);
    }
  }
  if (fork_after) {
    const pid_t child = fork();
    if (child < 0) return 3;
    if (child == 0) {
      std::printf("child %ld\n", from_two_threads(plugins, calls));
      std::fflush(stdout);
      std::exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 4;
  }
  std::printf("%ld\n", from_two_threads(plugins, calls));
  std::fflush(stdout);
  if (close_before_exit) {
    for (void* h : handles) dlclose(h);
  }
  if (sigterm) std::raise(SIGTERM);
  if (calls_at_the_exit) {
    at_exit.plugins = plugins;
    at_exit.calls = calls;
  }
  return 0;
}
