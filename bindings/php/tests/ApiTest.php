<?php
declare(strict_types=1);

use LazyBreaker\{Breaker, CircuitOpenException, Config, Permit, Registry};
use PHPUnit\Framework\TestCase;

/** The PHP API's own behaviour: idioms, rounding, permits, registries. */
final class ApiTest extends TestCase
{
    private function tripped(Registry $r, string $name = 'payment-gateway/charge'): Breaker
    {
        $b = $r->getOrCreate($name, new Config(failureThreshold: 3, timeoutSeconds: 10));
        for ($i = 0; $i < 3; $i++) {
            $b->tryAcquire()->failure();
        }
        return $b;
    }

    public function testThreeFailuresInARowOpenTheCircuitForTimeoutSeconds(): void
    {
        $r = Registry::manualClock();
        $b = $this->tripped($r);
        $this->assertSame('open', $b->state());
        $this->assertSame(10, $b->retryAfter());
        $r->advance(9.999);
        $this->assertSame(1, $b->retryAfter(), 'rounded up, as Retry-After wants');
        $this->assertFalse($b->isCallAllowed());
        $r->advance(0.001);
        $this->assertSame(0, $b->retryAfter());
        $this->assertTrue($b->isCallAllowed());
        $this->assertSame('open', $b->state(), 'isCallAllowed takes no probe');
        $this->assertSame('ok', $b->call(fn () => 'ok'));
        $this->assertSame('closed', $b->state());
    }

    public function testCallReturnsTheResultAndRethrowsAThrowableAsAFailure(): void
    {
        $b = Registry::manualClock()->getOrCreate('x', new Config(failureThreshold: 2));
        $this->assertSame(42, $b->call(fn () => 42));
        $e = new \DomainException('down');
        try {
            $b->call(fn () => throw $e);
            $this->fail('no rethrow');
        } catch (\DomainException $got) {
            $this->assertSame($e, $got, 'the same Throwable, unchanged');
        }
        $this->assertSame(1, $b->stats()['failures']);
        $this->assertSame(1, $b->stats()['consecutiveFailures']);
    }

    public function testARejectedCallThrowsCircuitOpenExceptionWithRetryAfterAndNeverRuns(): void
    {
        $b = $this->tripped(Registry::manualClock());
        $ran = false;
        try {
            $b->call(function () use (&$ran) { $ran = true; });
            $this->fail('admitted');
        } catch (CircuitOpenException $e) {
            $this->assertSame(10, $e->retryAfter());
            $this->assertSame('open', $e->state());
            $this->assertSame('payment-gateway/charge', $e->breakerName());
        }
        $this->assertFalse($ran);
        $this->assertSame(1, $b->stats()['rejected']);
    }

    public function testTheClassifierDecidesForResultsAndForExceptions(): void
    {
        $b = Registry::manualClock()->getOrCreate('c', new Config(failureThreshold: 1));
        $classify = fn (mixed $result, ?\Throwable $e): string => match (true) {
            $e instanceof \InvalidArgumentException => 'ignored',
            $e !== null => 'failure',
            $result === 404 => 'success',
            default => $result < 500 ? 'success' : 'failure',
        };
        $this->assertSame(404, $b->call(fn () => 404, $classify));
        try {
            $b->call(fn () => throw new \InvalidArgumentException('the caller'), $classify);
        } catch (\InvalidArgumentException) {
        }
        $this->assertSame('closed', $b->state(), 'an exception the classifier ignores is not a failure');
        $this->assertSame(1, $b->stats()['ignored']);
        $this->assertSame(503, $b->call(fn () => 503, $classify), 'a failing result is still returned');
        $this->assertSame('open', $b->state());
    }

    public function testABooleanClassifierAndABadVerdict(): void
    {
        $b = Registry::manualClock()->getOrCreate('c', new Config(failureThreshold: 2));
        $b->call(fn () => false, fn ($r) => $r);
        $this->assertSame(1, $b->stats()['failures']);
        $this->expectException(\UnexpectedValueException::class);
        $b->call(fn () => 1, fn () => 'maybe');
    }

