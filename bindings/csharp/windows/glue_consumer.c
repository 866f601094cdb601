/* Loads lazybreaker_csharp.dll as .NET's P/Invoke would (LoadLibraryW by
 * name, the glue then finding lazybreaker.dll beside it) and calls through
 * it into the library. dotnet does not run under Wine here: this is what of
 * C# on Windows runs. */
#include <stdio.h>
#include <windows.h>

typedef int (*version_fn)(void);
typedef void *(*new_config_fn)(void);
typedef void (*delete_config_fn)(void *);

/* void (*)(void) is the type GCC lets any function pointer pass through
 * (-Wcast-function-type). */
typedef void (*any_fn)(void);
static any_fn resolve(HMODULE dll, const char *name) {
  FARPROC f = GetProcAddress(dll, name);
  if (!f) fprintf(stderr, "FAIL: %s not exported\n", name);
  return (any_fn)f;
}

int main(void) {
  HMODULE glue = LoadLibraryW(L"lazybreaker_csharp.dll");
  if (!glue) {
    fprintf(stderr, "FAIL: LoadLibraryW(lazybreaker_csharp.dll): error %lu\n", GetLastError());
    return 1;
  }
  HMODULE library = GetModuleHandleW(L"lazybreaker.dll");
  if (!library) {
    fprintf(stderr, "FAIL: lazybreaker.dll not loaded with the glue\n");
    return 1;
  }
  version_fn through_glue =
      (version_fn)resolve(glue, "CSharp_LazyBreakerfNative_cb_version_number___");
  version_fn direct = (version_fn)resolve(library, "cb_version_number");
  new_config_fn new_config =
      (new_config_fn)resolve(glue, "CSharp_LazyBreakerfNative_new_cb_config___");
  delete_config_fn delete_config =
      (delete_config_fn)resolve(glue, "CSharp_LazyBreakerfNative_delete_cb_config___");
  if (!through_glue || !direct || !new_config || !delete_config) return 1;
  if (through_glue() != direct() || direct() <= 0) {
    fprintf(stderr, "FAIL: version %d through the glue, %d from the library\n", through_glue(),
            direct());
    return 1;
  }
  void *config = new_config();
  if (!config) {
    fprintf(stderr, "FAIL: new_cb_config gave NULL\n");
    return 1;
  }
  delete_config(config);
  printf("lazybreaker_csharp.dll loaded; cb_version_number %d through it\n", through_glue());
  FreeLibrary(glue);
  return 0;
}
