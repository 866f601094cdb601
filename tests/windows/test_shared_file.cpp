// A shared registry's file on Windows (src/platform/windows_shared_file.cpp):
// open_file and close_file through the static library, under Wine, each
// case in a folder of its own under GetTempPathW, removed after it.
#include <windows.h>
// after windows.h, whose types they use
#include <aclapi.h>
#include <sddl.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "platform/platform.hpp"
#include "registry/shared_file.hpp"

namespace {

using lazybreaker::registry::FileError;
using lazybreaker::registry::FileHeader;
using lazybreaker::registry::FileRequest;
using lazybreaker::registry::MappedFile;
using lazybreaker::registry::open_file;

std::wstring wide(const std::string &utf8) {
  wchar_t out[4096];
  const int n = MultiByteToWideChar(CP_UTF8, 0, utf8.c_str(), -1, out, 4096);
  REQUIRE(n > 0);
  return out;
}

std::string narrow(const std::wstring &w) {
  char out[8192];
  const int n = WideCharToMultiByte(CP_UTF8, 0, w.c_str(), -1, out, sizeof out, nullptr, nullptr);
  REQUIRE(n > 0);
  return out;
}

// A folder of its own under the temporary folder, removed with what it
// holds (one level: the cases make files and folders only directly in it).
struct TempDir {
  std::string path;  // UTF-8, with / between its parts as a caller may give
  TempDir() {
    wchar_t tmp[MAX_PATH + 1];
    REQUIRE(GetTempPathW(MAX_PATH + 1, tmp) > 0);
    static int made = 0;
    wchar_t name[64];
    swprintf(name, 64, L"lb-shared-file-%lu-%d", GetCurrentProcessId(), ++made);
    const std::wstring dir = std::wstring(tmp) + name;
    REQUIRE(CreateDirectoryW(dir.c_str(), nullptr) != 0);
    path = narrow(dir);
    for (char &c : path)
      if (c == '\\') c = '/';
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  ~TempDir() {
    const std::wstring dir = wide(path);
    WIN32_FIND_DATAW found;
    HANDLE it = FindFirstFileW((dir + L"\\*").c_str(), &found);
    if (it != INVALID_HANDLE_VALUE) {
      do {
        const std::wstring name = found.cFileName;
        if (name == L"." || name == L"..") continue;
        const std::wstring p = dir + L"\\" + name;
        if ((found.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0)
          RemoveDirectoryW(p.c_str());
        else
          DeleteFileW(p.c_str());
      } while (FindNextFileW(it, &found) != 0);
      FindClose(it);
    }
    RemoveDirectoryW(dir.c_str());
  }
  std::string at(const char *name) const { return path + "/" + name; }
  // How many names in the folder end in .tmp (a creation's leftovers).
  int temporaries() const {
    WIN32_FIND_DATAW found;
    HANDLE it = FindFirstFileW((wide(path) + L"\\*.tmp").c_str(), &found);
    if (it == INVALID_HANDLE_VALUE) return 0;
    int n = 0;
    do ++n;
    while (FindNextFileW(it, &found) != 0);
    FindClose(it);
    return n;
  }
};

size_t small_arena(uint32_t, uint32_t) { return 64 * 1024; }

FileRequest request(const std::string &path, bool create, bool exclusive = false) {
  FileRequest r{};
  r.path = path.c_str();
  r.create = create;
  r.exclusive = exclusive;
  r.mode = 0600;
  r.default_capacity = 64;
  r.arena_bytes = &small_arena;
  return r;
}

HANDLE open_raw(const std::string &path, DWORD access = GENERIC_READ | GENERIC_WRITE) {
  return CreateFileW(wide(path).c_str(), access,
                     FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING,
                     FILE_ATTRIBUTE_NORMAL, nullptr);
}

void write_file(const std::string &path, const void *data, DWORD bytes) {
  HANDLE f = CreateFileW(wide(path).c_str(), GENERIC_WRITE, 0, nullptr, CREATE_ALWAYS,
                         FILE_ATTRIBUTE_NORMAL, nullptr);
  REQUIRE(f != INVALID_HANDLE_VALUE);
  DWORD wrote = 0;
  CHECK(WriteFile(f, data, bytes, &wrote, nullptr) != 0);
  CHECK(wrote == bytes);
  CloseHandle(f);
}

// Creates the file at `path` and closes it.
void make_registry_file(const std::string &path) {
  MappedFile f;
  FileError err;
  REQUIRE_MESSAGE(open_file(request(path, true, true), &f, &err), err.message);
}

// This process's user as an SDDL SID string.
std::string my_sid() {
  HANDLE token = nullptr;
  REQUIRE(OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token) != 0);
  alignas(8) unsigned char buf[sizeof(TOKEN_USER) + SECURITY_MAX_SID_SIZE];
  DWORD got = 0;
  REQUIRE(GetTokenInformation(token, TokenUser, buf, sizeof buf, &got) != 0);
  CloseHandle(token);
  char *text = nullptr;
  REQUIRE(ConvertSidToStringSidA(reinterpret_cast<TOKEN_USER *>(buf)->User.Sid, &text) != 0);
  std::string s = text;
  LocalFree(text);
  return s;
}

// Gives the file at `path` the access list of the SDDL `dacl`.
void set_dacl(const std::string &path, const std::string &dacl) {
  PSECURITY_DESCRIPTOR sd = nullptr;
  REQUIRE(ConvertStringSecurityDescriptorToSecurityDescriptorA(dacl.c_str(), SDDL_REVISION_1, &sd,
                                                               nullptr) != 0);
  BOOL present = FALSE, defaulted = FALSE;
  PACL acl = nullptr;
  REQUIRE(GetSecurityDescriptorDacl(sd, &present, &acl, &defaulted) != 0);
  std::wstring w = wide(path);
  CHECK(SetNamedSecurityInfoW(w.data(), SE_FILE_OBJECT,
                              DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION,
                              nullptr, nullptr, acl, nullptr) == ERROR_SUCCESS);
  LocalFree(sd);
}

constexpr ACCESS_MASK kWrites =
    FILE_WRITE_DATA | FILE_APPEND_DATA | GENERIC_WRITE | GENERIC_ALL | WRITE_DAC | WRITE_OWNER;

// The SIDs (SDDL strings) the file's access list lets do any of `mask`.
std::string allowed(const std::string &path, ACCESS_MASK mask) {
  PACL dacl = nullptr;
  PSECURITY_DESCRIPTOR sd = nullptr;
  std::wstring w = wide(path);
  REQUIRE(GetNamedSecurityInfoW(w.data(), SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr,
                                nullptr, &dacl, nullptr, &sd) == ERROR_SUCCESS);
  REQUIRE(dacl != nullptr);
  std::string who;
  for (DWORD i = 0; i < dacl->AceCount; ++i) {
    void *entry = nullptr;
    REQUIRE(GetAce(dacl, i, &entry) != 0);
    const auto *ace = static_cast<const ACCESS_ALLOWED_ACE *>(entry);
    if (ace->Header.AceType != ACCESS_ALLOWED_ACE_TYPE || (ace->Mask & mask) == 0) continue;
    char *text = nullptr;
    REQUIRE(ConvertSidToStringSidA(const_cast<DWORD *>(&ace->SidStart), &text) != 0);
    who += std::string(who.empty() ? "" : " ") + text;
    LocalFree(text);
  }
  LocalFree(sd);
  return who;
}

std::string hex(const uint8_t *bytes, size_t n) {
  std::string s;
  char two[3];
  for (size_t i = 0; i < n; ++i) {
    snprintf(two, sizeof two, "%02x", bytes[i]);
    s += two;
  }
  return s;
}

}  // namespace

TEST_CASE("a created registry file is mapped whole, header first, and nothing is left beside it") {
  TempDir dir;
  const std::string path = dir.at("created.lbr");
  MappedFile f;
  FileError err;
  REQUIRE_MESSAGE(open_file(request(path, true, true), &f, &err), err.message);
  CHECK(std::memcmp(f.header()->magic, FileHeader::kMagic, 8) == 0);
  CHECK(f.header()->capacity == 64);
  CHECK(f.bytes == f.header()->file_bytes);
  CHECK(f.fd >= 0);
  HANDLE raw = open_raw(path, GENERIC_READ);
  REQUIRE(raw != INVALID_HANDLE_VALUE);
  LARGE_INTEGER size;
  CHECK(GetFileSizeEx(raw, &size) != 0);
  CHECK(uint64_t(size.QuadPart) == f.bytes);
  CloseHandle(raw);
  // The whole view is the file: the arena's last byte is there, and zero.
  CHECK(f.at(f.bytes - 1)[0] == 0);
  CHECK(dir.temporaries() == 0);
}

TEST_CASE("an exclusive create of an existing file is Exists; a plain one opens that file") {
  TempDir dir;
  const std::string path = dir.at("twice.lbr");
  MappedFile first;
  FileError err;
  REQUIRE_MESSAGE(open_file(request(path, true, true), &first, &err), err.message);
  MappedFile again;
  FileError exists;
  CHECK_FALSE(open_file(request(path, true, true), &again, &exists));
  CHECK(exists.kind == FileError::Exists);
  CHECK(std::strstr(exists.message, "exists") != nullptr);
  FileError none;
  REQUIRE_MESSAGE(open_file(request(path, true, false), &again, &none), none.message);
  // One file, two views of it: a store through one is seen through the other.
  CHECK(again.header()->jitter_seed == first.header()->jitter_seed);
  first.header()->manual_ns.store(1234);
  CHECK(again.header()->manual_ns.load() == 1234);
  CHECK(dir.temporaries() == 0);
}

TEST_CASE("an open without create of a missing file is Missing, and says to create it") {
  TempDir dir;
  MappedFile f;
  FileError err;
  const std::string path = dir.at("absent.lbr");
  CHECK_FALSE(open_file(request(path, false), &f, &err));
  CHECK(err.kind == FileError::Missing);
  CHECK(err.remedy == FileError::CreateIt);
  FileError in_missing_dir;
  const std::string deeper = dir.at("no-such-folder/absent.lbr");
  CHECK_FALSE(open_file(request(deeper, true), &f, &in_missing_dir));
  CHECK(in_missing_dir.kind == FileError::Missing);
}

TEST_CASE("a directory is not a registry file, for an open and for a create") {
  TempDir dir;
  const std::string path = dir.at("folder");
  REQUIRE(CreateDirectoryW(wide(path).c_str(), nullptr) != 0);
  MappedFile f;
  FileError open_err, create_err;
  CHECK_FALSE(open_file(request(path, false), &f, &open_err));
  CHECK_MESSAGE(open_err.kind == FileError::Version, open_err.message);
  CHECK_FALSE(open_file(request(path, true), &f, &create_err));
  CHECK_MESSAGE(create_err.kind == FileError::Version, create_err.message);
  CHECK(dir.temporaries() == 0);
}

TEST_CASE("a device is not a registry file") {
  MappedFile f;
  FileError err;
  const std::string nul = "NUL";
  CHECK_FALSE(open_file(request(nul, false), &f, &err));
  CHECK_MESSAGE(err.kind == FileError::Version, err.message);
}

TEST_CASE("a file shorter than a header is Corrupt with the magic, not a registry file without") {
  TempDir dir;
  char bytes[40] = {};  // less than the checksummed part of a header
  std::memcpy(bytes, FileHeader::kMagic, 8);
  write_file(dir.at("short.lbr"), bytes, sizeof bytes);
  std::memset(bytes, 'x', sizeof bytes);
  write_file(dir.at("other.txt"), bytes, sizeof bytes);
  write_file(dir.at("empty"), bytes, 0);
  MappedFile f;
  FileError with_magic, without, empty;
  CHECK_FALSE(open_file(request(dir.at("short.lbr"), false), &f, &with_magic));
  CHECK(with_magic.kind == FileError::Corrupt);
  CHECK(std::strstr(with_magic.message, "shorter than a registry header") != nullptr);
  CHECK_FALSE(open_file(request(dir.at("other.txt"), false), &f, &without));
  CHECK(without.kind == FileError::Version);
  CHECK_FALSE(open_file(request(dir.at("empty"), true), &f, &empty));
  CHECK(empty.kind == FileError::Version);
}

TEST_CASE("a header changed after its checksum is Corrupt") {
  TempDir dir;
  const std::string path = dir.at("damaged.lbr");
  make_registry_file(path);
  HANDLE raw = open_raw(path);
  REQUIRE(raw != INVALID_HANDLE_VALUE);
  OVERLAPPED at{};
  at.Offset = offsetof(FileHeader, created_unix_ns);
  const char changed = 0x5a;
  DWORD wrote = 0;
  CHECK(WriteFile(raw, &changed, 1, &wrote, &at) != 0);
  CloseHandle(raw);
  MappedFile f;
  FileError err;
  CHECK_FALSE(open_file(request(path, false), &f, &err));
  CHECK(err.kind == FileError::Corrupt);
  CHECK(std::strstr(err.message, "checksum") != nullptr);
}

TEST_CASE("an open waits for the file's lock at most kLockWaitNs, then is Busy") {
  TempDir dir;
  const std::string path = dir.at("locked.lbr");
  make_registry_file(path);
  HANDLE holder = open_raw(path);
  REQUIRE(holder != INVALID_HANDLE_VALUE);
  // Every byte, whichever the library's lock is.
  OVERLAPPED all{};
  REQUIRE(LockFileEx(holder, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, MAXDWORD,
                     MAXDWORD, &all) != 0);
  MappedFile f;
  FileError err;
  const uint64_t start = lazybreaker::platform::monotonic_ns();
  CHECK_FALSE(open_file(request(path, false), &f, &err));
  const uint64_t waited = lazybreaker::platform::monotonic_ns() - start;
  CHECK(err.kind == FileError::Busy);
  CHECK(std::strstr(err.message, "handle.exe") != nullptr);
  CHECK(waited >= lazybreaker::registry::kLockWaitNs);
  CHECK(waited < lazybreaker::registry::kLockWaitNs + 2'000'000'000ull);
  // Let go, it opens (and the lock is not in the way of the file's bytes).
  CHECK(UnlockFileEx(holder, 0, MAXDWORD, MAXDWORD, &all) != 0);
  FileError none;
  CHECK_MESSAGE(open_file(request(path, false), &f, &none), none.message);
  CloseHandle(holder);
}

// Run by the case below in a process of its own: holds every byte of the
// file LB_TEST_LOCK_FILE names locked until it is killed; nothing without.
TEST_CASE("a process that holds the lock (child)") {
  const char *path = std::getenv("LB_TEST_LOCK_FILE");
  if (path == nullptr) return;
  HANDLE holder = open_raw(path);
  REQUIRE(holder != INVALID_HANDLE_VALUE);
  OVERLAPPED all{};
  REQUIRE(LockFileEx(holder, LOCKFILE_EXCLUSIVE_LOCK, 0, MAXDWORD, MAXDWORD, &all) != 0);
  Sleep(INFINITE);
}

namespace {
// Runs this program again with only the case `name` and the environment
// variable `var` set to `value`, in *child.
void run_child(const char *name, const char *var, const std::string &value,
               PROCESS_INFORMATION *child) {
  SetEnvironmentVariableA(var, value.c_str());
  wchar_t self[MAX_PATH];
  REQUIRE(GetModuleFileNameW(nullptr, self, MAX_PATH) > 0);
  std::wstring line = L"\"" + std::wstring(self) + L"\" \"--test-case=" + wide(name) + L"\"";
  STARTUPINFOW si{};
  si.cb = sizeof si;
  const bool started = CreateProcessW(self, line.data(), nullptr, nullptr, FALSE, 0, nullptr,
                                      nullptr, &si, child) != 0;
  SetEnvironmentVariableA(var, nullptr);
  REQUIRE(started);
}
}  // namespace

TEST_CASE("a process killed while it holds the file's lock does not keep an open waiting") {
  TempDir dir;
  const std::string path = dir.at("killed-holder.lbr");
  make_registry_file(path);
  PROCESS_INFORMATION child{};
  run_child("a process that holds the lock (child)", "LB_TEST_LOCK_FILE", path, &child);
  // Until the child holds it.
  HANDLE probe = open_raw(path);
  REQUIRE(probe != INVALID_HANDLE_VALUE);
  bool held = false;
  for (int i = 0; i < 3000 && !held; ++i) {
    OVERLAPPED o{};
    held = LockFileEx(probe, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &o) == 0;
    if (!held) {
      UnlockFileEx(probe, 0, 1, 0, &o);
      Sleep(10);
    }
  }
  CloseHandle(probe);
  CHECK(held);
  TerminateProcess(child.hProcess, 9);
  CHECK(WaitForSingleObject(child.hProcess, 30'000) == WAIT_OBJECT_0);
  CloseHandle(child.hThread);
  CloseHandle(child.hProcess);
  MappedFile f;
  FileError err;
  const uint64_t start = lazybreaker::platform::monotonic_ns();
  CHECK_MESSAGE(open_file(request(path, false), &f, &err), err.message);
  CHECK(lazybreaker::platform::monotonic_ns() - start < 2'000'000'000ull);
}

TEST_CASE("a file of another boot is brought forward to this one, under its lock") {
  TempDir dir;
  const std::string path = dir.at("old-boot.lbr");
  {
    MappedFile f;
    FileError err;
    REQUIRE_MESSAGE(open_file(request(path, true, true), &f, &err), err.message);
    FileHeader &h = *f.header();
    h.boot_id[0] ^= 0xff;
    h.stripe_owner[3].store(77);
    h.checksum = h.compute_checksum();
  }
  MappedFile f;
  FileError err;
  REQUIRE_MESSAGE(open_file(request(path, false), &f, &err), err.message);
  uint8_t boot[16];
  lazybreaker::platform::boot_id(boot);
  CHECK(std::memcmp(f.header()->boot_id, boot, 16) == 0);
  CHECK(f.header()->stripe_owner[3].load() == 0);
  CHECK(f.header()->checksum == f.header()->compute_checksum());
}

// Run by the case below in a process of its own (LB_TEST_BOOT_FILE names
// the file, LB_TEST_BOOT_ID the boot id its creator saw); nothing without.
TEST_CASE("the boot id seen by another process (child)") {
  const char *path = std::getenv("LB_TEST_BOOT_FILE");
  const char *expected = std::getenv("LB_TEST_BOOT_ID");
  if (path == nullptr || expected == nullptr) return;
  uint8_t boot[16];
  lazybreaker::platform::boot_id(boot);
  CHECK(hex(boot, 16) == expected);
  MappedFile f;
  FileError err;
  REQUIRE_MESSAGE(open_file(request(path, false), &f, &err), err.message);
  CHECK(hex(f.header()->boot_id, 16) == expected);
  f.header()->manual_ns.store(4242);  // that this ran, for the case below
}

TEST_CASE("the boot id is the same in every open and in another process, and not zero") {
  TempDir dir;
  const std::string path = dir.at("boot.lbr");
  MappedFile f;
  FileError err;
  REQUIRE_MESSAGE(open_file(request(path, true, true), &f, &err), err.message);
  uint8_t boot[16], again[16], zero[16] = {};
  lazybreaker::platform::boot_id(boot);
  lazybreaker::platform::boot_id(again);
  CHECK(std::memcmp(boot, again, 16) == 0);
  CHECK(std::memcmp(boot, zero, 16) != 0);
  CHECK(std::memcmp(f.header()->boot_id, boot, 16) == 0);
  const std::string id = hex(boot, 16);
  SetEnvironmentVariableA("LB_TEST_BOOT_FILE", path.c_str());
  PROCESS_INFORMATION pi{};
  run_child("the boot id seen by another process (child)", "LB_TEST_BOOT_ID", id, &pi);
  SetEnvironmentVariableA("LB_TEST_BOOT_FILE", nullptr);
  CHECK(WaitForSingleObject(pi.hProcess, 60'000) == WAIT_OBJECT_0);
  DWORD code = 1;
  GetExitCodeProcess(pi.hProcess, &code);
  CHECK(code == 0);
  CloseHandle(pi.hThread);
  CloseHandle(pi.hProcess);
  // The other process opened it, and did not bring it forward: the same boot.
  CHECK(f.header()->manual_ns.load() == 4242);
  CHECK(std::memcmp(f.header()->boot_id, boot, 16) == 0);
}

TEST_CASE("file_identity is one for two handles to a file and another for another file") {
  TempDir dir;
  MappedFile a, b, c;
  FileError err;
  REQUIRE_MESSAGE(open_file(request(dir.at("a.lbr"), true, true), &a, &err), err.message);
  REQUIRE_MESSAGE(open_file(request(dir.at("a.lbr"), false), &b, &err), err.message);
  REQUIRE_MESSAGE(open_file(request(dir.at("c.lbr"), true, true), &c, &err), err.message);
  uint64_t dev_a = 0, ino_a = 0, dev_b = 0, ino_b = 0, dev_c = 0, ino_c = 0;
  REQUIRE(lazybreaker::platform::file_identity(a.fd, &dev_a, &ino_a));
  REQUIRE(lazybreaker::platform::file_identity(b.fd, &dev_b, &ino_b));
  REQUIRE(lazybreaker::platform::file_identity(c.fd, &dev_c, &ino_c));
  CHECK(a.fd != b.fd);
  CHECK(dev_a == dev_b);
  CHECK(ino_a == ino_b);
  CHECK(dev_a == dev_c);
  CHECK(ino_a != ino_c);
  CHECK_FALSE(lazybreaker::platform::file_identity(-1, &dev_a, &ino_a));
}

TEST_CASE("an existing file Everyone may write is refused to a create, unless told to trust it") {
  TempDir dir;
  const std::string path = dir.at("open-to-all.lbr");
  make_registry_file(path);
  set_dacl(path, "D:P(A;;FA;;;" + my_sid() + ")(A;;FA;;;WD)");
  MappedFile f;
  FileError refused;
  CHECK_FALSE(open_file(request(path, true), &f, &refused));
  CHECK(refused.kind == FileError::Permission);
  CHECK(refused.remedy == FileError::TrustOrOpen);
  CHECK_MESSAGE(std::strstr(refused.message, "stands for others") != nullptr, refused.message);
  FileRequest trusting = request(path, true);
  trusting.any_owner = true;
  FileError none;
  CHECK_MESSAGE(open_file(trusting, &f, &none), none.message);
  FileRequest shared_mode = request(path, true);
  shared_mode.mode = 0666;  // grants others write itself
  CHECK_MESSAGE(open_file(shared_mode, &f, &none), none.message);
  // Guests and a domain's users stand for others too; a group named on
  // purpose (here a made-up domain's group 1001) is the file's group.
  // Wine keeps only the list its Unix mode can say: there these are not
  // checked, and say so.
  for (const char *sid : {"S-1-5-32-546", "S-1-5-21-1-2-3-513", "S-1-5-21-1-2-3-1001"}) {
    CAPTURE(sid);
    set_dacl(path, "D:P(A;;FA;;;" + my_sid() + ")(A;;FW;;;" + sid + ")");
    if (allowed(path, kWrites).find(sid) == std::string::npos) {
      MESSAGE("this system does not keep an access list for ", std::string(sid), ": not checked");
      continue;
    }
    const bool others = std::strstr(sid, "-1001") == nullptr;
    FileError also;
    CHECK(open_file(request(path, true), &f, &also) == !others);
    if (others) CHECK(also.kind == FileError::Permission);
  }
  CHECK_MESSAGE(open_file(request(path, false), &f, &none), none.message);
}

TEST_CASE("an existing file with a NULL DACL is refused to a create") {
  TempDir dir;
  const std::string path = dir.at("null-dacl.lbr");
  make_registry_file(path);
  std::wstring w = wide(path);
  CHECK(SetNamedSecurityInfoW(w.data(), SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr, nullptr,
                              nullptr, nullptr) == ERROR_SUCCESS);
  PACL dacl = nullptr;
  PSECURITY_DESCRIPTOR sd = nullptr;
  REQUIRE(GetNamedSecurityInfoW(w.data(), SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr,
                                nullptr, &dacl, nullptr, &sd) == ERROR_SUCCESS);
  const bool null_dacl = dacl == nullptr;
  LocalFree(sd);
  if (!null_dacl) {
    MESSAGE("this system keeps no NULL DACL on a file: not checked");
    return;
  }
  MappedFile f;
  FileError refused;
  CHECK_FALSE(open_file(request(path, true), &f, &refused));
  CHECK(refused.kind == FileError::Permission);
  CHECK_MESSAGE(std::strstr(refused.message, "NULL DACL") != nullptr, refused.message);
}

// Whether a file created with an access list keeps it (Windows does; Wine 8
// keeps only what its Unix mode can say: owner and Everyone).
bool keeps_created_access_lists(const TempDir &dir) {
  PSECURITY_DESCRIPTOR sd = nullptr;
  REQUIRE(ConvertStringSecurityDescriptorToSecurityDescriptorA(
              ("D:P(A;;FA;;;" + my_sid() + ")(A;;FR;;;AU)").c_str(), SDDL_REVISION_1, &sd,
              nullptr) != 0);
  SECURITY_ATTRIBUTES sa{sizeof sa, sd, FALSE};
  const std::string probe = dir.at("probe");
  HANDLE f = CreateFileW(wide(probe).c_str(), GENERIC_WRITE, 0, &sa, CREATE_NEW,
                         FILE_ATTRIBUTE_NORMAL, nullptr);
  LocalFree(sd);
  REQUIRE(f != INVALID_HANDLE_VALUE);
  CloseHandle(f);
  return allowed(probe, FILE_READ_DATA).find("S-1-5-11") != std::string::npos;
}

// Whether every SID of the space-separated `who` is among `allowed_sids`.
bool only(const std::string &who, const std::string &allowed_sids) {
  size_t at = 0;
  while (at < who.size()) {
    const size_t end = std::min(who.find(' ', at), who.size());
    if ((" " + allowed_sids + " ").find(" " + who.substr(at, end - at) + " ") == std::string::npos)
      return false;
    at = end + 1;
  }
  return true;
}

TEST_CASE(
    "a created file's access list follows its mode: only its owner, SYSTEM and "
    "Administrators write it unless the mode says others may") {
  TempDir dir;
  const std::string me = my_sid();
  const std::string owner_and_admins = me + " S-1-5-18 S-1-5-32-544";
  const bool kept = keeps_created_access_lists(dir);
  if (!kept)
    MESSAGE("this system does not keep a created file's access list: only its writers checked");
  struct {
    uint32_t mode;
    const char *name;
    bool others_read, others_write;
  } cases[] = {{0600, "private.lbr", false, false},
               {0660, "group.lbr", false, false},  // Windows files have no group
               {0644, "readable.lbr", true, false},
               {0666, "writable.lbr", true, true}};
  for (const auto &c : cases) {
    CAPTURE(c.mode);
    const std::string path = dir.at(c.name);
    FileRequest r = request(path, true, true);
    r.mode = c.mode;
    MappedFile f;
    FileError err;
    REQUIRE_MESSAGE(open_file(r, &f, &err), err.message);
    const std::string writers = allowed(path, kWrites), readers = allowed(path, FILE_READ_DATA);
    CAPTURE(writers);
    CAPTURE(readers);
    CHECK(writers.find(me) != std::string::npos);
    if (!c.others_write) CHECK(only(writers, owner_and_admins));
    if (kept) {
      CHECK(only(writers, owner_and_admins + (c.others_write ? " S-1-5-11" : "")));
      CHECK(only(readers, owner_and_admins + (c.others_read ? " S-1-5-11" : "")));
      CHECK((readers.find("S-1-5-11") != std::string::npos) == c.others_read);
      CHECK((writers.find("S-1-5-11") != std::string::npos) == c.others_write);
    }
    // Its own creator trusts it again.
    FileError again;
    CHECK_MESSAGE(open_file(request(path, true), &f, &again), again.message);
  }
}

TEST_CASE("a create does not go through a symbolic link at the path; an open follows it") {
  TempDir dir;
  const std::string target = dir.at("target.lbr"), link = dir.at("link.lbr");
  make_registry_file(target);
  // (Wine 8 says it made one, and there is none.)
  if (CreateSymbolicLinkW(wide(link).c_str(), wide(target).c_str(), 0) == 0 ||
      GetFileAttributesW(wide(link).c_str()) == INVALID_FILE_ATTRIBUTES) {
    MESSAGE("no symbolic link made (error " << GetLastError() << "): not checked");
    return;
  }
  MappedFile f;
  FileError refused;
  CHECK_FALSE(open_file(request(link, true), &f, &refused));
  CHECK_MESSAGE(refused.kind == FileError::Permission, refused.message);
  CHECK(refused.remedy == FileError::NameTheFile);
  FileError none;
  CHECK_MESSAGE(open_file(request(link, false), &f, &none), none.message);
}

TEST_CASE("a path in UTF-8, with / or \\ between its parts, names the file it says") {
  TempDir dir;
  std::string path = dir.at("caf\xc3\xa9.lbr");
  for (char &c : path)
    if (c == '/') c = '\\';
  MappedFile f;
  FileError err;
  REQUIRE_MESSAGE(open_file(request(path, true, true), &f, &err), err.message);
  CHECK(GetFileAttributesW(wide(dir.path + "/caf\xc3\xa9.lbr").c_str()) != INVALID_FILE_ATTRIBUTES);
  MappedFile g;
  CHECK_MESSAGE(open_file(request(dir.at("caf\xc3\xa9.lbr"), false), &g, &err), err.message);
  FileError bad;
  CHECK_FALSE(open_file(request(dir.at("\xff\xfe.lbr"), true), &g, &bad));
  CHECK(bad.kind == FileError::Io);
}
