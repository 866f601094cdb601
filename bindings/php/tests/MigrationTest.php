<?php
declare(strict_types=1);

use LazyBreaker\{CircuitOpenException, Config, Registry};
use PHPUnit\Framework\TestCase;

/**
 * Each row of docs/php.md's tables "For users of the database-table
 * breaker" and "For users of ganesha": the lazybreaker column does what the
 * row says. Test names start with the row's first words.
 */
final class MigrationTest extends TestCase
{
    private Registry $r;

    protected function setUp(): void
    {
        $this->r = Registry::manualClock();
    }

    // ---- the database table ---------------------------------------------------

    public function testTableARowPerCircuitNameUniqueIsGetOrCreate(): void
    {
        $a = $this->r->getOrCreate('payment-gateway/charge', new Config(failureThreshold: 3));
        $b = $this->r->getOrCreate('payment-gateway/charge', new Config(failureThreshold: 3));
        $a->tryAcquire()->failure();
        $this->assertSame(1, $b->stats()['consecutiveFailures'], 'one circuit per name');
        $this->assertCount(1, $this->r->breakers());
    }

    public function testTableFailureThresholdAndOpenUntilAreFailureThresholdAndTimeoutSeconds(): void
    {
        $b = $this->r->getOrCreate('t', new Config(failureThreshold: 3, timeoutSeconds: 10));
        foreach (range(1, 3) as $_) {
            $b->tryAcquire()->failure();
        }
        $this->assertSame('open', $b->state());
        $this->assertSame(10, $b->retryAfter(), 'open_until - now');
    }

    public function testTableSelectBeforeEachCallIsIsCallAllowed(): void
    {
        $b = $this->r->getOrCreate('t', new Config(failureThreshold: 1));
        $this->assertTrue($b->isCallAllowed());
        $b->tryAcquire()->failure();
        $this->assertFalse($b->isCallAllowed());
    }

    public function testTableOpenAndOpenUntilInTheFutureFailsFastWithCircuitOpenException(): void
    {
        $b = $this->r->getOrCreate('t', new Config(failureThreshold: 1, timeoutSeconds: 10));
        $b->tryAcquire()->failure();
        $this->expectException(CircuitOpenException::class);
        $b->call(fn () => 'never');
    }

    public function testTableHalfOpenAtIsTheFirstCallAfterTheTimeout(): void
    {
        $b = $this->r->getOrCreate('t', new Config(failureThreshold: 1, timeoutSeconds: 10));
        $b->tryAcquire()->failure();
        $this->r->advance(10);
        $probe = $b->tryAcquire();
        $this->assertNotNull($probe);
        $this->assertSame('half_open', $b->state());
        $this->assertNull($b->tryAcquire(), 'one probe, not one per worker');
        $probe->success();
        $this->assertSame('closed', $b->state());
    }

    public function testTableFailureCountPlusOneIsFailureAndResetToZeroIsSuccess(): void
    {
        $b = $this->r->getOrCreate('t', new Config(failureThreshold: 5));
        $b->tryAcquire()->failure();
        $b->tryAcquire()->failure();
        $this->assertSame(2, $b->stats()['consecutiveFailures'], 'failure_count');
        $b->tryAcquire()->success();
        $this->assertSame(0, $b->stats()['consecutiveFailures']);
    }

    public function testTableUpdateStateOpenByHandIsForceOpenOrTrip(): void
    {
        $b = $this->r->getOrCreate('t');
        $b->trip(60);
        $this->assertSame(60, $b->retryAfter());
        $b->forceOpen();
        $this->assertNull($b->retryAfter());
    }

    public function testTableUpdateStateClosedFailureCountZeroIsReset(): void
    {
        $b = $this->r->getOrCreate('t', new Config(failureThreshold: 1));
        $b->tryAcquire()->failure();
        $b->reset();
        $this->assertSame('closed', $b->state());
        $this->assertSame(0, $b->stats()['consecutiveFailures']);
    }

    public function testTableUpdatedAtIsStateNs(): void
    {
        $b = $this->r->getOrCreate('t', new Config(failureThreshold: 1));
        $b->tryAcquire()->failure();
        $this->r->advance(2);
        $this->assertSame(2000000000, $b->stats()['stateNs'], 'time since the last transition');
    }

    // ---- ganesha ---------------------------------------------------------------

    public function testGaneshaCountStrategyIsFailureThresholdAndTimeoutSeconds(): void
    {
        // Builder::withCountStrategy()->failureCountThreshold(3)->intervalToHalfOpen(5)
        $b = $this->r->getOrCreate('svc', new Config(failureThreshold: 3, timeoutSeconds: 5));
        $this->assertSame(\CB_POLICY_CONSECUTIVE, $b->fields()['policy']);
        $this->assertSame(5000000000, $b->fields()['open_duration_ns']);
    }

    public function testGaneshaRateStrategyIsATimeWindow(): void
    {
        // Builder::withRateStrategy()->failureRateThreshold(50)->intervalToHalfOpen(10)
        //   ->minimumRequests(10)->timeWindow(30)
        $b = $this->r->getOrCreate('svc', new Config(failureRateThreshold: 0.5, timeoutSeconds: 10, minimumCalls: 10, windowDurationSeconds: 30, policy: 'time_window'));
        $this->assertSame(\CB_POLICY_TIME_WINDOW, $b->fields()['policy']);
        foreach (range(1, 10) as $i) {
            $b->tryAcquire()->{$i % 2 ? 'failure' : 'success'}();
        }
        $this->assertSame('open', $b->state());
    }

    public function testGaneshaIsAvailableIsIsCallAllowed(): void
    {
        $b = $this->r->getOrCreate('svc', new Config(failureThreshold: 1));
        $this->assertTrue($b->isCallAllowed());
        $b->tryAcquire()->failure();
        $this->assertFalse($b->isCallAllowed());
    }

    public function testGaneshaSuccessAndFailureAreThePermits(): void
    {
        $b = $this->r->getOrCreate('svc', new Config(failureThreshold: 2));
        $b->tryAcquire()->success();
        $b->tryAcquire()->failure();
        $this->assertSame(['successes' => 1, 'failures' => 1], array_intersect_key($b->stats(), ['successes' => 0, 'failures' => 0]));
    }

    public function testGaneshaRedisMemcachedApcuAdaptersAreTheSharedFile(): void
    {
        $path = sys_get_temp_dir() . '/lb-php-migration-' . getmypid() . '.lbr';
        @unlink($path);
        try {
            $worker1 = Registry::open(['path' => $path, 'create' => true, 'persistent' => false]);
            $worker2 = Registry::open(['path' => $path, 'create' => true, 'persistent' => false]);
            $worker1->getOrCreate('svc', new Config(failureThreshold: 1))->tryAcquire()->failure();
            $this->assertSame('open', $worker2->getOrCreate('svc', new Config(failureThreshold: 1))->state());
        } finally {
            @unlink($path);
        }
    }

    public function testGaneshaGuzzleMiddlewareIsLazyBreakersGuzzleMiddleware(): void
    {
        $this->assertTrue(class_exists(\LazyBreaker\Guzzle\CircuitBreakerMiddleware::class));
        $m = new \LazyBreaker\Guzzle\CircuitBreakerMiddleware($this->r);
        $this->assertIsCallable($m);
    }
}
