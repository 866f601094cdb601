namespace LazyBreaker.Native;

/// <summary>The C ABI's status codes, as SWIG compiled them from include/lazybreaker/lazybreaker.h.</summary>
internal static class Status
{
    internal const int Ok = LbNative.CB_OK;
    internal const int Rejected = LbNative.CB_REJECTED;
    internal const int EInval = LbNative.CB_EINVAL;
    internal const int EHandle = LbNative.CB_EHANDLE;
    internal const int ENoMem = LbNative.CB_ENOMEM;
    internal const int EExist = LbNative.CB_EEXIST;
    internal const int ENoEnt = LbNative.CB_ENOENT;
    internal const int EFull = LbNative.CB_EFULL;
    internal const int ECorrupt = LbNative.CB_ECORRUPT;
    internal const int EVersion = LbNative.CB_EVERSION;
    internal const int EIo = LbNative.CB_EIO;
    internal const int EPerm = LbNative.CB_EPERM;
    internal const int EState = LbNative.CB_ESTATE;
    internal const int EInternal = LbNative.CB_EINTERNAL;
    internal const int ERange = LbNative.CB_ERANGE;
    internal const int EBusy = LbNative.CB_EBUSY;
}
