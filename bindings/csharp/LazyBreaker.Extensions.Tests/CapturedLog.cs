using System;
using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;

namespace LazyBreaker.Extensions.Tests;

/// <summary>A logger provider that keeps every entry, to read what was logged.</summary>
internal sealed class CapturedLog : ILoggerProvider, ILogger
{
    public ConcurrentQueue<(LogLevel Level, EventId Id, string Message)> Entries { get; } = new();

    public ILogger CreateLogger(string categoryName) => this;

    public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;

    public bool IsEnabled(LogLevel logLevel) => true;

    public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception,
                            Func<TState, Exception?, string> formatter) =>
        Entries.Enqueue((logLevel, eventId, formatter(state, exception)));

    public void Dispose() { }
}
