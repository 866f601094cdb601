using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Threading;
using Xunit;

namespace LazyBreaker.Tests;

/// <summary>
/// <see cref="Registry.Dispose"/> at a random moment 0-400 µs after 8 new
/// threads start calling its 16 breakers: every call in flight returns as it
/// would have before the close or throws <see cref="ObjectDisposedException"/>,
/// every call begun after Dispose returned throws it, and the test host
/// survives, for private and shared registries (a file made anew each round,
/// in /dev/shm and in /tmp) and every trip policy.
/// tests/capi/test_close_race.cpp through the binding.
/// </summary>
/// <remarks>
/// <para>The threads are new each round, so that some take their counter
/// stripe (their first call, FastPath's thread cells) while the close runs:
/// on a library that closes a shared registry without waiting for stripes
/// being taken (before 139fdff) the host dies of an
/// AccessViolationException (SIGSEGV in FastPath.Count). So they wait at a
/// gate that the main thread opens just before its random wait:
/// Thread.Start returns only once the thread runs, and without the gate
/// each would make its first call before the next one started, all of them
/// long before the close. Once through it they never yield or sleep: the
/// race is inside calls, and a thread the scheduler preempts there is what
/// it needs.</para>
/// <para>The breakers come from GetOrCreate, which Dispose leaves to the
/// library's close (created ones it destroys first, one by one, and their
/// wrappers then refuse calls without making them). LB_CLOSE_RACE_ROUNDS
/// sets the rounds per policy and registry kind (20).</para>
/// </remarks>
public sealed class CloseRaceTests
{
    private const int Threads = 8, Breakers = 16, DefaultRounds = 20;
    // Calls each thread must make after the close, and how long the round
    // waits for them (a thread the scheduler has not run yet gets its turn).
    private const int CallsAfter = 4;
    private static readonly TimeSpan GiveUp = TimeSpan.FromSeconds(10), JoinDeadline = TimeSpan.FromSeconds(60);
    private static readonly TripPolicy[] Policies = { TripPolicy.Consecutive, TripPolicy.CountWindow, TripPolicy.TimeWindow };

    [Fact]
    public void Disposing_a_private_registry_at_any_moment_under_calls_from_new_threads_crashes_nothing()
    {
        foreach (TripPolicy policy in Policies) Race(policy, dir: null);
    }

    [Fact]
    public void Disposing_a_shared_registry_in_dev_shm_at_any_moment_under_calls_from_new_threads_crashes_nothing()
    {
        foreach (TripPolicy policy in Policies) Race(policy, "/dev/shm");
    }

    [Fact]
    public void Disposing_a_shared_registry_in_tmp_at_any_moment_under_calls_from_new_threads_crashes_nothing()
    {
        foreach (TripPolicy policy in Policies) Race(policy, "/tmp");
    }

    private static int Rounds() =>
        int.TryParse(Environment.GetEnvironmentVariable("LB_CLOSE_RACE_ROUNDS"), out int n) && n > 0 ? n : DefaultRounds;

    private static void SpinFor(TimeSpan span)
    {
        long until = Stopwatch.GetTimestamp() + (long)(span.TotalSeconds * Stopwatch.Frequency);
        while (Stopwatch.GetTimestamp() < until)
        {
        }
    }

    /// <summary>What a round's threads share.</summary>
    private sealed class Round
    {
        internal readonly CircuitBreaker[] Breakers;
        internal readonly ManualResetEventSlim Gate = new();
        internal bool Closing, Closed, Stop; // Closing: just before Dispose; Closed: once it returned
        internal readonly ConcurrentQueue<string> Wrong = new();

        internal Round(CircuitBreaker[] breakers) => Breakers = breakers;

        internal void Note(string what)
        {
            if (Wrong.Count < 10) Wrong.Enqueue(what);
        }
    }

    /// <summary>One thread's calls and what they gave.</summary>
    private sealed class Worker
    {
        private readonly Round _round;
        private readonly Random _random;
        internal readonly Thread Thread;
        internal long CallsAfter; // begun once Dispose had returned; read by the main thread meanwhile
        internal int Bad; // a result no call may give
        internal int AfterBad; // a call begun after the close that did not throw ObjectDisposedException

        internal Worker(Round round, int seed, string name)
        {
            _round = round;
            _random = new Random(seed);
            Thread = new Thread(Run) { IsBackground = true, Name = name };
        }

