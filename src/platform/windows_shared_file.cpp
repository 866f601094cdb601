// A shared registry file on Windows: not yet (issue 25). A Windows file
// needs a layout of its own (views at 64 KiB-aligned addresses and offsets,
// no view over a VirtualAlloc reservation), so every open is refused with
// FileError::Version (CB_EVERSION) and a message that says so; the private
// registry is unaffected.
#include "registry/shared_file.hpp"

namespace lazybreaker::registry {

bool open_file(const FileRequest &req, MappedFile *, FileError *err) {
  return file_failed(err, FileError::Version,
                     "%s: shared registry files are not supported on Windows yet (a Windows file "
                     "needs its own layout, with 64 KiB-aligned sections; docs/install.md); "
                     "open a private registry (no path) instead",
                     req.path);
}

// Nothing is ever mapped or opened here.
void close_file(MappedFile &f) {
  f.fd = -1;
  f.base = nullptr;
  f.bytes = 0;
}

}  // namespace lazybreaker::registry
