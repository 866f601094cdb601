// A shared registry file on Windows: made whole beside its path and moved
// there, checked for its owner and access list, locked with LockFileEx while
// an open checks it, and mapped whole (registry/shared_file.hpp says what
// each does; posix_shared_file.cpp is the Linux one). The registry uses it
// through that whole view: Windows cannot map parts of a file in place
// over a reservation (platform::map_file_at, platform::kMapsFilesInPlace).
// Imports from kernel32.dll and advapi32.dll only (security descriptors).
#include <windows.h>
// after windows.h, whose types they use
#include <aclapi.h>
#include <sddl.h>
#include <winioctl.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <utility>

#include "platform/platform.hpp"
#include "registry/shared_file.hpp"

namespace lazybreaker::registry {

namespace {

// Other processes open and map the file while this has it open, and may
// replace it by a rename.
constexpr DWORD kShareAll = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
// UTF-16 units of a path, as the POSIX side's 4096 bytes (longer than
// MAX_PATH, which a \\?\ path or a long-path-aware process may exceed).
constexpr int kPathUnits = 4096;
// The bytes creation writes and an open reads: the checksummed ones.
constexpr size_t kHeaderFixed = offsetof(FileHeader, checksum) + sizeof(uint64_t);
// The lock's byte: far past the end of any registry file, because Windows
// locks are mandatory (a locked range cannot be read with ReadFile through
// another handle), and an open that waits must still be refused only by
// the lock, never by a read.
constexpr uint64_t kLockAt = uint64_t(1) << 62;

// Frees what advapi32 allocated with LocalAlloc.
struct LocalMemory {
  void *p = nullptr;
  LocalMemory() = default;
  LocalMemory(const LocalMemory &) = delete;
  LocalMemory &operator=(const LocalMemory &) = delete;
  ~LocalMemory() {
    if (p != nullptr) LocalFree(p);
  }
};

// The system's words for `code` (FormatMessage), without the final period.
void system_words(DWORD code, char *out, size_t size) {
  DWORD n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr,
                           code, 0, out, DWORD(size), nullptr);
  while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '\r' || out[n - 1] == '.')) --n;
  if (n == 0)
    snprintf(out, size, "error %lu", (unsigned long)code);
  else
    out[n] = '\0';
}

// The error `code` of a failed CreateFileW, MoveFileExW, ... of `path`.
bool failed_code(FileError *err, DWORD code, const char *path, const char *doing) {
  FileError::Kind kind = FileError::Io;
  switch (code) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
      kind = FileError::Missing;
      break;
    case ERROR_ACCESS_DENIED:
    case ERROR_SHARING_VIOLATION:
    case ERROR_WRITE_PROTECT:
      kind = FileError::Permission;
      break;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY:
      kind = FileError::NoMemory;
      break;
    case ERROR_FILE_EXISTS:
    case ERROR_ALREADY_EXISTS:
      kind = FileError::Exists;
      break;
    default:
      break;
  }
  char words[300];
  system_words(code, words, sizeof words);
  return file_failed(err, kind, "%s: %s: %s (error %lu)", path, doing, words, (unsigned long)code);
}

bool failed_last(FileError *err, const char *path, const char *doing) {
  return failed_code(err, GetLastError(), path, doing);
}

// `path` (UTF-8) in UTF-16 with every / a \ (which a \\?\ path needs, and
// other paths take either way); false if it is not UTF-8 or too long.
bool widen(const char *path, wchar_t (&out)[kPathUnits]) {
  const int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, out, kPathUnits);
  if (n <= 0) return false;
  std::replace(out, out + n, L'/', L'\\');
  return true;
}

// An OVERLAPPED that names the byte at `at`, for ReadFile, WriteFile and
// the lock.
OVERLAPPED at_offset(uint64_t at) {
  OVERLAPPED o{};
  o.Offset = DWORD(at);
  o.OffsetHigh = DWORD(at >> 32);
  return o;
}

