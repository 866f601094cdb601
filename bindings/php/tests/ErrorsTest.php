<?php
declare(strict_types=1);

use LazyBreaker\{ClosedException, Config, InvalidArgumentException, LazyBreakerException, Registry};
use PHPUnit\Framework\TestCase;

/** Bad input: a clear exception naming the option in PHP's words, nothing changed; closed registries throw. */
final class ErrorsTest extends TestCase
{
    /** @return array<string, array{\Closure, string, string}> */
    public static function badConfigs(): array
    {
        return [
            'zero threshold' => [fn () => new Config(failureThreshold: 0), 'failureThreshold', 'failureThreshold must be 1..65535, got 0'],
            'threshold past uint32' => [fn () => new Config(failureThreshold: 1 << 33), 'failureThreshold', 'expected an int 0..4294967295'],
            'negative threshold' => [fn () => new Config(failureThreshold: -1), 'failureThreshold', 'expected an int'],
            'a float for a count' => [fn () => new Config(windowSize: 2.5), 'windowSize', 'expected an int'],
            'zero open duration' => [fn () => new Config(timeoutSeconds: 0), 'timeoutSeconds', 'timeoutSeconds must be 0.000001..31622400 s, got 0'],
            'open duration in ns' => [fn () => new Config(timeoutNs: 5), 'timeoutNs', 'timeoutNs must be'],
            'negative seconds' => [fn () => new Config(timeoutSeconds: -1), 'timeoutSeconds', 'expected seconds'],
            'NaN seconds' => [fn () => new Config(timeoutSeconds: NAN), 'timeoutSeconds', 'expected seconds'],
            'cap below the duration' => [fn () => new Config(timeoutSeconds: 10, timeoutMaxSeconds: 5), 'timeoutMaxSeconds', 'timeoutMaxSeconds must be 0 or timeoutSeconds (10 s)'],
            'rate above 1' => [fn () => new Config(failureRateThreshold: 1.5), 'failureRateThreshold', 'failureRateThreshold must be'],
            'too many probes' => [fn () => new Config(halfOpenMaxCalls: 33), 'halfOpenMaxCalls', 'halfOpenMaxCalls must be 1..32'],
            'unknown option' => [fn () => new Config(failureTreshold: 3), 'failureTreshold', 'unknown option failureTreshold'],
            'the C name' => [fn () => new Config(failure_threshold: 3), 'failure_threshold', 'unknown option failure_threshold'],
            'both spellings' => [fn () => new Config(timeoutSeconds: 1, timeoutNs: 1000000000), 'timeoutNs', 'set the same thing'],
            'unknown policy' => [fn () => new Config(policy: 'sliding'), 'policy', "expected consecutive, count_window, time_window, got 'sliding'"],
            'a window with the consecutive policy' => [fn () => new Config(failureThreshold: 3, windowSize: 10), 'windowSize', 'windowSize is not read by the consecutive policy, which failureThreshold chooses'],
            'a threshold with a rate' => [fn () => new Config(failureRateThreshold: 0.5, failureThreshold: 3), 'failureRateThreshold', 'failureRateThreshold is not read by the consecutive policy, which failureThreshold chooses'],
            'buckets with a count window' => [fn () => new Config(policy: 'count_window', windowBuckets: 4), 'windowBuckets', 'windowBuckets is not read by the count_window policy (docs/policies.md)'],
            'minimum calls with consecutive' => [fn () => new Config(policy: 'consecutive', minimumCalls: 4), 'minimumCalls', 'minimumCalls is not read by the consecutive policy'],
        ];
    }

    /** @dataProvider badConfigs */
    public function testABadOptionIsNamedInPhpsWords(\Closure $make, string $option, string $message): void
    {
        try {
            $make();
            $this->fail('accepted');
        } catch (InvalidArgumentException $e) {
            $this->assertSame($option, $e->option());
            $this->assertStringContainsString($message, $e->getMessage());
            $this->assertInstanceOf(\InvalidArgumentException::class, $e, 'PHP\'s own InvalidArgumentException');
            $this->assertInstanceOf(\LazyBreaker\Exception::class, $e);
        }
    }

    public function testPositionalArgumentsAreRefused(): void
    {
        $this->expectException(InvalidArgumentException::class);
        new Config(3, 10);
    }

    public function testARefusedConfigChangesNothing(): void
    {
        $r = Registry::manualClock();
        try {
            $r->getOrCreate('x', new Config(failureThreshold: 0));
        } catch (InvalidArgumentException) {
        }
        $this->assertNull($r->lookup('x'));
        $this->assertSame([], $r->breakers());
    }

