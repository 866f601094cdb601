using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.IO;
using System.Threading;
using Xunit;

namespace LazyBreaker.Tests;

/// <summary>
/// <see cref="Registry.Dispose"/> while 8 threads call its breakers
/// (TryAcquire, Success, Failure, State, Statistics): the CLR survives; a
/// call in flight when the close begins returns as it would have before it
/// or throws <see cref="ObjectDisposedException"/> (never before the close
/// began); every call begun after Dispose returned throws it. The race of
/// tests/capi/test_close_race.cpp: 100 rounds for each registry kind
/// (private, a shared file), each over breakers of all three trip policies,
/// created (Dispose destroys them) and from GetOrCreate (it lets go of them).
/// On a library whose close unmaps under its calls the test host dies of
/// SIGSEGV instead.
/// </summary>
public sealed class CloseUnderCallsTests : IDisposable
{
    private const int Threads = 8, Rounds = 100, After = 10;
    private static readonly TripPolicy[] Policies = { TripPolicy.Consecutive, TripPolicy.CountWindow, TripPolicy.TimeWindow };
    // Bounds a round that stops making progress (a hang would be a bug too).
    private static readonly TimeSpan Deadline = TimeSpan.FromSeconds(60);

    private readonly string _dir = Directory.CreateTempSubdirectory("lazybreaker-close-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [Fact]
    public void Disposing_a_private_registry_under_calls_on_breakers_of_every_policy_crashes_nothing() => Race(path: null);

    [Fact]
    public void Disposing_a_shared_registry_under_calls_on_breakers_of_every_policy_crashes_nothing() =>
        Race(Path.Combine(_dir, "close-race.lbr"));

    // Trips after a few failures, and OPEN lasts 1 µs: every state comes up
    // under the calls. Only the options the policy reads (the others are
    // refused). CloseRaceTests' too.
    internal static CircuitBreakerOptions Options(TripPolicy policy) => new()
    {
        Policy = policy,
        FailureThreshold = policy == TripPolicy.Consecutive ? 3 : null,
        WindowSize = policy == TripPolicy.CountWindow ? 16 : null,
        MinimumThroughput = policy == TripPolicy.Consecutive ? null : 4,
        SamplingDuration = policy == TripPolicy.TimeWindow ? TimeSpan.FromSeconds(1) : null,
        SamplingBuckets = policy == TripPolicy.TimeWindow ? 8 : null,
        SlowCallDuration = policy == TripPolicy.TimeWindow ? TimeSpan.FromSeconds(1) : null,
        BreakDuration = TimeSpan.FromTicks(10),
    };

    /// <summary>What a round's threads share.</summary>
    private sealed class Round
    {
        internal readonly CircuitBreaker[] Breakers;
        internal readonly long Before;
        internal bool Closing, Closed, Stop; // Closing: just before Dispose; Closed: once it returned
        internal readonly CountdownEvent CalledBefore = new(Threads), CalledAfter = new(Threads);
        internal readonly ConcurrentQueue<string> Wrong = new();

        internal Round(CircuitBreaker[] breakers, long before)
        {
            Breakers = breakers;
            Before = before;
        }

        internal void Note(string what)
        {
            if (Wrong.Count < 10) Wrong.Enqueue(what);
        }

        /// <summary>One thread's calls: until it has made its calls after the close, or <see cref="Stop"/>.</summary>
        internal void Call(uint seed)
        {
            var held = new Stack<Permit>(); // admitted, not yet reported
            // Breakers found closed while the close runs: skipped until it
            // has returned, so that the thread keeps calling into the
            // library (Dispose destroys the created breakers first, and an
            // exception costs far more than a call).
            var gone = new bool[Breakers.Length];
            long calls = 0, after = 0;
            while (!Volatile.Read(ref Stop))
            {
                // Read before the call: a call begun once Closed is seen began
                // after Dispose returned.
                bool afterClose = Volatile.Read(ref Closed);
                seed = seed * 1103515245u + 12345u;
                int i = (int)((seed >> 8) % (uint)Breakers.Length);
                for (int k = 0; !afterClose && gone[i] && k < Breakers.Length; k++) i = (i + 1) % Breakers.Length;
                CircuitBreaker b = Breakers[i];
                string what;
                try
                {
                    switch ((seed >> 16) % 5)
                    {
                        case 0:
                        case 1:
                            what = "TryAcquire";
                            if (b.TryAcquire(out Permit p)) held.Push(p);
                            break;
                        case 2:
                        case 3:
                            if (held.Count == 0)
                            {
                                what = "State";
                                _ = b.State;
                            }
                            else if ((seed >> 24) % 3 == 0)
                            {
                                what = "Failure";
                                held.Pop().Failure();
                            }
                            else
                            {
                                what = "Success";
                                held.Pop().Success();
                            }
                            break;
                        default:
                            what = "Statistics";
                            _ = b.Statistics;
                            break;
                    }
                    if (afterClose) Note($"{b.Name}: a {what} begun after Dispose returned");
                }
                catch (ObjectDisposedException e)
                {
                    // It returned before the close began: the close is not why.
                    if (!Volatile.Read(ref Closing)) Note($"{b.Name}: disposed before the registry's Dispose began: {e}");
                    gone[i] = true;
                }
                catch (Exception e)
                {
                    Note($"{b.Name}: a call threw {e}");
                }
                if (++calls == Before) CalledBefore.Signal();
                if (afterClose && ++after == After)
                {
                    CalledAfter.Signal();
                    break; // each further call would only throw again
                }
                // 8 threads on fewer cores: each gets its turn every
                // thousand calls or so rather than a time slice apart, and
                // between turns it is mostly inside a call, where the
                // scheduler preempts it (yielding often makes every switch
                // fall between calls: the race hides).
                if (calls % 1024 == 0) Thread.Yield();
            }
            try
            {
                foreach (Permit p in held) p.Dispose();
            }
            catch (Exception e)
            {
                Note($"a permit's Dispose threw {e}");
            }
        }
    }

    /// <summary>
    /// The 8 threads, kept across rounds (starting 8 threads a round costs
    /// more than the round on a loaded machine).
    /// </summary>
    private sealed class Callers : IDisposable
    {
        private readonly Barrier _barrier = new(Threads + 1);
        private readonly Thread[] _threads = new Thread[Threads];
        private Round? _round;
        private int _number;

        internal Callers()
        {
            for (int t = 0; t < Threads; t++)
            {
                int index = t;
                _threads[t] = new Thread(() => Loop(index)) { IsBackground = true, Name = $"close-race-{t}" };
                _threads[t].Start();
            }
        }

        private void Loop(int index)
        {
            while (true)
            {
                _barrier.SignalAndWait();
                Round? round = Volatile.Read(ref _round);
                if (round is null) return;
                round.Call((uint)(Volatile.Read(ref _number) * Threads + index + 1));
                _barrier.SignalAndWait();
            }
        }

        internal void Start(Round round, int number)
        {
            Volatile.Write(ref _number, number);
            Volatile.Write(ref _round, round);
            Assert.True(_barrier.SignalAndWait(Deadline), "the callers did not start");
        }

        internal void Finish(Round round)
        {
            Volatile.Write(ref round.Stop, true);
            Assert.True(_barrier.SignalAndWait(Deadline), "the callers did not stop");
        }

        public void Dispose()
        {
            Volatile.Write(ref _round, null);
            _barrier.SignalAndWait(Deadline);
            foreach (Thread t in _threads) t.Join(Deadline);
            _barrier.Dispose();
        }
    }

    private static void Race(string? path)
    {
        var options = Array.ConvertAll(Policies, Options);
        using var callers = new Callers();
        for (int n = 0; n < Rounds; n++)
        {
            if (path is not null) File.Delete(path); // a fresh file: each round's names would fill it
            var registry = Registry.Open(new RegistryOptions { Capacity = 64, Path = path, Create = path is not null });
            var breakers = new CircuitBreaker[2 * Policies.Length];
            for (int i = 0; i < Policies.Length; i++)
            {
                string name = $"b{n}.{Policies[i]}";
                breakers[2 * i] = registry.Create(name + ".created", options[i]);
                breakers[2 * i + 1] = registry.GetOrCreate(name + ".shared", options[i]);
            }
            var round = new Round(breakers, (1 + n % 7) * 10);
            callers.Start(round, n);
            try
            {
                // Disposed while every thread is calling, at a point that
                // moves from round to round.
                Assert.True(round.CalledBefore.Wait(Deadline), "a thread made no calls before the close");
                Volatile.Write(ref round.Closing, true);
                registry.Dispose();
                Volatile.Write(ref round.Closed, true);
                Assert.True(round.CalledAfter.Wait(Deadline), "a thread made no calls after the close");
            }
            finally
            {
                callers.Finish(round);
            }
            Assert.True(round.Wrong.IsEmpty, $"round {n}: {string.Join("; ", round.Wrong)}");
            Assert.Throws<ObjectDisposedException>(() => registry.Create("late", options[0]));
            foreach (CircuitBreaker b in breakers)
            {
                Assert.Throws<ObjectDisposedException>(() => b.TryAcquire(out _));
                Assert.Throws<ObjectDisposedException>(() => b.Statistics);
                b.Dispose(); // quiet on a breaker of a closed registry
            }
        }
    }
}
