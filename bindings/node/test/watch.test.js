'use strict';
// The opt-in watcher: registry.watch() reports, as transitions with reason
// 'observed', the states another process changed in a shared registry
// file; this process's own transitions stay the synchronous events they
// are, never emitted twice. Two registries opened on one file stand for two
// processes (each has its own event queue), the file's manual clock for
// time, and node:test's mock timers for the watcher's one interval.
const test = require('node:test');
const assert = require('node:assert');
const diagnostics = require('node:diagnostics_channel');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { Registry } = require('..');
const native = require('../lib/native');
const { kHandle } = require('../lib/internal');

const TRANSITIONS = ['open', 'halfOpen', 'close', 'forcedOpen', 'disabled'];
const OPTIONS = { failureThreshold: 1, resetTimeout: 1000 };

// Two processes' views of one registry file with a manual clock.
function sharedFile(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lazybreaker-watch-'));
  const file = path.join(dir, 'breakers.lbr');
  const here = Registry.open({ path: file, create: true, manualClock: true });
  const there = Registry.open({ path: file, manualClock: true });
  t.after(() => {
    here.close();
    there.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { here, there };
}

function record(breaker) {
  const seen = [];
  for (const event of TRANSITIONS) breaker.on(event, (t) => seen.push({ event, ...t }));
  return seen;
}

test('another process\'s transitions are observed, one look per interval', (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const { here, there } = sharedFile(t);
  const mine = here.getOrCreate('upstream', OPTIONS);
  const theirs = there.getOrCreate('upstream', OPTIONS);
  const seen = record(mine);
  here.watch({ interval: 100 });

  there.advance(5);
  theirs.tryAcquire().failure();
  assert.deepStrictEqual(seen, [], 'no event before the watcher looks');
  t.mock.timers.tick(99);
  assert.deepStrictEqual(seen, []);
  t.mock.timers.tick(1);
  assert.deepStrictEqual(seen, [
    { event: 'open', name: 'upstream', from: 'closed', to: 'open', reason: 'observed', atNs: 5000000n }]);

  there.advance(1000);
  const probe = theirs.tryAcquire();
  t.mock.timers.tick(100);
  probe.success();
  t.mock.timers.tick(100);
  t.mock.timers.tick(100);
  assert.deepStrictEqual(seen.slice(1).map(({ event, from, to, reason }) => [event, from, to, reason]), [
    ['halfOpen', 'open', 'half_open', 'observed'],
    ['close', 'half_open', 'closed', 'observed'],
  ]);
});

test('a look sees the latest state only: from is what this process last saw', (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const { here, there } = sharedFile(t);
  const mine = here.getOrCreate('upstream', OPTIONS);
  const theirs = there.getOrCreate('upstream', OPTIONS);
  const seen = record(mine);
  here.watch({ interval: 100 });
  theirs.forceOpen();
  theirs.disable();
  t.mock.timers.tick(100);
  assert.deepStrictEqual(seen.map(({ event, from, to }) => [event, from, to]), [['disabled', 'closed', 'disabled']]);
});

test('this process\'s own transitions are emitted once, synchronously, not again by the watcher', (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const { here } = sharedFile(t);
  const mine = here.getOrCreate('upstream', OPTIONS);
  const seen = record(mine);
  here.watch({ interval: 100 });
  mine.tryAcquire().failure();
  assert.deepStrictEqual(seen.map(({ event, reason }) => [event, reason]), [['open', 'consecutive_failures']]);
  t.mock.timers.tick(500);
  here.advance(1000);
  mine.tryAcquire().success();
  t.mock.timers.tick(500);
  assert.deepStrictEqual(seen.map(({ event, reason }) => [event, reason]),
    [['open', 'consecutive_failures'], ['halfOpen', 'open_elapsed'], ['close', 'probes_succeeded']]);
});

test('observed transitions are published on lazybreaker:transition', (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const { here, there } = sharedFile(t);
  here.getOrCreate('published', OPTIONS);
  const published = [];
  const listener = (transition) => published.push(transition);
  diagnostics.subscribe('lazybreaker:transition', listener);
  t.after(() => diagnostics.unsubscribe('lazybreaker:transition', listener));
  here.watch({ interval: 100 });
  there.getOrCreate('published', OPTIONS).trip(50);
  assert.deepStrictEqual(published.map(({ reason }) => reason), ['tripped'], 'the other registry\'s own event');
  t.mock.timers.tick(100);
  assert.deepStrictEqual(published.slice(1).map(({ name, from, to, reason }) => [name, from, to, reason]),
    [['published', 'closed', 'open', 'observed']]);
});

test('a breaker taken while watched is looked at from its state then', (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const { here, there } = sharedFile(t);
  const theirs = there.getOrCreate('late', OPTIONS);
  here.watch({ interval: 100 });
  theirs.forceOpen();
  const mine = here.getOrCreate('late', OPTIONS);
  const seen = record(mine);
  t.mock.timers.tick(100);
  assert.deepStrictEqual(seen, [], 'forced open already when this process took it');
  theirs.reset();
  t.mock.timers.tick(100);
  assert.deepStrictEqual(seen.map(({ from, to }) => [from, to]), [['forced_open', 'closed']]);
});

test('a breaker destroyed elsewhere is skipped, not thrown about in the timer', (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const { here, there } = sharedFile(t);
  const gone = here.getOrCreate('gone', OPTIONS);
  const kept = here.getOrCreate('kept', OPTIONS);
  const seen = record(kept);
  here.watch({ interval: 100 });
  native.destroy(there.getOrCreate('gone', OPTIONS)[kHandle]);
  assert.throws(() => gone.state, { code: 'CB_EHANDLE' });
  there.getOrCreate('kept', OPTIONS).trip(10);
  t.mock.timers.tick(100);
  assert.deepStrictEqual(seen.map(({ to }) => to), ['open']);
});

test('stop() ends the looks; watch() again is the same watcher, from the states as they are', (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const { here, there } = sharedFile(t);
  const mine = here.getOrCreate('upstream', OPTIONS);
  const theirs = there.getOrCreate('upstream', OPTIONS);
  const seen = record(mine);
  const watcher = here.watch({ interval: 100 });
  assert.strictEqual(watcher.interval, 100);
  assert.strictEqual(watcher.stopped, false);
  watcher.stop();
  assert.strictEqual(watcher.stopped, true);
  theirs.forceOpen();
  t.mock.timers.tick(1000);
  assert.deepStrictEqual(seen, []);

  assert.strictEqual(here.watch({ interval: 50 }), watcher);
  assert.strictEqual(watcher.interval, 50);
  t.mock.timers.tick(50);
  assert.deepStrictEqual(seen, [], 'what changed while stopped is the state it starts from');
  theirs.reset();
  t.mock.timers.tick(50);
  assert.deepStrictEqual(seen.map(({ to }) => to), ['closed']);
});

test('close() stops the watcher', (t) => {
  const registry = Registry.manualClock();
  const watcher = registry.watch();
  assert.strictEqual(watcher.interval, 1000);
  registry.close();
  assert.strictEqual(watcher.stopped, true);
  assert.throws(() => registry.watch(), { code: 'ERR_LAZYBREAKER_CLOSED' });
});

test('a bad interval is refused by name and changes nothing', () => {
  const registry = Registry.manualClock();
  const watcher = registry.watch({ interval: 200 });
  for (const [options, error] of [
    [{ interval: 0 },
      /RangeError: lazybreaker: interval must be a whole number of milliseconds from 1 to 2147483647, got 0/],
    [{ interval: 1.5 }, /RangeError: .*interval.*got 1\.5/],
    [{ interval: 2 ** 31 }, /RangeError: .*interval.*got 2147483648/],
    [{ interval: '100' }, /TypeError: lazybreaker: interval must be a number of milliseconds, got "100"/],
    [{ interval: 100n }, /TypeError: .*interval.*got 100n/],
    [{ intervall: 100 }, /TypeError: lazybreaker: unknown watch option intervall/],
    [null, /TypeError: lazybreaker: watch options must be an object, got null/],
  ]) {
    assert.throws(() => registry.watch(options), (e) => error.test(`${e.name}: ${e.message}`));
    assert.strictEqual(watcher.interval, 200);
    assert.strictEqual(watcher.stopped, false);
  }
  registry.close();
});

test('a watched process exits by itself: the timer is unref\'d', () => {
  const script = 'const { Registry } = require(".");' +
    'Registry.default.watch({ interval: 10 }); Registry.default.getOrCreate("watched-exit");' +
    'Registry.open().watch({ interval: 1 }); console.log("watching");';
  const run = spawnSync(process.execPath, ['-e', script], { cwd: path.join(__dirname, '..'), env: process.env,
    encoding: 'utf8', timeout: 60000 });
  assert.strictEqual(run.error, undefined, 'it did not exit within 60 s');
  assert.strictEqual(run.status, 0, run.stderr);
  assert.strictEqual(run.stdout, 'watching\n');
});
