<?php
declare(strict_types=1);

namespace LazyBreaker;

/**
 * A breaker's configuration, built with named arguments:
 *
 *     new Config(failureThreshold: 3, timeoutSeconds: 10)
 *     new Config(failureRateThreshold: 0.5, windowSize: 20, minimumCalls: 10)
 *     new Config(policy: 'time_window', windowDurationSeconds: 60, failureRateThreshold: 0.5)
 *
 * The options are the fields of the library's cb_config (CB_CONFIG_FIELDS
 * in lists.h), named by one rule, never by a table of names: the C name in
 * camelCase (failure_threshold is failureThreshold); a duration field
 * (…_ns) is either …Seconds (int or float seconds) or …Ns (int
 * nanoseconds, exact); and the open duration has the database-table
 * breakers' word, timeout: open_duration_ns is timeoutSeconds / timeoutNs,
 * open_duration_max_ns timeoutMaxSeconds / timeoutMaxNs. policy is
 * 'consecutive', 'count_window' or 'time_window' (the names of the
 * library's CB_POLICY_* constants).
 *
 * Unset options keep the library's defaults (cb_config_init). Without a
 * policy, the policy is the first of consecutive, count_window and
 * time_window that reads every option given, as the library answers
 * (cb_policy_reads; a slow-call window does not count), the rule of every
 * binding (docs/policies.md, "Which settings a policy reads"). An option
 * the policy does not read is an error, as is a value out of the library's
 * range: InvalidArgumentException naming the option, thrown here.
 */
final class Config
{
    /** @var array<string, int|float> C field => value in C units, for the fields set */
    private array $fields = [];
    /** @var array<string, string> C field => the option it was set with */
    private array $given = [];
    private ?\cb_config $native = null;

    /** @var array<string, array{field: string, as: string}>|null option => C field, and how */
    private static ?array $options = null;
    /** @var array<string, array<string, mixed>>|null CB_CONFIG_FIELDS, from the extension */
    private static ?array $info = null;
    /** @var array<string, int>|null policy name => CB_POLICY_*, in the order of their values */
    private static ?array $policies = null;
    /** @var array<string, array<string, int>>|null C field => policy name => CB_FIELD_* (cb_policy_reads) */
    private static ?array $reads = null;

    // The database-table breakers' vocabulary: the one word that differs.
    private const VOCABULARY = ['open_duration' => 'timeout'];

    public function __construct(int|float|string ...$options)
    {
        self::init();
        foreach ($options as $option => $value) {
            if (!is_string($option)) {
                throw new InvalidArgumentException('Config takes named arguments only, as new Config(failureThreshold: 3)');
            }
            $this->set($option, $value);
        }
        $this->inferPolicy();
        $this->native = $this->build();
        $this->validate();
    }

    /**
     * The options, by their PHP names, with the C field each sets and its
     * unit: what docs/php.md tabulates.
     * @return array<string, array{field: string, as: string}>
     */
    public static function options(): array
    {
        self::init();
        return self::$options;
    }

    /** The option names of one C field, e.g. ['timeoutSeconds', 'timeoutNs'] for open_duration_ns. */
    public static function optionsOf(string $field): array
    {
        return array_keys(array_filter(self::options(), static fn (array $o): bool => $o['field'] === $field));
    }

    /** The C fields set, in C units (nanoseconds), with the policy by its CB_POLICY_* value. */
    public function fields(): array
    {
        return $this->fields;
    }

    /** @internal the cb_config the breaker is created with */
    public function native(): \cb_config
    {
        return $this->native;
    }

    /**
     * Rethrows a library refusal of a configuration (CB_EINVAL naming a
     * field) as InvalidArgumentException in this Config's words.
     * @internal
     */
    public function refused(LazyBreakerException $e): \Throwable
    {
        $field = \cb_last_error_field();
        if ($e->getCode() !== \CB_EINVAL || $field === null || !isset(self::$info[$field])) {
            return $e;
        }
        $option = $this->given[$field] ?? self::optionsOf($field)[0];
        return new InvalidArgumentException($this->say($e->getMessage(), $field, $option), $option, $e);
    }

    // ---- building ------------------------------------------------------------