// This process's user (its token's), kept in `buf`; nullptr if unreadable.
struct ProcessUser {
  alignas(8) unsigned char buf[sizeof(TOKEN_USER) + SECURITY_MAX_SID_SIZE];
  PSID sid = nullptr;
  ProcessUser() {
    HANDLE token = nullptr;
    if (OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token) == 0) return;
    DWORD got = 0;
    if (GetTokenInformation(token, TokenUser, buf, sizeof buf, &got) != 0)
      sid = reinterpret_cast<TOKEN_USER *>(buf)->User.Sid;
    CloseHandle(token);
  }
};

// The security descriptor a created file gets: as near req.mode as Windows
// has words for. The owner (this process's user) has full control always.
// Windows files have no group, so the mode's group bits give nothing: its
// others read bit gives Authenticated Users read, its others write bit
// write. SYSTEM and Administrators have full
// control as well, as on every file of a default Windows ACL: they can
// take ownership of any file anyway, and services and administrators'
// tools that read a fleet's registries run as them. Protected (D:P), so
// that the directory's inheritable entries do not widen it.
bool creation_security(const FileRequest &req, LocalMemory *sd, FileError *err) {
  const ProcessUser me;
  char *text = nullptr;
  if (me.sid == nullptr || ConvertSidToStringSidA(me.sid, &text) == 0)
    return failed_last(err, req.path, "cannot read this process's user");
  LocalMemory me_text;
  me_text.p = text;
  const uint32_t mode = req.mode != 0 ? req.mode : 0600;
  char sddl[512];
  snprintf(sddl, sizeof sddl, "D:P(A;;FA;;;%s)(A;;FA;;;SY)(A;;FA;;;BA)%s%s", text,
           (mode & 0004) != 0 ? "(A;;FR;;;AU)" : "", (mode & 0002) != 0 ? "(A;;FW;;;AU)" : "");
  if (ConvertStringSecurityDescriptorToSecurityDescriptorA(sddl, SDDL_REVISION_1, &sd->p,
                                                           nullptr) == 0)
    return failed_last(err, req.path, "cannot make its access list");
  return true;
}

// Writes `bytes` of `data` at offset 0 of `f`.
bool write_start(HANDLE f, const void *data, DWORD bytes) {
  OVERLAPPED o = at_offset(0);
  DWORD wrote = 0;
  return WriteFile(f, data, bytes, &wrote, &o) != 0 && wrote == bytes;
}

