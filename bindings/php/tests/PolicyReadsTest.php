<?php
declare(strict_types=1);

use LazyBreaker\{Config, InvalidArgumentException, LazyBreakerException, Registry};
use PHPUnit\Framework\TestCase;

/**
 * Which options a policy reads comes from the library (cb_policy_reads); the
 * policy of a Config follows the one rule of docs/policies.md, "Which
 * settings a policy reads".
 */
final class PolicyReadsTest extends TestCase
{
    private const POLICIES = [
        'consecutive' => \CB_POLICY_CONSECUTIVE,
        'count_window' => \CB_POLICY_COUNT_WINDOW,
        'time_window' => \CB_POLICY_TIME_WINDOW,
    ];

    public function testEveryAnswerTheBindingUsesIsTheLibrarys(): void
    {
        $reads = Config::policyReads();
        $this->assertSame(array_keys(\lb_php_config_fields()), array_keys($reads));
        $answers = [];
        foreach ($reads as $field => $byPolicy) {
            $this->assertSame(array_keys(self::POLICIES), array_keys($byPolicy), $field);
            foreach ($byPolicy as $policy => $answer) {
                $this->assertSame(\cb_policy_reads(self::POLICIES[$policy], $field), $answer, "{$policy} {$field}");
                $answers[$answer] = true;
            }
        }
        ksort($answers);
        $expected = [\CB_FIELD_IGNORED => true, \CB_FIELD_READ => true, \CB_FIELD_READ_WITH_SLOW_CALLS => true];
        ksort($expected);
        $this->assertSame($expected, $answers);
    }

    /** @return array<string, array{int, ?string, string}> */
    public static function unknowns(): array
    {
        return [
            'a misspelt field' => [\CB_POLICY_CONSECUTIVE, 'window_sise', 'field'],
            'an option, not a field' => [\CB_POLICY_CONSECUTIVE, 'windowSize', 'field'],
            'no field' => [\CB_POLICY_CONSECUTIVE, null, 'field'],
            'an unknown policy' => [7, 'window_size', 'policy'],
            'a negative policy' => [-1, 'window_size', 'policy'],
        ];
    }

    /** @dataProvider unknowns */
    public function testTheLibraryRefusesAnUnknownPolicyOrField(int $policy, ?string $field, string $named): void
    {
        try {
            \cb_policy_reads($policy, $field);
            $this->fail('answered');
        } catch (LazyBreakerException $e) {
            $this->assertSame(\CB_EINVAL, $e->getCode());
            $this->assertSame($named, \cb_last_error_field());
        }
    }

    /** @return array<string, array{array<string, int|float|string>, string}> */
    public static function inferred(): array
    {
        return [
            'a threshold' => [['failureThreshold' => 3], 'consecutive'],
            'a window size' => [['windowSize' => 10], 'count_window'],
            'minimum calls' => [['minimumCalls' => 5], 'count_window'],
            'a rate' => [['failureRateThreshold' => 0.5], 'count_window'],
            'a rate and minimum calls' => [['failureRateThreshold' => 0.5, 'minimumCalls' => 5], 'count_window'],
            'a window duration' => [['windowDurationSeconds' => 10], 'time_window'],
            'buckets and minimum calls' => [['windowBuckets' => 5, 'minimumCalls' => 5], 'time_window'],
            'a threshold with slow calls' => [['failureThreshold' => 3, 'timeoutSeconds' => 5, 'slowCallSeconds' => 1], 'consecutive'],
            'a slow-call window' => [['failureThreshold' => 3, 'slowCallSeconds' => 1, 'windowSize' => 10, 'minimumCalls' => 5], 'consecutive'],
        ];
    }

    /** @dataProvider inferred */
    public function testWithoutAPolicyTheFirstOptionSomePolicyIgnoresChooses(array $options, string $policy): void
    {
        $this->assertSame(self::POLICIES[$policy], (new Config(...$options))->fields()['policy']);
    }

    public function testOptionsEveryPolicyReadsChooseNoPolicy(): void
    {
        $this->assertArrayNotHasKey('policy', (new Config(timeoutSeconds: 5, slowCallSeconds: 1))->fields());
    }

    /** @return array<string, array{array<string, int|float|string>, string, string}> */
    public static function unread(): array
    {
        return [
            'two windows' => [['windowSize' => 10, 'windowDurationSeconds' => 10], 'windowDurationSeconds',
                'windowDurationSeconds is not read by the count_window policy, which windowSize chooses'],
            'a threshold and buckets' => [['failureThreshold' => 3, 'windowBuckets' => 5, 'minimumCalls' => 5], 'windowBuckets',
                'windowBuckets is not read by the consecutive policy, which failureThreshold chooses'],
            // The consecutive policy's window is read only with slow calls.
            'a threshold and a window' => [['failureThreshold' => 3, 'windowSize' => 10], 'windowSize',
                'windowSize is not read by the consecutive policy, which failureThreshold chooses'],
            'a window without slow calls' => [['policy' => 'consecutive', 'windowSize' => 10], 'windowSize',
                'windowSize is not read by the consecutive policy without slowCallSeconds'],
            'slow calls off' => [['policy' => 'consecutive', 'slowCallNs' => 0, 'minimumCalls' => 10], 'minimumCalls',
                'minimumCalls is not read by the consecutive policy without slowCallNs'],
            'a size for a time window' => [['policy' => 'time_window', 'windowSize' => 10], 'windowSize',
                'windowSize is not read by the time_window policy ('],
        ];
    }

    /** @dataProvider unread */
    public function testAnOptionThePolicyDoesNotReadIsNamed(array $options, string $option, string $message): void
    {
        try {
            new Config(...$options);
            $this->fail('accepted');
        } catch (InvalidArgumentException $e) {
            $this->assertSame($option, $e->option());
            $this->assertStringContainsString($message, $e->getMessage());
        }
    }

    public function testTheConsecutivePolicyReadsItsSlowCallWindowWhenSet(): void
    {
        $config = new Config(policy: 'consecutive', failureThreshold: 3, slowCallSeconds: 0.5, windowSize: 20, minimumCalls: 10);
        $b = Registry::manualClock()->create('slow', $config);
        $this->assertSame(20, $b->fields()['window_size']);
        $this->assertSame(10, $b->fields()['minimum_calls']);
    }
}
