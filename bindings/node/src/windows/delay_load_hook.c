// The addon imports Node-API from "node.exe" (the import library made from
// node-api-headers' def/node_api.def), delay-loaded: the first napi_* call
// asks this hook for that module, and it answers with the process's own
// executable, which is what exports Node-API whatever its file name (a
// renamed node.exe, an application embedding Node). node-gyp links the same
// hook into every addon it builds.
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <delayimp.h>

static FARPROC WINAPI lb_node_host_module(unsigned event, PDelayLoadInfo info) {
  if (event == dliNotePreLoadLibrary && _stricmp(info->szDll, "node.exe") == 0) {
    // The helper takes the module handle back as a FARPROC; through an
    // integer, since ISO C has no cast from an object pointer to a function
    // pointer.
    return (FARPROC)(INT_PTR)GetModuleHandleW(NULL);
  }
  return NULL;
}

PfnDliHook __pfnDliNotifyHook2 = lb_node_host_module;