    public function testPermitsReportOnceAndTryAcquireIsNullWhenRejected(): void
    {
        $r = Registry::manualClock();
        $b = $r->getOrCreate('p', new Config(failureThreshold: 1, timeoutSeconds: 5));
        $p = $b->tryAcquire();
        $this->assertInstanceOf(Permit::class, $p);
        $p->ignore();
        $this->assertSame(1, $b->stats()['ignored']);
        foreach (['success', 'failure', 'ignore'] as $again) {
            try {
                $p->$again();
                $this->fail("a second report ($again) passed");
            } catch (\LazyBreaker\PermitException $e) {
                $this->assertStringContainsString('reported already', $e->getMessage());
            }
        }
        $b->tryAcquire()->failure();
        $this->assertNull($b->tryAcquire());
        $r->advance(5);
        $probe = $b->tryAcquire();
        $this->assertNotNull($probe, 'the probe');
        $this->assertNull($b->tryAcquire(), 'one probe at a time');
        $probe->success();
        $this->assertSame('closed', $b->state());
    }

    public function testAPermitDroppedUnreportedIsAFailure(): void
    {
        $b = Registry::manualClock()->getOrCreate('d', new Config(failureThreshold: 1));
        $b->tryAcquire(); // dropped at once
        $this->assertSame('open', $b->state());
    }

    public function testManualTransitionsAndRetryAfterNullWhenForcedOpen(): void
    {
        $r = Registry::manualClock();
        $b = $r->getOrCreate('m');
        $b->forceOpen();
        $this->assertSame('forced_open', $b->state());
        $this->assertNull($b->retryAfter());
        $this->assertNull($b->retryAfterNs());
        try {
            $b->call(fn () => 1);
            $this->fail('admitted');
        } catch (CircuitOpenException $e) {
            $this->assertNull($e->retryAfter());
        }
        $b->disable();
        $this->assertSame('disabled', $b->state());
    }

    public function testDisabledRecordsNothingAndResetCloses(): void
    {
        $b = Registry::manualClock()->getOrCreate('r', new Config(failureThreshold: 1));
        $b->disable();
        try {
            $b->call(fn () => throw new \RuntimeException());
        } catch (\RuntimeException) {
        }
        $this->assertSame('disabled', $b->state());
        $b->reset();
        $this->assertSame('closed', $b->state());
    }

    public function testTripOpensForExactlyThatLong(): void
    {
        $r = Registry::manualClock();
        $b = $r->getOrCreate('t');
        $b->trip(2.5);
        $this->assertSame('open', $b->state());
        $this->assertSame(2500000000, $b->retryAfterNs());
        $this->assertSame(3, $b->retryAfter());
        $r->advance(2.5);
        $this->assertTrue($b->isCallAllowed());
    }

    public function testLookupBreakersAndGetOrCreateShareOneBreaker(): void
    {
        $r = Registry::manualClock();
        $this->assertNull($r->lookup('a'));
        $a = $r->getOrCreate('a', new Config(failureThreshold: 1));
        $r->getOrCreate('b');
        $a->tryAcquire()->failure();
        $this->assertSame('open', $r->lookup('a')->state());
        $this->assertSame('open', $r->getOrCreate('a', new Config(failureThreshold: 1))->state());
        $this->assertSame(['a', 'b'], array_keys($r->breakers()));
        $this->assertStringContainsString('lazybreaker_', $r->prometheus());
    }

    public function testAnotherConfigurationForAnExistingNameIsRefused(): void
    {
        $r = Registry::manualClock();
        $r->getOrCreate('a', new Config(failureThreshold: 1));
        try {
            $r->getOrCreate('a', new Config(failureThreshold: 2));
            $this->fail('accepted');
        } catch (\LazyBreaker\LazyBreakerException $e) {
            $this->assertSame('CB_EEXIST', $e->statusName());
        }
    }