// The file just made (`made`) opened again at the path it was moved to:
// Wine's handle still names it by its old name, through which it cannot
// read the file's volume (file_identity). It must be the one made, not one
// another process put there in between: its file index is compared (not
// its volume, which the old handle cannot read under Wine; a file moved
// within a folder stays on its volume).
bool reopen_made(HANDLE made, const wchar_t *wide, HANDLE *out, const char *path, FileError *err) {
  *out = CreateFileW(wide, GENERIC_READ | GENERIC_WRITE, kShareAll, nullptr, OPEN_EXISTING,
                     FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
  if (*out == INVALID_HANDLE_VALUE) return failed_last(err, path, "cannot open the new file");
  BY_HANDLE_FILE_INFORMATION a, b;
  if (GetFileInformationByHandle(made, &a) != 0 && GetFileInformationByHandle(*out, &b) != 0 &&
      a.nFileIndexHigh == b.nFileIndexHigh && a.nFileIndexLow == b.nFileIndexLow)
    return true;
  CloseHandle(*out);
  *out = INVALID_HANDLE_VALUE;
  return file_failed(err, FileError::Io,
                     "%s: another file took the new file's place as soon as it was moved there "
                     "(try again)",
                     path);
}

// Makes a complete registry file beside `path` and moves it there without
// replacing what is there, so that the path never names a half-made file;
// false with err->kind Exists if another process moved one first. Made as
// `path.PID.SALT.tmp`, which a creator killed before the move leaves behind
// (FILE_FLAG_DELETE_ON_CLOSE would delete the file this keeps, too).
bool create_file(const FileRequest &req, const wchar_t *wide, HANDLE *out, FileError *err) {
  FileHeader h;
  new_file_header(req, &h);
  uint64_t salt = 0;
  if (!platform::random_bytes(&salt, sizeof salt)) salt = platform::unix_now_ns();
  char tmp[kPathUnits];
  wchar_t wide_tmp[kPathUnits];
  if (snprintf(tmp, sizeof tmp, "%s.%lu.%016llx.tmp", req.path,
               (unsigned long)platform::process_id(),
               (unsigned long long)salt) >= int(sizeof tmp) ||
      !widen(tmp, wide_tmp))
    return file_failed(err, FileError::Io, "%s: the path is too long", req.path);
  LocalMemory sd;
  if (!creation_security(req, &sd, err)) return false;
  SECURITY_ATTRIBUTES sa{sizeof sa, sd.p, FALSE};
  HANDLE f = CreateFileW(wide_tmp, GENERIC_READ | GENERIC_WRITE, kShareAll, &sa, CREATE_NEW,
                         FILE_ATTRIBUTE_NORMAL, nullptr);
  if (f == INVALID_HANDLE_VALUE)
    return failed_last(err, req.path, "cannot create a file in its directory");
  auto give_up = [&](bool result) {
    CloseHandle(f);
    DeleteFileW(wide_tmp);
    return result;
  };
  // Every cluster allocated now (a file is not sparse unless asked to be),
  // so that no store into the view can fail later for want of space (an
  // in-page error, which would end the process); the rest reads as zero,
  // a valid empty state.
  FILE_END_OF_FILE_INFO end{};
  end.EndOfFile.QuadPart = LONGLONG(h.file_bytes);
  if (SetFileInformationByHandle(f, FileEndOfFileInfo, &end, sizeof end) == 0)
    return give_up(failed_last(err, req.path, "cannot allocate the file"));
  if (!write_start(f, &h, DWORD(kHeaderFixed)))
    return give_up(failed_last(err, req.path, "cannot write the header"));
  if (MoveFileExW(wide_tmp, wide, 0) == 0) {
    const DWORD e = GetLastError();
    if (e == ERROR_ALREADY_EXISTS || e == ERROR_FILE_EXISTS) {
      give_up(false);
      return file_failed(err, FileError::Exists, "%s: the file exists", req.path);
    }
    return give_up(failed_code(err, e, req.path, "cannot move the new file into place"));
  }
  const bool opened = reopen_made(f, wide, out, req.path, err);
  CloseHandle(f);
  return opened;
}

}  // namespace

