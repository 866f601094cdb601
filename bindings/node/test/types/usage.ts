// Compiled by check.sh under tsc --strict: the declarations describe the
// calls docs/node.md shows; the lines marked @ts-expect-error must fail.
import lazybreaker, {
  CircuitBreaker, CircuitOpenError, Registry, Permit, Watcher, type Transition,
  httpBreakerName, shed, fastifyShed, wrapFetch, interceptor, type Dispatch,
} from 'lazybreaker';
import * as http from 'node:http';

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
  const upstream: string = httpBreakerName(new URL('https://example.com/'));
  const middleware = shed({ breaker: 'checkout', registry, settings: { failureThreshold: 5 } });
  http.createServer((req, res) => middleware(req, res, () => res.end('ok')));
  shed({ breaker });
  // @ts-expect-error the breaker is a CircuitBreaker or a name
  shed({ breaker: 1 });
  await fastifyShed({ addHook: () => undefined }, { breaker: 'checkout' });
  const named = (url: URL): string => `api/${url.host}`;
  const guarded: typeof fetch = wrapFetch(fetch, { registry, name: named, settings: { resetTimeout: 5000 } });
  const response: Response = await wrapFetch()(`http://127.0.0.1:9/`);
  const dispatch: Dispatch = interceptor({ registry })((opts, handler) => Boolean(opts && handler));
  console.log(upstream, guarded, response.status, dispatch, lazybreaker.wrapFetch === wrapFetch);
  console.log(name, n, breaker.stats().stateNs, Registry.default.metrics().length, lazybreaker.version);
}
void main;
