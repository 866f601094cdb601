// Compiled by check.sh under tsc --strict: the declarations describe the
// calls docs/node.md shows; the lines marked @ts-expect-error must fail.
import lazybreaker, { CircuitBreaker, CircuitOpenError, Registry, Permit, Watcher, type Transition } from 'lazybreaker';

async function main(): Promise<void> {
  const registry: Registry = Registry.manualClock({ capacity: 8 });
  const breaker = new CircuitBreaker(async (id: number) => `user ${id}`, { registry, resetTimeout: 30000, timeout: 500 });
  const name: string = await breaker.fire(1);
  // @ts-expect-error fire takes the action's arguments
  await breaker.fire('one');
  breaker.on('open', (t: Transition) => console.log(t.reason, t.atNs + 1n));
  breaker.on('success', (result: string) => console.log(result));
  try {
    await breaker.fire(2);
  } catch (e) {
    if (e instanceof CircuitOpenError) console.log(e.retryAfter.toFixed(0), e.code);
  }
  const permit: Permit | null = registry.getOrCreate('db', { failureThreshold: 3 }).tryAcquire();
  permit?.success();
  const controller = new AbortController();
  const n: number = await breaker.execute(async ({ signal }) => (signal?.aborted ? 0 : 1), controller.signal);
  registry.advance(10n);
  registry.advance(1.5);
  // @ts-expect-error resetTimeout is a duration
  new CircuitBreaker(null, { resetTimeout: '30s' });
  // @ts-expect-error no such policy
  new CircuitBreaker(null, { policy: 'sliding' });
  const shared = Registry.open({ path: '/tmp/x.lbr', create: true, anyOwner: false });
  const watcher: Watcher = shared.watch({ interval: 500 });
  breaker.on('close', (t: Transition) => console.log(t.reason === 'observed', watcher.interval, watcher.stopped));
  watcher.stop();
  // @ts-expect-error interval is a number of milliseconds
  shared.watch({ interval: '1s' });
  shared.close();
  console.log(name, n, breaker.stats().stateNs, Registry.default.metrics().length, lazybreaker.version);
}
void main;
