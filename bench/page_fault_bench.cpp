// What a page of fresh memory costs this host: the CPU of a first touch (the fault and the kernel's
// zeroing of the page), of handing pages back (madvise MADV_DONTNEED, what malloc_trim does), of
// touching them again after that, and of touching pages already there. A run's page faults
// (`/usr/bin/time -f %R`, `perf stat -e page-faults`) times the first figure is what they cost it.
//
//   build/bench/page_fault_bench [--mib 256] [--reps 3]
#include <sys/mman.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

double cpu_seconds() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
         static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec) * 1e-6;
}

constexpr std::size_t kPage = 4096;

// One store per page; `value` keeps the compiler from merging passes.
void touch(volatile char* p, std::size_t bytes, char value) {
  for (std::size_t i = 0; i < bytes; i += kPage) p[i] = value;
}

int usage(const char* why) {
  std::fprintf(stderr, "page_fault_bench: %s\nusage: page_fault_bench [--mib N (>= 1)] [--reps N (>= 1)]\n", why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  long mib = 256, reps = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--mib" || a == "--reps") && i + 1 < argc) {
      char* end = nullptr;
      const long v = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || v < 1) return usage(("bad value for " + a + ": " + argv[i]).c_str());
      (a == "--mib" ? mib : reps) = v;
    } else {
      return usage(("unknown argument: " + a).c_str());
    }
  }
  const std::size_t bytes = static_cast<std::size_t>(mib) << 20;
  const double pages = static_cast<double>(bytes / kPage);
  std::printf("%ld MiB of anonymous memory in 4 KiB pages (transparent huge pages refused), us of CPU per page:\n", mib);
  std::printf("%-5s %12s %14s %16s %12s\n", "rep", "first touch", "MADV_DONTNEED", "touch after it", "resident");
  for (long r = 1; r <= reps; ++r) {
    void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      std::fprintf(stderr, "page_fault_bench: mmap of %ld MiB failed: %s\n", mib, std::strerror(errno));
      return 1;
    }
    auto* p = static_cast<volatile char*>(m);
    madvise(m, bytes, MADV_NOHUGEPAGE);  // a run's buffers fault in 4 KiB pages (docs/performance.md)
    const double t0 = cpu_seconds();
    touch(p, bytes, 1);
    const double t1 = cpu_seconds();
    madvise(m, bytes, MADV_DONTNEED);
    const double t2 = cpu_seconds();
    touch(p, bytes, 2);
    const double t3 = cpu_seconds();
    touch(p, bytes, 3);
    const double t4 = cpu_seconds();
    munmap(m, bytes);
    std::printf("%-5ld %12.3f %14.3f %16.3f %12.3f\n", r, (t1 - t0) / pages * 1e6, (t2 - t1) / pages * 1e6,
                (t3 - t2) / pages * 1e6, (t4 - t3) / pages * 1e6);
  }
  return 0;
}
