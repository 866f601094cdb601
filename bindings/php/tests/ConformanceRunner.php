<?php
declare(strict_types=1);

use LazyBreaker\{Breaker, Config, Registry};

/**
 * The PHP runner of the conformance scenarios: it interprets the step
 * streams that lb_conformance writes at build time from
 * tests/conformance/*.scn (tests/conformance/README.md, "Step streams")
 * through the classes of namespace LazyBreaker as a PHP user calls them,
 * each scenario on a fresh manual-clock registry. Config fields are set by
 * their PHP option (Config::options(), derived from the C names): a
 * duration by its exact …Ns option.
 */
final class ConformanceRunner
{
    private ?Registry $registry = null;
    private ?Breaker $breaker = null;
    /** @var array<string, int|float|string> */
    private array $options = [];
    /** @var array<string, string> C field => the default the stream expects */
    private array $defaults = [];
    /** @var array<string, \LazyBreaker\Permit> */
    private array $permits = [];
    private string $name = '';

    /**
     * Runs one stream; returns [scenarios, mismatches (SOURCE:L: mismatch: ...)].
     * Throws UnexpectedValueException for a file that is not a step stream
     * or a step it does not know.
     * @return array{int, list<string>}
     */
    public static function run(string $path): array
    {
        $lines = file($path, FILE_IGNORE_NEW_LINES);
        if ($lines === false || !preg_match('/^lbsteps 1 (.+)$/', $lines[0] ?? '', $m)) {
            throw new \UnexpectedValueException("{$path}: not a step stream of version 1");
        }
        $source = $m[1];
        $scenarios = 0;
        $mismatches = [];
        $s = null;
        $skip = false;
        foreach (array_slice($lines, 1) as $line) {
            $t = explode(' ', $line);
            if ($t[0] === 'scenario') {
                [$s, $skip] = [new self(), false];
            }
            if ($t[0] === 'end') {
                $s->registry?->close(); // every permit left is silent now
                $scenarios++;
                continue;
            }
            if ($skip) {
                continue; // after a mismatch, the rest of the scenario is skipped
            }
            $method = 'step' . str_replace('_', '', ucwords($t[0], '_'));
            if (!method_exists($s, $method)) {
                throw new \UnexpectedValueException("{$path}: not a step: {$line}");
            }
            try {
                $why = $s->$method($t);
            } catch (\Throwable $e) {
                $why = get_class($e) . ': ' . $e->getMessage();
            }
            if ($why !== null) {
                $mismatches[] = "{$source}:{$t[1]}: mismatch: {$t[0]}: {$why}";
                $skip = true;
            }
        }
        return [$scenarios, $mismatches];
    }

    private static function expect(string $want, string $got, string $what = ''): ?string
    {
        return $want === $got ? null : "{$what}expected {$want}, got {$got}";
    }

    private function stepScenario(array $t): ?string
    {
        $this->registry = Registry::manualClock(['capacity' => 1]);
        $this->name = $t[2];
        return null;
    }

    private function stepConfig(array $t): ?string
    {
        [, , $field, $value, $how] = $t;
        if ($how === 'default') {
            $this->defaults[$field] = $value;
            return null;
        }
        $options = Config::optionsOf($field);
        $exact = array_values(array_filter($options, static fn ($o) => str_ends_with($o, 'Ns')))[0] ?? $options[0] ?? null;
        if ($exact === null) {
            return "no option for the field {$field}";
        }
        $info = \lb_php_config_fields()[$field];
        $this->options[$exact] = match (true) {
            $field === 'policy' => $value,
            $info['type'] === 'double' => (float) $value,
            default => (int) $value,
        };
        return null;
    }

    private function stepAdvance(array $t): ?string
    {
        $this->registry->advanceNs((int) $t[2]);
        return null;
    }

    private function stepCreate(array $t): ?string
    {
        $this->breaker = $this->registry->create($this->name, new Config(...$this->options));
        // The binding's defaults are the library's: read back, each field
        // the scenario left alone has the value the stream says.
        $fields = $this->breaker->fields();
        foreach ($this->defaults as $field => $want) {
            if ($field === 'half_open_timeout_ns' && $want === '0') {
                continue; // 0 reads back as the open duration it stands for
            }
            if (abs((float) $fields[$field] - (float) $want) > 1e-12) {
                return "the default of {$field}: expected {$want}, got {$fields[$field]}";
            }
        }
        return null;
    }

    private function stepAllow(array $t): ?string
    {
        $p = $this->breaker->tryAcquire();
        if ($p !== null) {
            $this->permits[$t[3] ?? ('#' . count($this->permits))] = $p;
        }
        $got = $p === null ? 'rejected' : 'ok';
        return $got === $t[2] ? null : "expected {$t[2]}, got {$got} ({$this->breaker->state()})";
    }

    private function stepDone(array $t): ?string
    {
        $p = $this->permits[$t[2]];
        if ($p->isReported()) { // the same ticket again, as the library sees it
            \cb_done($this->breaker->handle(), $p->ticket(), Breaker::outcome($t[3]));
            return null;
        }
        match ($t[3]) {
            'success' => $p->success(),
            'failure' => $p->failure(),
            'ignored' => $p->ignore(),
        };
        return null;
    }

    private function stepState(array $t): ?string
    {
        return self::expect($t[2], $this->breaker->state());
    }

    private function stepRetryAfter(array $t): ?string
    {
        $ns = $this->breaker->retryAfterNs();
        return self::expect($t[2], $ns === null ? '18446744073709551615' : (string) $ns);
    }

    private function stepForceOpen(array $t): ?string
    {
        $this->breaker->forceOpen();
        return null;
    }

    private function stepDisable(array $t): ?string
    {
        $this->breaker->disable();
        return null;
    }

    private function stepReset(array $t): ?string
    {
        $this->breaker->reset();
        return null;
    }

    private function stepTrip(array $t): ?string
    {
        $this->breaker->tripNs((int) $t[2]);
        return null;
    }

    private function stepCount(array $t): ?string
    {
        return self::expect($t[3], (string) $this->breaker->stats()[Config::camel($t[2])], "{$t[2]}: ");
    }

    private function stepRate(array $t): ?string
    {
        $got = $this->breaker->stats()[Config::camel($t[2])];
        return abs($got - (float) $t[3]) <= 1e-9 ? null : sprintf('%s: expected %s, got %.17g', $t[2], $t[3], $got);
    }
}