    private static function init(): void
    {
        if (self::$options !== null) {
            return;
        }
        self::$info = \lb_php_config_fields();
        self::$options = [];
        foreach (self::$info as $field => $info) {
            if ($info['unit'] === 'ns') {
                $stem = substr($field, 0, -3);
                foreach (self::VOCABULARY as $c => $word) {
                    if (str_starts_with($stem, $c)) {
                        $stem = $word . substr($stem, strlen($c));
                    }
                }
                self::$options[self::camel($stem) . 'Seconds'] = ['field' => $field, 'as' => 'seconds'];
                self::$options[self::camel($stem) . 'Ns'] = ['field' => $field, 'as' => 'ns'];
            } else {
                self::$options[self::camel($field)] = ['field' => $field, 'as' => $info['unit']];
            }
        }
        self::$policies = [];
        foreach ((new \ReflectionExtension('lazybreaker'))->getConstants() as $name => $value) {
            if (str_starts_with($name, 'CB_POLICY_')) {
                self::$policies[strtolower(substr($name, 10))] = $value;
            }
        }
        asort(self::$policies);
        // The library's answers, which the extension asks once per process.
        self::$reads = [];
        foreach (\lb_php_policy_reads() as $field => $answers) {
            foreach (self::$policies as $policy => $value) {
                self::$reads[$field][$policy] = $answers[$value];
            }
        }
    }

    /**
     * How each policy reads each C field, as the library answers it
     * (cb_policy_reads): C field => policy name => CB_FIELD_READ,
     * CB_FIELD_IGNORED or CB_FIELD_READ_WITH_SLOW_CALLS.
     * @return array<string, array<string, int>>
     */
    public static function policyReads(): array
    {
        self::init();
        return self::$reads;
    }

    /** failure_rate_threshold -> failureRateThreshold */
    public static function camel(string $snake): string
    {
        return lcfirst(str_replace('_', '', ucwords($snake, '_')));
    }

    private function set(string $option, int|float|string $value): void
    {
        $o = self::$options[$option] ?? null;
        if ($o === null) {
            throw new InvalidArgumentException("unknown option {$option} (the options: " . implode(', ', array_keys(self::$options)) . ')', $option);
        }
        $field = $o['field'];
        if (isset($this->given[$field])) {
            throw new InvalidArgumentException("{$option} and {$this->given[$field]} set the same thing", $option);
        }
        $info = self::$info[$field];
        $this->fields[$field] = match ($o['as']) {
            'seconds' => self::seconds($option, $value),
            'policy' => self::policy($value),
            default => self::number($option, $info['type'], $value),
        };
        $this->given[$field] = $option;
    }

    private static function seconds(string $option, mixed $value): int
    {
        if (!is_int($value) && !is_float($value) || !is_finite((float) $value) || $value < 0 || $value * 1e9 >= 9.2e18) {
            throw new InvalidArgumentException("{$option}: expected seconds (an int or a float, 0 or more), got " . var_export($value, true), $option);
        }
        return (int) round($value * 1e9);
    }

    private static function policy(mixed $value): int
    {
        if (!is_string($value) || !isset(self::$policies[$value])) {
            throw new InvalidArgumentException('policy: expected ' . implode(', ', array_keys(self::$policies)) . ', got ' . var_export($value, true), 'policy');
        }
        return self::$policies[$value];
    }

    private static function number(string $option, string $type, mixed $value): int|float
    {
        if ($type === 'double') {
            if (!is_int($value) && !is_float($value)) {
                throw new InvalidArgumentException("{$option}: expected a number, got " . var_export($value, true), $option);
            }
            return (float) $value;
        }
        $max = $type === 'uint32_t' ? 4294967295 : PHP_INT_MAX;
        if (!is_int($value) || $value < 0 || $value > $max) {
            throw new InvalidArgumentException("{$option}: expected an int 0..{$max}, got " . var_export($value, true), $option);
        }
        return $value;
    }

    private function policyName(int $value): string
    {
        return (string) array_search($value, self::$policies, true);
    }

    private static function reads(string $policy, string $field, bool $slowCalls): bool
    {
        $answer = self::$reads[$field][$policy];
        return $answer === \CB_FIELD_READ || ($slowCalls && $answer === \CB_FIELD_READ_WITH_SLOW_CALLS);
    }

