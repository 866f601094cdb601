// The platform layer on Windows (platform.hpp). Every function imported here
// is in kernel32.dll or bcrypt.dll as Windows 8 and Wine 8 export it (no
// QueryUnbiasedInterruptTimePrecise: Wine 8 lacks it, and a DLL importing it
// does not load there); ntdll's NtQuerySystemInformation is looked up by
// name.
#include "platform/platform.hpp"

#include <windows.h>
// after windows.h, whose types it uses
#include <bcrypt.h>

#include <cstddef>
#include <cstring>

namespace lazybreaker::platform {

void *reserve(size_t bytes) { return VirtualAlloc(nullptr, bytes, MEM_RESERVE, PAGE_NOACCESS); }

void release(void *base, size_t) { VirtualFree(base, 0, MEM_RELEASE); }

bool commit_read_only(void *at, size_t bytes) {
  return VirtualAlloc(at, bytes, MEM_COMMIT, PAGE_READONLY) == at;
}

bool commit(void *at, size_t bytes) {
  // Committing pages already committed read-only keeps their protection:
  // set it as well.
  DWORD was = 0;
  return VirtualAlloc(at, bytes, MEM_COMMIT, PAGE_READWRITE) == at &&
         VirtualProtect(at, bytes, PAGE_READWRITE, &was) != 0;
}

void decommit(void *at, size_t bytes) {
  if (VirtualFree(at, bytes, MEM_DECOMMIT) != 0)
    VirtualAlloc(at, bytes, MEM_COMMIT, PAGE_READWRITE);
}

void *allocate(size_t bytes) {
  return VirtualAlloc(nullptr, bytes, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
}

void free_allocation(void *base, size_t) { VirtualFree(base, 0, MEM_RELEASE); }

void advise_huge_pages(void *, size_t) {}

bool map_file_at(void *, size_t, int, size_t) { return false; }

bool map_zero_at(void *at, size_t bytes) {
  // Only a process's own (private) pages are ever here on Windows: no
  // file is mapped in place there (map_file_at).
  decommit(at, bytes);
  return true;
}

// (ReFS has 128-bit file ids, whose low 64 bits are what this reads: two
// files there could share them, in principle.)
bool file_identity(int fd, uint64_t *device, uint64_t *inode) {
  BY_HANDLE_FILE_INFORMATION info;
  if (fd < 0 || GetFileInformationByHandle(LongToHandle(fd), &info) == 0) return false;
  *device = info.dwVolumeSerialNumber;
  *inode = uint64_t(info.nFileIndexHigh) << 32 | info.nFileIndexLow;
  return true;
}

namespace {
// SYSTEM_TIMEOFDAY_INFORMATION (winternl.h declares it only in part).
struct TimeOfDay {
  LARGE_INTEGER boot_time, current_time, time_zone_bias;
  ULONG time_zone_id, reserved;
  ULONGLONG boot_time_bias, sleep_time_bias;
};
constexpr ULONG kSystemTimeOfDayInformation = 3;
using QuerySystemInformation = LONG(NTAPI *)(ULONG, void *, ULONG, ULONG *);
}  // namespace

// Windows has no boot id: the boot time is one, exact to its 100 ns unit
// and the same in every process of the boot (never now - uptime, which
// differs between processes by the time between its two readings). Setting
// the clock moves the boot time and its bias by as much (BootTimeBias sums
// the changes), so their difference is the boot's whatever the clock did.
// Under Wine it is the wineserver's start: it changes only once every
// process of the prefix is gone. Looked up by name: the information class
// is not documented, and a system without it gets zeros (no carry-over).
void boot_id(uint8_t out[16]) {
  std::memset(out, 0, 16);
  HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
  FARPROC found = ntdll != nullptr ? GetProcAddress(ntdll, "NtQuerySystemInformation") : nullptr;
  if (found == nullptr) return;
  // A function pointer of another type, through void (*)() (-Wcast-function-type).
  auto query = reinterpret_cast<QuerySystemInformation>(reinterpret_cast<void (*)()>(found));
  TimeOfDay t{};
  ULONG got = 0;
  if (query(kSystemTimeOfDayInformation, &t, sizeof t, &got) < 0 || got < sizeof t.boot_time)
    return;
  const uint64_t bias = got >= offsetof(TimeOfDay, sleep_time_bias) ? t.boot_time_bias : 0;
  const uint64_t boot = uint64_t(t.boot_time.QuadPart) - bias;
  std::memcpy(out, &boot, sizeof boot);
}

namespace {
uint64_t performance_frequency() {
  static const uint64_t f = [] {
    LARGE_INTEGER li;
    QueryPerformanceFrequency(&li);  // never fails from Windows XP on
    return uint64_t(li.QuadPart);
  }();
  return f;
}
}  // namespace

uint64_t query_performance_ns() {
  LARGE_INTEGER c;
  QueryPerformanceCounter(&c);
  const uint64_t ticks = uint64_t(c.QuadPart), f = performance_frequency();
  return ticks / f * 1000000000ull + ticks % f * 1000000000ull / f;
}

uint64_t coarse_resolution_ns() { return 0; }

uint64_t unix_now_ns() {
  FILETIME ft;
  GetSystemTimeAsFileTime(&ft);
  const uint64_t since_1601 = uint64_t(ft.dwHighDateTime) << 32 | ft.dwLowDateTime;
  constexpr uint64_t kUnixEpochIn100ns = 116444736000000000ull;
  return since_1601 > kUnixEpochIn100ns ? (since_1601 - kUnixEpochIn100ns) * 100 : 0;
}

void sleep_ns(uint64_t ns) { Sleep(DWORD(ns / 1'000'000 == 0 ? 1 : ns / 1'000'000)); }

namespace {
// FlsAlloc's callbacks are called with no way to tell them apart: each key
// made here keeps its own callback in a table of its index.
constexpr unsigned kMaxExitKeys = 4;
void (*g_on_exit[kMaxExitKeys])(void *);
template <unsigned K>
void NTAPI call_on_exit(void *value) {
  if (value != nullptr && g_on_exit[K] != nullptr) g_on_exit[K](value);
}
constexpr PFLS_CALLBACK_FUNCTION kTrampolines[kMaxExitKeys] = {call_on_exit<0>, call_on_exit<1>,
                                                               call_on_exit<2>, call_on_exit<3>};
LONG g_exit_keys = 0;

// FreeLibrary never unloads the DLL once a thread-exit callback may point
// into it (the Linux build's -z nodelete).
void pin_this_module() {
  HMODULE self = nullptr;
  GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_PIN,
                     reinterpret_cast<LPCWSTR>(&pin_this_module), &self);
}
}  // namespace

bool make_thread_exit_key(ThreadExitKey *key, void (*on_exit)(void *value)) {
  key->made = false;
  const LONG k = InterlockedIncrement(&g_exit_keys) - 1;
  if (k < 0 || unsigned(k) >= kMaxExitKeys) return false;
  pin_this_module();
  g_on_exit[k] = on_exit;
  const DWORD index = FlsAlloc(kTrampolines[k]);
  if (index == FLS_OUT_OF_INDEXES) return false;
  key->id = index;
  key->made = true;
  return true;
}

bool set_thread_exit_value(const ThreadExitKey &key, void *value) {
  return key.made && FlsSetValue(DWORD(key.id), value) != 0;
}

void on_fork_child(void (*)()) {}

bool process_wide_barrier() {
  FlushProcessWriteBuffers();
  return true;
}

bool random_bytes(void *out, size_t bytes) {
  return bytes <= ULONG_MAX && BCryptGenRandom(nullptr, static_cast<PUCHAR>(out), ULONG(bytes),
                                               BCRYPT_USE_SYSTEM_PREFERRED_RNG) == 0;
}

uint32_t process_id() { return uint32_t(GetCurrentProcessId()); }

uint64_t process_start_time(uint32_t pid) {
  HANDLE p = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, DWORD(pid));
  if (p == nullptr) return 0;
  FILETIME created, exited, kernel, user;
  const bool got = GetProcessTimes(p, &created, &exited, &kernel, &user) != 0;
  CloseHandle(p);
  return got ? uint64_t(created.dwHighDateTime) << 32 | created.dwLowDateTime : 0;
}

bool process_gone(uint32_t pid) {
  if (pid == 0) return true;
  HANDLE p = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, DWORD(pid));
  if (p == nullptr) return GetLastError() == ERROR_INVALID_PARAMETER;  // no such process
  DWORD code = 0;
  const bool exited = GetExitCodeProcess(p, &code) != 0 && code != STILL_ACTIVE;
  CloseHandle(p);
  return exited;
}

bool process_maps_file(uint32_t, uint64_t, uint64_t) { return true; }

}  // namespace lazybreaker::platform
