using System;
using System.IO;

namespace LazyBreaker;

/// <summary>How to open a registry; a property left <c>null</c> keeps the library's default.</summary>
/// <remarks>
/// With <see cref="Path"/> set the registry is a shared one: a file that
/// every process opening the same path maps, seeing the same breakers,
/// states and counters (docs/shared-registries.md). An existing file's
/// capacity and clock are the file's: leave <see cref="Capacity"/> unset to
/// accept it; options that disagree are refused.
/// </remarks>
public sealed class RegistryOptions
{
    /// <summary>The most breakers it may hold; library default 65,536.</summary>
    public int? Capacity { get; set; }

    /// <summary>The clock; default <see cref="RegistryClock.Monotonic"/>.</summary>
    public RegistryClock? Clock { get; set; }

    /// <summary>Events the queue holds before it drops the oldest; library default 1,024.</summary>
    public int? EventCapacity { get; set; }

    /// <summary>The shared registry file; <c>null</c> (the default) is a private registry in memory.</summary>
    public string? Path { get; set; }

    /// <summary>With <see cref="Path"/>: create the file if it is missing (CB_REGISTRY_CREATE); without it a missing file is a <see cref="FileNotFoundException"/>.</summary>
    public bool Create { get; set; }

    /// <summary>With <see cref="Create"/>: an <see cref="IOException"/> if the file exists (CB_REGISTRY_EXCLUSIVE).</summary>
    public bool Exclusive { get; set; }

    /// <summary>
    /// With <see cref="Create"/>: use an existing file whoever owns it and whoever may write it
    /// (CB_REGISTRY_ANY_OWNER). Without it, a create refuses with
    /// <see cref="UnauthorizedAccessException"/> a file that another user than this process's or
    /// root owns, or that others may write while <see cref="Mode"/> does not grant them that; a
    /// symlink at the path is refused either way (docs/shared-registries.md, "Permissions").
    /// </summary>
    public bool AnyOwner { get; set; }

    /// <summary>The permission bits of a file this open creates, before the umask; default <c>UserRead | UserWrite</c> (0600).</summary>
    public UnixFileMode? Mode { get; set; }
}