    // The policy (docs/policies.md, "Which settings a policy reads"): the one
    // set; else the first policy that reads the first option given that some
    // policy ignores. Every option given must be read by it (a slow-call
    // window's only with slow calls).
    private function inferPolicy(): void
    {
        $slowField = 'slow_call_ns';
        $slowCalls = ($this->fields[$slowField] ?? self::$info[$slowField]['default']) > 0;
        $given = array_values(array_filter(array_keys(self::$info),
            fn (string $field): bool => $field !== 'policy' && isset($this->given[$field])));
        if (isset($this->fields['policy'])) {
            $policy = $this->policyName($this->fields['policy']);
            foreach ($given as $field) {
                if (!self::reads($policy, $field, $slowCalls)) {
                    $option = $this->given[$field];
                    $without = self::$reads[$field][$policy] === \CB_FIELD_READ_WITH_SLOW_CALLS
                        ? ' without ' . ($this->given[$slowField] ?? self::optionsOf($slowField)[0]) : '';
                    throw new InvalidArgumentException("{$option} is not read by the {$policy} policy{$without} (docs/policies.md): drop it or set another policy", $option);
                }
            }
            return;
        }
        $policies = array_keys(self::$policies);
        $deciding = array_values(array_filter($given, static function (string $field) use ($policies): bool {
            foreach ($policies as $policy) {
                if (!self::reads($policy, $field, false)) {
                    return true;
                }
            }
            return false;
        }));
        if ($deciding === []) {
            return;
        }
        $first = $deciding[0];
        $chosen = $policies[0];
        foreach ($policies as $policy) {
            if (self::reads($policy, $first, false)) {
                $chosen = $policy;
                break;
            }
        }
        foreach ($deciding as $field) {
            if (!self::reads($chosen, $field, $slowCalls)) {
                $option = $this->given[$field];
                throw new InvalidArgumentException("{$option} is not read by the {$chosen} policy, which {$this->given[$first]} chooses (docs/policies.md): set policy or leave one of them unset", $option);
            }
        }
        $this->fields['policy'] = self::$policies[$chosen];
    }

    private function build(): \cb_config
    {
        $c = new \cb_config();
        foreach ($this->fields as $field => $value) {
            $c->{$field . '_set'}($value); // SWIG's setter: its __set is slower
        }
        return $c;
    }

    // The library checks every value (lb_php_config_check: a breaker created
    // and destroyed in a registry of one slot the process keeps).
    private function validate(): void
    {
        try {
            \lb_php_config_check($this->native);
        } catch (LazyBreakerException $e) {
            throw $this->refused($e);
        }
    }

    // The library's message about a field, in PHP's words: the option's name
    // for the field's, and seconds for nanoseconds when set in seconds.
    private function say(string $message, string $field, string $option): string
    {
        $text = preg_replace('/^lazybreaker: [A-Z_]+: [^:]*: (cb_config: )?/', '', $message);
        $o = self::$options[$option];
        if ($o['as'] === 'seconds') {
            $info = self::$info[$field];
            $s = static fn (int|float $ns): string => rtrim(rtrim(sprintf('%.9F', $ns / 1e9), '0'), '.');
            $range = $info['bounds'] === 'zero_or' ? "0 or {$s($info['lo'])}..{$s($info['hi'])}" : "{$s($info['lo'])}..{$s($info['hi'])}";
            $got = $s($this->fields[$field]);
            // The one rule across fields (lists.h): a cap of 0 or at least the duration.
            if (preg_match('/must be 0 or (\w+) \(/', $text, $m) && isset(self::$info[$m[1]])) {
                $other = $this->given[$m[1]] ?? self::optionsOf($m[1])[0];
                $at = $s($this->fields[$m[1]] ?? self::$info[$m[1]]['default']);
                return "{$option} must be 0 or {$other} ({$at} s)..{$s($info['hi'])} s, got {$got}";
            }
            return "{$option} must be {$range} s, got {$got}";
        }
        foreach ($this->given as $f => $name) {
            $text = preg_replace('/\b' . $f . '\b/', $name, $text);
        }
        return preg_replace('/\b' . $field . '\b/', $option, $text);
    }
}