    public function testEveryPolicyAndItsOptions(): void
    {
        $r = Registry::manualClock();
        $count = $r->getOrCreate('count', new Config(failureRateThreshold: 0.5, windowSize: 4, minimumCalls: 4));
        $this->assertSame(\CB_POLICY_COUNT_WINDOW, $count->fields()['policy']);
        foreach ([true, false, true, false] as $ok) {
            $count->tryAcquire()->{$ok ? 'success' : 'failure'}();
        }
        $this->assertSame('open', $count->state());
        $time = $r->getOrCreate('time', new Config(windowDurationSeconds: 10, windowBuckets: 5, failureRateThreshold: 0.5, minimumCalls: 2));
        $this->assertSame(\CB_POLICY_TIME_WINDOW, $time->fields()['policy']);
        $this->assertSame(10000000000, $time->fields()['window_duration_ns']);
        $slow = $r->getOrCreate('slow', new Config(failureThreshold: 5, slowCallSeconds: 0.000001, slowCallRateThreshold: 0.5, windowSize: 2, minimumCalls: 2));
        $this->assertSame(1000, $slow->fields()['slow_call_ns']);
        $backoff = $r->getOrCreate('backoff', new Config(failureThreshold: 1, timeoutSeconds: 1, openBackoffMultiplier: 2, timeoutMaxSeconds: 8, openJitter: 0.1));
        $this->assertSame(8000000000, $backoff->fields()['open_duration_max_ns']);
        $probes = $r->getOrCreate('probes', new Config(policy: 'consecutive', halfOpenMaxCalls: 2, halfOpenSuccessThreshold: 2, halfOpenTimeoutSeconds: 3));
        $this->assertSame(2, $probes->fields()['half_open_max_calls']);
        $this->assertSame(3000000000, $probes->fields()['half_open_timeout_ns']);
        $exact = $r->getOrCreate('exact', new Config(timeoutNs: 1234567891));
        $this->assertSame(1234567891, $exact->fields()['open_duration_ns']);
    }

    public function testUnsetOptionsAreTheLibrarysDefaults(): void
    {
        $fields = Registry::manualClock()->getOrCreate('d')->fields();
        foreach (\lb_php_config_fields() as $field => $info) {
            if ($info['default'] == 0) {
                continue; // 0: a default the library resolves (half_open_timeout_ns: the open duration)
            }
            $this->assertEquals($info['default'], $fields[$field], $field);
        }
    }

    public function testOptionNamesComeFromTheCFieldsByOneRule(): void
    {
        $options = Config::options();
        $this->assertSame('failure_threshold', $options['failureThreshold']['field']);
        $this->assertSame('open_duration_ns', $options['timeoutSeconds']['field']);
        $this->assertSame('open_duration_max_ns', $options['timeoutMaxSeconds']['field']);
        $this->assertSame('window_duration_ns', $options['windowDurationNs']['field']);
        $this->assertSame(count(\lb_php_config_fields()), count(array_unique(array_column($options, 'field'))));
    }

    public function testTheDefaultRegistryIsOneAndNeverCloses(): void
    {
        $d = Registry::default();
        $this->assertSame($d, Registry::default());
        $d->getOrCreate('default-' . getmypid());
        $this->assertNotNull(Registry::default()->lookup('default-' . getmypid()));
        $this->expectException(\LogicException::class);
        $d->close();
    }

    public function testASharedFileIsOneStateForEveryRegistryThatOpensIt(): void
    {
        $path = sys_get_temp_dir() . '/lb-php-api-' . getmypid() . '.lbr';
        @unlink($path);
        try {
            $a = Registry::open(['path' => $path, 'create' => true, 'persistent' => false]);
            $b = Registry::open(['path' => $path, 'persistent' => false]);
            $a->getOrCreate('shared', new Config(failureThreshold: 1))->tryAcquire()->failure();
            $this->assertSame('open', $b->lookup('shared')->state());
            $a->close();
            $this->assertSame('open', $b->lookup('shared')->state(), 'the other registry is not closed');
            $b->close();
            $this->assertSame(0600, fileperms($path) & 0777);
        } finally {
            @unlink($path);
        }
    }

    public function testAPersistentRegistryIsMappedOncePerProcess(): void
    {
        $path = sys_get_temp_dir() . '/lb-php-persist-' . getmypid() . '.lbr';
        @unlink($path);
        try {
            $a = Registry::open(['path' => $path, 'create' => true]);
            $breaker = $a->getOrCreate('kept', new Config(failureThreshold: 1));
            $a->close(); // this object only
            $b = Registry::open(['path' => $path, 'create' => true]);
            $breaker2 = $b->lookup('kept');
            $this->assertNotNull($breaker2, 'the mapping survived close() of another object');
            $breaker2->tryAcquire()->failure();
            $this->assertSame('open', $breaker2->state());
        } finally {
            @unlink($path);
        }
    }
}