    public function testBadRegistryOptions(): void
    {
        foreach ([['capacity' => \CB_MAX_CAPACITY + 1], ['capacity' => 'many'], ['manualClock' => 1], ['pth' => '/tmp/x'], ['capacity' => 1 << 40]] as $options) {
            try {
                Registry::open($options);
                $this->fail('accepted ' . json_encode($options));
            } catch (InvalidArgumentException $e) {
                $this->assertSame((string) array_key_first($options), $e->option(), $e->getMessage());
            }
        }
    }

    public function testAMissingFileWithoutCreateIsCbEnoent(): void
    {
        try {
            Registry::open(['path' => sys_get_temp_dir() . '/lb-php-missing-' . getmypid() . '.lbr']);
            $this->fail('opened');
        } catch (LazyBreakerException $e) {
            $this->assertSame('CB_ENOENT', $e->statusName());
        }
    }

    public function testANameWithANulByteIsRefused(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        Registry::manualClock()->getOrCreate("a\0b");
    }

    public function testAForeignFileIsRefusedNotMapped(): void
    {
        $path = sys_get_temp_dir() . '/lb-php-foreign-' . getmypid() . '.lbr';
        file_put_contents($path, str_repeat('not a registry ', 1000));
        chmod($path, 0600);
        try {
            Registry::open(['path' => $path, 'persistent' => false]);
            $this->fail('opened');
        } catch (LazyBreakerException $e) {
            $this->assertContains($e->statusName(), ['CB_ECORRUPT', 'CB_EVERSION']);
        } finally {
            unlink($path);
        }
    }

    public function testAdvanceOnAMonotonicClockIsRefused(): void
    {
        $this->expectException(LazyBreakerException::class);
        Registry::open()->advance(1);
    }

    /** @return array<string, array{\Closure}> every use of a closed registry's objects */
    public static function afterClose(): array
    {
        return [
            'call' => [fn ($r, $b, $p) => $b->call(fn () => 1)],
            'tryAcquire' => [fn ($r, $b, $p) => $b->tryAcquire()],
            'isCallAllowed' => [fn ($r, $b, $p) => $b->isCallAllowed()],
            'state' => [fn ($r, $b, $p) => $b->state()],
            'retryAfter' => [fn ($r, $b, $p) => $b->retryAfter()],
            'trip' => [fn ($r, $b, $p) => $b->trip(1)],
            'forceOpen' => [fn ($r, $b, $p) => $b->forceOpen()],
            'disable' => [fn ($r, $b, $p) => $b->disable()],
            'reset' => [fn ($r, $b, $p) => $b->reset()],
            'stats' => [fn ($r, $b, $p) => $b->stats()],
            'permit' => [fn ($r, $b, $p) => $p->success()],
            'getOrCreate' => [fn ($r, $b, $p) => $r->getOrCreate('y')],
            'lookup' => [fn ($r, $b, $p) => $r->lookup('x')],
            'breakers' => [fn ($r, $b, $p) => $r->breakers()],
            'advance' => [fn ($r, $b, $p) => $r->advance(1)],
        ];
    }

    /** @dataProvider afterClose */
    public function testAClosedRegistrysBreakerThrowsNeverCrashes(\Closure $use): void
    {
        $r = Registry::manualClock();
        $b = $r->getOrCreate('x');
        $p = $b->tryAcquire();
        $r->close();
        $r->close(); // twice is fine
        $this->expectException(ClosedException::class);
        $use($r, $b, $p);
    }

    public function testARegistryClosedInsideCallStillReturnsTheResult(): void
    {
        $r = Registry::manualClock();
        $b = $r->getOrCreate('x');
        $this->assertSame(7, $b->call(function () use ($r) {
            $r->close();
            return 7;
        }));
        $this->expectException(ClosedException::class);
        $b->call(fn () => 8);
    }

    public function testAClosedSharedRegistrysBreakerThrows(): void
    {
        $path = sys_get_temp_dir() . '/lb-php-closed-' . getmypid() . '.lbr';
        @unlink($path);
        try {
            $r = Registry::open(['path' => $path, 'create' => true]);
            $b = $r->getOrCreate('x');
            $r->close();
            $this->expectException(ClosedException::class);
            $b->state();
        } finally {
            @unlink($path);
        }
    }

    public function testARawStaleHandleIsAnExceptionNotACrash(): void
    {
        $r = Registry::manualClock();
        $h = $r->getOrCreate('x')->handle();
        $r->close();
        try {
            \cb_state($h);
            $this->fail('a stale handle answered');
        } catch (LazyBreakerException $e) {
            $this->assertSame('CB_EHANDLE', $e->statusName());
        }
    }
}
