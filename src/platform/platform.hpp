// What the core and the registry ask of the operating system, in one place:
// posix.cpp and windows.cpp implement it (the build takes one), and no other
// file of the library names an OS call or tests _WIN32 (except the export
// macro in the public header). The monotonic clocks are defined here, inline,
// because the request path reads them: on Linux they must stay the vDSO's
// clock_gettime, with no call of the library's in between.
#pragma once

#include <cstddef>
#include <cstdint>

#ifndef _WIN32
#include <ctime>
#endif

// Keeps a symbol inside the library (ELF visibility; a Windows DLL exports
// only what is marked dllexport, so nothing is needed there).
#ifdef _WIN32
#define LB_HIDDEN
#else
#define LB_HIDDEN [[gnu::visibility("hidden")]]
#endif

// The printf archetype of format attributes: on Windows the C99 printf
// (__USE_MINGW_ANSI_STDIO, %zu and %llu) rather than msvcrt's.
#ifdef _WIN32
#define LB_PRINTF_FORMAT gnu_printf
#else
#define LB_PRINTF_FORMAT printf
#endif

namespace lazybreaker::platform {

// --- Address space. Every function takes whole pages (4 KiB; on Windows,
// reserve's base is 64 KiB-aligned).

// Reserves `bytes` of address space, not accessible and not committed;
// nullptr if there is not that much.
void *reserve(size_t bytes);
// Gives a reservation back whole (base and size as reserve gave them).
void release(void *base, size_t bytes);
// Makes reserved pages readable (and read as zero): Linux commits nothing
// for them until written; Windows commits them read-only.
bool commit_read_only(void *at, size_t bytes);
// Makes reserved pages readable and writable; pages are given memory as
// they are first written (Linux) or counted against the commit limit now
// (Windows).
bool commit(void *at, size_t bytes);
// Gives committed pages' memory back: they stay readable and writable and
// read as zero from then on. (Windows: decommitted and committed again, so
// a thread writing them at that moment faults: only closed registries'
// counters are given back, which no correct caller writes.)
void decommit(void *at, size_t bytes);
// Reserved and committed read-write in one: the private arena.
void *allocate(size_t bytes);
void free_allocation(void *base, size_t bytes);
// A hint that these pages would do better as huge pages; may do nothing.
void advise_huge_pages(void *at, size_t bytes);

// --- Shared files' mappings (registry files). A file is named by the
// descriptor MappedFile keeps (on Windows its HANDLE, as HandleToLong
// gives it: handles are 32-bit values by design, for 32-bit interop).

// Whether a file's pages can take the place of the process's own at an
// address, atomically (mmap MAP_FIXED): then a shared registry's hot lines,
// totals and counter stripes are mapped into the space itself
// (registry/space.hpp). Windows cannot: a view goes only where nothing is
// mapped, so a swap would leave a gap in which a racing call faults. There a
// shared registry works through one view of its whole file instead, found
// per chunk of the space, and map_file_at fails.
#ifdef _WIN32
inline constexpr bool kMapsFilesInPlace = false;
#else
inline constexpr bool kMapsFilesInPlace = true;
#endif

// Maps `bytes` of the file `fd` from `offset` read-write and shared at
// `at`, over what was there. Always false on Windows, whose views begin at
// 64 KiB-aligned addresses and never inside a reservation: there the
// registry uses the file through its whole view (MappedFile::base).
bool map_file_at(void *at, size_t bytes, int fd, size_t offset);
// Puts fresh zero pages, private and read-write, at `at`, over what was
// there (a file's mapping, which is dropped).
bool map_zero_at(void *at, size_t bytes);
// The file's device and inode (its identity among open files), or false.
// On Windows its volume's serial number and its file index.
bool file_identity(int fd, uint64_t *device, uint64_t *inode);
// This boot's identity, the same in every process until the machine boots
// again (Linux: /proc/sys/kernel/random/boot_id; Windows: the boot time),
// or zeros if the system does not say.
void boot_id(uint8_t out[16]);

// --- Clocks, in nanoseconds.

// The monotonic clock the library's state times use: CLOCK_MONOTONIC;
// on Windows QueryPerformanceCounter, in ns as (c / f) * 10^9 +
// (c % f) * 10^9 / f with f = QueryPerformanceFrequency (fastpath.h).
inline uint64_t monotonic_ns();
// A lower bound of monotonic_ns() as of the clock's last tick, cheaper to
// read: CLOCK_MONOTONIC_COARSE. On Windows, monotonic_ns() itself: the
// coarse clocks there (GetTickCount64, QueryUnbiasedInterruptTime) are
// another time base than QueryPerformanceCounter and so no bound of it.
inline uint64_t coarse_monotonic_ns();
// How far coarse_monotonic_ns() may lag behind monotonic_ns() per tick
// (0 where it does not lag); an estimate for callers that want a margin.
uint64_t coarse_resolution_ns();
// Wall-clock time since the Unix epoch (file headers, salts).
uint64_t unix_now_ns();
// Sleeps for about `ns`.
void sleep_ns(uint64_t ns);

// --- The processor.

// Says to the processor that the caller is in a spin-wait loop, once per
// turn of it: x86's pause (which also keeps the loop's exit from paying for
// a memory-order mis-speculation, and leaves a hyperthread sibling the
// core), AArch64's yield; elsewhere nothing. Not a system call: the thread
// keeps its processor. Named here so that a wait loop elsewhere names no
// architecture's instruction (the fast path's counted asm is another matter:
// core/counters.hpp, registry/fast_path.hpp).
inline void spin_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// --- Threads and processes.

// A thread-exit hook: on_exit(value) runs as a thread that set a non-null
// value ends (pthread key destructor; Windows: FlsAlloc callback).
struct ThreadExitKey {
  uintptr_t id = 0;
  bool made = false;
};
bool make_thread_exit_key(ThreadExitKey *key, void (*on_exit)(void *value));
bool set_thread_exit_value(const ThreadExitKey &key, void *value);
// Runs `in_child` in a forked child (pthread_atfork); Windows has no fork,
// so nothing.
void on_fork_child(void (*in_child)());
// Makes every thread's stores so far visible to the caller's loads that
// follow, and the caller's earlier stores to every thread's later loads
// (membarrier; FlushProcessWriteBuffers). False if there is no such
// barrier.
bool process_wide_barrier();

// `bytes` random bytes from the system, never waiting for entropy; false
// if it has none at hand (getrandom GRND_NONBLOCK; BCryptGenRandom).
bool random_bytes(void *out, size_t bytes);
// This process's id.
uint32_t process_id();
// When the process `pid` started, in a unit of the system's that a later
// process of the same id cannot repeat; 0 if unknown (unreadable).
uint64_t process_start_time(uint32_t pid);
// Whether no process `pid` runs (false when unknown: alive, to be safe).
bool process_gone(uint32_t pid);
// Whether the process `pid` maps the file (device, inode); true when that
// cannot be told (to be safe).
bool process_maps_file(uint32_t pid, uint64_t device, uint64_t inode);

#ifndef _WIN32
namespace detail {
inline uint64_t read_clock(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);  // vDSO: no system call
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}
}  // namespace detail

inline uint64_t monotonic_ns() { return detail::read_clock(CLOCK_MONOTONIC); }
inline uint64_t coarse_monotonic_ns() { return detail::read_clock(CLOCK_MONOTONIC_COARSE); }
#else
uint64_t query_performance_ns();
inline uint64_t monotonic_ns() { return query_performance_ns(); }
inline uint64_t coarse_monotonic_ns() { return query_performance_ns(); }
#endif

}  // namespace lazybreaker::platform