        private void Run()
        {
            _round.Gate.Wait();
            var held = new Stack<(CircuitBreaker Breaker, Permit Permit)>(); // admitted, not yet reported
            CircuitBreaker[] breakers = _round.Breakers;
            for (long n = 0; !Volatile.Read(ref _round.Stop); n++)
            {
                // Read before the call: a call that starts once Closed is
                // seen began after Dispose returned.
                bool after = Volatile.Read(ref _round.Closed);
                uint r = (uint)_random.Next();
                CircuitBreaker b = breakers[(r >> 16) % Breakers];
                string what;
                try
                {
                    if (n % 64 == 63)
                    {
                        what = "Statistics";
                        _ = b.Statistics;
                    }
                    else
                    {
                        switch (r % 5)
                        {
                            case 0:
                            case 1:
                                what = "TryAcquire";
                                if (b.TryAcquire(out Permit p)) held.Push((b, p));
                                break;
                            case 2:
                            case 3:
                                if (held.Count == 0)
                                {
                                    what = "State";
                                    _ = b.State;
                                    break;
                                }
                                (b, Permit admitted) = held.Pop();
                                if ((r >> 8) % 3 == 0)
                                {
                                    what = "Failure";
                                    admitted.Failure();
                                }
                                else
                                {
                                    what = "Success";
                                    admitted.Success();
                                }
                                break;
                            default:
                                what = "TryAcquire and Ignore";
                                if (b.TryAcquire(out Permit q)) q.Ignore();
                                break;
                        }
                    }
                    if (after)
                    {
                        AfterBad++;
                        _round.Note($"{b.Name}: a {what} begun after Dispose returned did not throw");
                    }
                }
                catch (ObjectDisposedException e)
                {
                    if (!Volatile.Read(ref _round.Closing))
                    {
                        // It returned before the close began: the close is not why.
                        Bad++;
                        _round.Note($"{b.Name}: disposed before the registry's Dispose began: {e.Message}");
                    }
                }
                catch (Exception e)
                {
                    Bad++;
                    _round.Note($"{b.Name}: a call threw {e}");
                }
                if (after) Volatile.Write(ref CallsAfter, CallsAfter + 1);
            }
        }
    }

    /// <param name="dir">Where a shared registry's file goes (null: a private registry).</param>
    private static void Race(TripPolicy policy, string? dir)
    {
        string? path = dir is null ? null : Path.Combine(dir, $"lb-close-race-csharp-{Environment.ProcessId}-{policy}.lbr");
        string kind = dir is null ? "private" : $"shared in {dir}";
        CircuitBreakerOptions options = CloseUnderCallsTests.Options(policy);
        var random = new Random((int)policy * 7919 + (dir?.Length ?? 0));
        int rounds = Rounds();
        try
        {
            for (int n = 0; n < rounds; n++)
            {
                string where = $"{policy}, {kind}, round {n}";
                if (path is not null) File.Delete(path);
                var registry = Registry.Open(new RegistryOptions
                {
                    Capacity = n % 2 == 0 ? 64 : 1024,
                    Path = path,
                    Create = path is not null,
                });
                var breakers = new CircuitBreaker[Breakers];
                for (int i = 0; i < Breakers; i++) breakers[i] = registry.GetOrCreate($"b{n}.{i}", options);
                var round = new Round(breakers);
                var workers = new Worker[Threads];
                for (int t = 0; t < Threads; t++)
                {
                    workers[t] = new Worker(round, random.Next(), $"close-race-{n}-{t}");
                    workers[t].Thread.Start();
                }
                // The close comes soon after the gate opens, at a moment that
                // moves from round to round: some threads have made many
                // calls, some none yet.
                round.Gate.Set();
                SpinFor(TimeSpan.FromMicroseconds(random.Next(400)));
                Volatile.Write(ref round.Closing, true);
                registry.Dispose();
                Volatile.Write(ref round.Closed, true);
                SpinFor(TimeSpan.FromMicroseconds(300));
                long giveUp = Stopwatch.GetTimestamp() + (long)(GiveUp.TotalSeconds * Stopwatch.Frequency);
                foreach (Worker w in workers)
                {
                    while (Volatile.Read(ref w.CallsAfter) < CallsAfter && Stopwatch.GetTimestamp() < giveUp) Thread.Yield();
                }
                Volatile.Write(ref round.Stop, true);
                foreach (Worker w in workers) Assert.True(w.Thread.Join(JoinDeadline), $"{where}: {w.Thread.Name} did not stop");
                round.Gate.Dispose();
                foreach (Worker w in workers)
                {
                    string of = $"{where}, {w.Thread.Name}: ";
                    Assert.True(w.CallsAfter >= CallsAfter, $"{of}{w.CallsAfter} calls after the close");
                    Assert.True(w.Bad == 0, $"{of}{w.Bad} wrong results: {string.Join("; ", round.Wrong)}");
                    Assert.True(w.AfterBad == 0, $"{of}{w.AfterBad} calls after Dispose returned: {string.Join("; ", round.Wrong)}");
                }
            }
        }
        finally
        {
            if (path is not null) File.Delete(path);
        }
    }
}