namespace {

// Why the reparse point (symbolic link, junction) at the path is not used
// by a create, and where it leads if that can be told: a create makes or
// uses a file only at the path itself (a link could point anywhere its
// owner likes).
bool reparse_refused(const FileRequest &req, const wchar_t *wide, FileError *err) {
  char where[kPathUnits] = ", which leads nowhere that exists";
  HANDLE target =
      CreateFileW(wide, 0, kShareAll, nullptr, OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, nullptr);
  if (target != INVALID_HANDLE_VALUE) {
    wchar_t name[kPathUnits];
    const DWORD n = GetFinalPathNameByHandleW(target, name, kPathUnits, FILE_NAME_NORMALIZED);
    CloseHandle(target);
    char utf8[kPathUnits - 8];
    if (n > 0 && n < DWORD(kPathUnits) &&
        WideCharToMultiByte(CP_UTF8, 0, name, -1, utf8, sizeof utf8, nullptr, nullptr) > 0)
      snprintf(where, sizeof where, " to %s", utf8);
  }
  err->remedy = FileError::NameTheFile;
  return file_failed(err, FileError::Permission,
                     "%s: a symbolic link or junction%s; a create makes or uses a registry file "
                     "only at the path itself, never through a link",
                     req.path, where);
}

// Refuses what is not a regular file at the path: a directory, a device,
// and for a create a reparse point (an open without create follows one).
bool check_kind(const FileRequest &req, const wchar_t *wide, HANDLE f, FileError *err) {
  if (GetFileType(f) != FILE_TYPE_DISK)
    return file_failed(err, FileError::Version, "%s: not a regular file (a device?)", req.path);
  BY_HANDLE_FILE_INFORMATION info;
  if (GetFileInformationByHandle(f, &info) == 0)
    return failed_last(err, req.path, "cannot read its attributes");
  if ((info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0)
    return file_failed(err, FileError::Version, "%s: a directory, not a registry file", req.path);
  if (req.create && (info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0)
    return reparse_refused(req, wide, err);
  return true;
}

// Opens the existing file at the path for reading and writing; a create
// opens a reparse point there itself (check_kind refuses it), an open
// without create what it leads to.
bool open_existing(const FileRequest &req, const wchar_t *wide, HANDLE *out, FileError *err) {
  const DWORD flags = FILE_ATTRIBUTE_NORMAL | (req.create ? FILE_FLAG_OPEN_REPARSE_POINT : 0);
  *out = CreateFileW(wide, GENERIC_READ | GENERIC_WRITE, kShareAll, nullptr, OPEN_EXISTING, flags,
                     nullptr);
  if (*out != INVALID_HANDLE_VALUE) return true;
  const DWORD e = GetLastError();
  const DWORD attributes = GetFileAttributesW(wide);  // of the path itself, not followed
  const bool there = attributes != INVALID_FILE_ATTRIBUTES;
  const bool missing = e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND;
  if (missing && there && (attributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0)
    return file_failed(err, FileError::Missing,
                       "%s: a symbolic link or junction to a file that does not exist", req.path);
  if (missing && req.create)  // moved there by another process, removed since
    return file_failed(err, FileError::Missing,
                       "%s: the file was removed while this opened it (try again)", req.path);
  if (missing) {
    err->remedy = FileError::CreateIt;
    return file_failed(err, FileError::Missing, "%s: no such file", req.path);
  }
  // CreateFileW opens no directory without FILE_FLAG_BACKUP_SEMANTICS.
  if (e == ERROR_ACCESS_DENIED && there && (attributes & FILE_ATTRIBUTE_DIRECTORY) != 0)
    return file_failed(err, FileError::Version, "%s: a directory, not a registry file", req.path);
  return failed_code(err, e, req.path, "cannot open it for reading and writing");
}

}  // namespace

namespace {

// Whether `sid` is one of the groups that stand for "others" (a POSIX
// file's o+w): everyone, every signed-in, network or local user, guests,
// anonymous callers, a domain's users or guests. A group named on purpose
// (a service's group) is the POSIX file's group: not others.
bool stands_for_others(PSID sid) {
  static constexpr WELL_KNOWN_SID_TYPE kOthers[] = {
      WinWorldSid,           WinAuthenticatedUserSid, WinBuiltinUsersSid,  WinInteractiveSid,
      WinLocalSid,           WinNetworkSid,           WinBuiltinGuestsSid, WinAnonymousSid,
      WinThisOrganizationSid};
  for (WELL_KNOWN_SID_TYPE t : kOthers)
    if (IsWellKnownSid(sid, t) != 0) return true;
  // Domain Users (RID 513) and Domain Guests (514) of any domain: S-1-5-21-...-RID.
  const PUCHAR count = GetSidSubAuthorityCount(sid);
  if (count == nullptr || *count < 2) return false;
  const DWORD first = *GetSidSubAuthority(sid, 0), rid = *GetSidSubAuthority(sid, *count - 1);
  return first == SECURITY_NT_NON_UNIQUE &&
         (rid == DOMAIN_GROUP_RID_USERS || rid == DOMAIN_GROUP_RID_GUESTS);
}

// Which of the groups that stand for others the access list lets write the
// file (or change who may), or nullptr if none. A deny entry before it is
// not weighed, and an allow entry of a kind this does not read (callback,
// object) counts as one that lets others write: a list that needs either
// to be safe is refused, to be safe.
const char *others_writer(const ACL *dacl) {
  if (dacl == nullptr) return "everyone (it has no access list, a NULL DACL, which grants all)";
  constexpr ACCESS_MASK kWrites =
      FILE_WRITE_DATA | FILE_APPEND_DATA | GENERIC_WRITE | GENERIC_ALL | WRITE_DAC | WRITE_OWNER;
  for (DWORD i = 0; i < dacl->AceCount; ++i) {
    void *entry = nullptr;
    if (GetAce(const_cast<ACL *>(dacl), i, &entry) == 0) continue;
    const auto *header = static_cast<const ACE_HEADER *>(entry);
    if ((header->AceFlags & INHERIT_ONLY_ACE) != 0) continue;
    switch (header->AceType) {
      case ACCESS_DENIED_ACE_TYPE:
      case ACCESS_DENIED_CALLBACK_ACE_TYPE:
      case ACCESS_DENIED_OBJECT_ACE_TYPE:
      case ACCESS_DENIED_CALLBACK_OBJECT_ACE_TYPE:
      case SYSTEM_AUDIT_ACE_TYPE:
      case SYSTEM_ALARM_ACE_TYPE:
        continue;
      case ACCESS_ALLOWED_ACE_TYPE:
        break;
      default:
        return "an access entry of a kind this does not read (a callback or object entry)";
    }
    const auto *ace = static_cast<const ACCESS_ALLOWED_ACE *>(entry);
    if ((ace->Mask & kWrites) != 0 && stands_for_others(const_cast<DWORD *>(&ace->SidStart)))
      return "a group that stands for others (Everyone, Users, Authenticated Users, Guests, "
             "Domain Users and the like)";
  }
  return nullptr;
}

// `sid` as "DOMAIN\name (S-1-...)", or as much of that as can be found.
void describe_sid(PSID sid, char *out, size_t size) {
  char *sid_text = nullptr;
  if (sid == nullptr || ConvertSidToStringSidA(sid, &sid_text) == 0) {
    snprintf(out, size, "%s", sid == nullptr ? "nobody" : "an unreadable SID");
    return;
  }
  LocalMemory text;
  text.p = sid_text;
  char name[256], domain[256];
  DWORD name_size = sizeof name, domain_size = sizeof domain;
  SID_NAME_USE use;
  if (LookupAccountSidA(nullptr, sid, name, &name_size, domain, &domain_size, &use) != 0)
    snprintf(out, size, "%s%s%s (%s)", domain, domain[0] != '\0' ? "\\" : "", name, sid_text);
  else
    snprintf(out, size, "%s", sid_text);
}

// The refusal of a create's existing file that trusted_for_create did not
// trust.
bool untrusted(const FileRequest &req, PSID owner, PSID me, const char *writer, uint32_t mode,
               FileError *err) {
  char owner_text[600], me_text[600], why[800];
  describe_sid(owner, owner_text, sizeof owner_text);
  describe_sid(me, me_text, sizeof me_text);
  if (writer == nullptr)
    snprintf(why, sizeof why,
             "neither this process's user %s nor Administrators nor SYSTEM owns it", me_text);
  else
    snprintf(why, sizeof why,
             "%s may write it, and the create's mode 0%03o does not grant others that", writer,
             unsigned(mode));
  err->remedy = FileError::TrustOrOpen;
  return file_failed(
      err, FileError::Permission,
      "%s: an existing file owned by %s: %s; a create uses an existing file only if this "
      "process's user, Administrators or SYSTEM owns it and others may write it only if the "
      "create's mode grants that",
      req.path, owner_text, why);
}

// Whether a create may use the existing file `f` it found at the path:
// owned by this process's user, Administrators or SYSTEM, and writable by
// none of the groups that stand for others unless the create's own mode
// grants others write; any_owner: either way.
bool trusted_for_create(const FileRequest &req, HANDLE f, FileError *err) {
  if (req.any_owner) return true;
  PSID owner = nullptr;
  PACL dacl = nullptr;
  LocalMemory sd;
  const DWORD e =
      GetSecurityInfo(f, SE_FILE_OBJECT, OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION,
                      &owner, nullptr, &dacl, nullptr, &sd.p);
  if (e != ERROR_SUCCESS)
    return failed_code(err, e, req.path, "cannot read its owner and access list");
  const ProcessUser me;
  const bool owner_ok =
      owner != nullptr && ((me.sid != nullptr && EqualSid(owner, me.sid) != 0) ||
                           IsWellKnownSid(owner, WinBuiltinAdministratorsSid) != 0 ||
                           IsWellKnownSid(owner, WinLocalSystemSid) != 0);
  const uint32_t mode = req.mode != 0 ? req.mode : 0600;
  const char *writer = (mode & 0002) != 0 ? nullptr : others_writer(dacl);
  if (owner_ok && writer == nullptr) return true;
  return untrusted(req, owner, me.sid, owner_ok ? writer : nullptr, mode, err);
}

// Takes the file's lock, waiting at most kLockWaitNs behind another process
// that holds it: a process holding it for good (a stopped one) cannot
// wedge an open. Polled, so that the library needs no thread, timer or
// callback. A process that ends holding it lets go (Windows unlocks a dead
// process's locks).
bool lock_file(HANDLE f, const char *path, FileError *err) {
  for (LockWait wait;;) {
    OVERLAPPED o = at_offset(kLockAt);
    if (LockFileEx(f, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &o) != 0)
      return true;
    const DWORD e = GetLastError();
    if (e != ERROR_LOCK_VIOLATION) return failed_code(err, e, path, "cannot lock it");
    if (!wait.nap())
      return file_failed(
          err, FileError::Busy,
          "%s: a process holds the registry file's lock and has not let go in %llu s "
          "(an open holds it only while it checks the file: that process is stuck, or "
          "holds it on purpose; Resource Monitor's Associated Handles, searched for the "
          "file's name, or Sysinternals' handle.exe lists who has the file open)",
          path, (unsigned long long)(kLockWaitNs / 1'000'000'000));
  }
}

void unlock_file(HANDLE f) {
  OVERLAPPED o = at_offset(kLockAt);
  UnlockFileEx(f, 0, 1, 0, &o);
}

}  // namespace

namespace {

// Whether the file is not sparse, so that no store into its view can fail
// for want of a cluster (an in-page error, which ends the process): a
// sparse copy has holes. A sparse file is made a normal one, which fills
// its holes, if the volume has room; else it is refused.
bool check_allocated(HANDLE f, const char *path, FileError *err) {
  BY_HANDLE_FILE_INFORMATION info;
  if (GetFileInformationByHandle(f, &info) == 0)
    return failed_last(err, path, "cannot read its attributes");
  if ((info.dwFileAttributes & FILE_ATTRIBUTE_SPARSE_FILE) == 0) return true;
  FILE_SET_SPARSE_BUFFER dense{};
  dense.SetSparse = FALSE;
  DWORD got = 0;
  if (DeviceIoControl(f, FSCTL_SET_SPARSE, &dense, sizeof dense, nullptr, 0, &got, nullptr) != 0)
    return true;
  char words[300];
  system_words(GetLastError(), words, sizeof words);
  return file_failed(err, FileError::Corrupt,
                     "%s: the file is sparse (a sparse copy) and cannot be made a normal one now: "
                     "%s",
                     path, words);
}

// Reads and checks the header of the locked file `f` into `h` (zeroed past
// the checksummed part).
bool read_header(const FileRequest &req, HANDLE f, FileHeader *h, FileError *err) {
  LARGE_INTEGER size;
  if (GetFileSizeEx(f, &size) == 0) return failed_last(err, req.path, "cannot read its size");
  std::memset(static_cast<void *>(h), 0, sizeof *h);
  DWORD got = 0;
  if (uint64_t(size.QuadPart) < kHeaderFixed) {
    OVERLAPPED o = at_offset(0);
    if (size.QuadPart >= 8 && ReadFile(f, h->magic, 8, &got, &o) != 0 && got == 8 &&
        std::memcmp(h->magic, FileHeader::kMagic, 8) == 0)
      return file_failed(err, FileError::Corrupt,
                         "%s: the file is %lld bytes, shorter than a registry header", req.path,
                         (long long)size.QuadPart);
    return file_failed(err, FileError::Version,
                       "%s: not a lazybreaker registry file (%lld bytes, no header)", req.path,
                       (long long)size.QuadPart);
  }
  OVERLAPPED o = at_offset(0);
  if (ReadFile(f, h, DWORD(kHeaderFixed), &got, &o) == 0 || got != kHeaderFixed)
    return failed_last(err, req.path, "cannot read the header");
  return check_header(req, *h, size_t(size.QuadPart), err) && check_allocated(f, req.path, err);
}

// Maps the whole file `f` (`bytes`, its size) read-write into `*base`.
bool map_whole(HANDLE f, size_t bytes, void **base, const char *path, FileError *err) {
  HANDLE section = CreateFileMappingW(f, nullptr, PAGE_READWRITE, DWORD(uint64_t(bytes) >> 32),
                                      DWORD(bytes), nullptr);
  if (section == nullptr) return failed_last(err, path, "cannot map it");
  *base = MapViewOfFile(section, FILE_MAP_READ | FILE_MAP_WRITE, 0, 0, bytes);
  const DWORD e = GetLastError();
  CloseHandle(section);  // the view keeps the section
  return *base != nullptr || failed_code(err, e, path, "cannot map it");
}

// The file at the path, created (or, unless exclusive, found) for a create
// or found for an open, in `*f`; `*created` says which.
bool create_or_open(const FileRequest &req, const wchar_t *wide, HANDLE *f, bool *created,
                    FileError *err) {
  *created = false;
  if (req.create) {
    if (create_file(req, wide, f, err)) {
      *created = true;
      return true;
    }
    if (err->kind != FileError::Exists || req.exclusive) return false;
  }
  return open_existing(req, wide, f, err) && check_kind(req, wide, *f, err) &&
         (!req.create || trusted_for_create(req, *f, err));
}

}  // namespace

bool open_file(const FileRequest &req, MappedFile *out, FileError *err) {
  wchar_t wide[kPathUnits];
  if (!widen(req.path, wide))
    return file_failed(err, FileError::Io, "%s: the path is not UTF-8, or too long", req.path);
  HANDLE f = INVALID_HANDLE_VALUE;
  bool created = false;
  if (!create_or_open(req, wide, &f, &created, err)) {
    if (f != INVALID_HANDLE_VALUE) CloseHandle(f);
    return false;
  }
  // Held while the file is checked and brought forward: another process
  // opening it then waits (kLockWaitNs at most).
  if (!lock_file(f, req.path, err)) {
    CloseHandle(f);
    return false;
  }
  auto give_up = [&](bool result) {
    // Unlocked first: a closed handle's locks go only when the system
    // gets to them.
    unlock_file(f);
    CloseHandle(f);
    return result;
  };
  FileHeader h;
  void *base = nullptr;
  if (!read_header(req, f, &h, err) || !map_whole(f, size_t(h.file_bytes), &base, req.path, err))
    return give_up(false);
  MappedFile file{int(HandleToLong(f)), base, size_t(h.file_bytes)};
  uint8_t boot[16];
  platform::boot_id(boot);
  if (!created && std::memcmp(boot, file.header()->boot_id, 16) != 0)
    carry_over_boot(file, FileLayout::of(h.slots, req.arena_bytes(h.capacity, h.slots)), boot);
  unlock_file(f);
  *out = std::move(file);
  return true;
}

void close_file(MappedFile &f) {
  if (f.base != nullptr) UnmapViewOfFile(f.base);
  if (f.fd >= 0) CloseHandle(LongToHandle(f.fd));
  f.fd = -1;
  f.base = nullptr;
  f.bytes = 0;
}

}  // namespace lazybreaker::registry
