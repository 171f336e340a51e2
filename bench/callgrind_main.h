// The driver of the callgrind programs (callgrind_walks.cc, callgrind_transform.cc): each
// operation runs REPS times in its own Loop<Op>, after one warm-up call, and the program prints
// its name and node count, the order file bench/report.py reads to divide the inclusive count of
// Loop<Op> by REPS x nodes. Loop<Op> must stay in namespace ferry_bench, whose name the report
// matches.
#ifndef FERRY_BENCH_CALLGRIND_MAIN_H_
#define FERRY_BENCH_CALLGRIND_MAIN_H_

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace ferry_bench {

/// Never inlined, so callgrind reports its cost under its own name.
template <typename Op>
__attribute__((noinline)) void Loop(Op& op, long n) {
  for (long i = 0; i < n; ++i) op();
}

/// Reserves room for the results an operation keeps (a member `kept`, one per call), so that
/// none is reallocated inside the Loop; nothing for an operation that keeps none.
template <typename Op>
auto ReserveKept(Op& op, long reps, int) -> decltype(op.kept.reserve(0), void()) {
  op.kept.reserve(static_cast<size_t>(reps) + 1);
}
template <typename Op>
void ReserveKept(Op&, long, long) {}

/// Runs one operation in this process and prints its name and node count.
template <typename Op>
void Measure(const char* name, int64_t leaves, int64_t nodes, long reps) {
  Op op(leaves);
  ReserveKept(op, reps, 0);
  op();
  Loop(op, reps);
  std::printf("%s %lld\n", name, static_cast<long long>(nodes));
}

/// Measure in a child process (fork), on a heap nothing else used: what an allocation costs
/// depends on where the heap's free memory is, so an operation that allocates measured in one
/// process with others would count what the operations before it left. Callgrind follows the
/// children; run it with `--callgrind-out-file=cg.%p.out` (a file per process) and annotate each
/// file. The results are not dropped (that would not be counted, and takes time). Exits when
/// the child fails.
template <typename Op>
void MeasureInChild(const char* name, int64_t leaves, int64_t nodes, long reps) {
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    std::exit(1);
  }
  if (pid == 0) {
    Op op(leaves);
    ReserveKept(op, reps, 0);
    op();
    Loop(op, reps);
    std::printf("%s %lld\n", name, static_cast<long long>(nodes));
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "%s: the child process failed\n", name);
    std::exit(1);
  }
}

/// Reads `LEAVES REPS` from the command line; false (after the usage) when they are not two
/// positive numbers.
inline bool ParseCallgrindArgs(int argc, char** argv, int64_t* leaves, long* reps) {
  if (argc != 3 || std::atol(argv[1]) <= 0 || std::atol(argv[2]) <= 0) {
    std::fprintf(stderr, "usage: %s LEAVES REPS  (a tree of 2 * LEAVES - 1 nodes)\n", argv[0]);
    return false;
  }
  *leaves = std::atol(argv[1]);
  *reps = std::atol(argv[2]);
  return true;
}

}  // namespace ferry_bench

#endif  // FERRY_BENCH_CALLGRIND_MAIN_H_
