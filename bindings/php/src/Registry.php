<?php
declare(strict_types=1);

namespace LazyBreaker;

/**
 * A registry of breakers: private to the process, or a file that every
 * process opening it shares (PHP-FPM's workers, cbctl, a Java service).
 *
 *     $registry = Registry::open(['path' => '/dev/shm/app.lbr', 'create' => true]);
 *     $breaker = $registry->getOrCreate('payment-gateway/charge', new Config(failureThreshold: 3, timeoutSeconds: 10));
 *
 * A registry opened by path is kept by the extension for the life of the
 * process: a PHP-FPM worker maps the file at its first request and every
 * later request of that worker finds it mapped (as phpredis keeps a
 * persistent connection). close() closes this object: its breakers and
 * permits then throw ClosedException.
 */
final class Registry
{
    private bool $closed = false;
    private static ?Registry $default = null;

    private const FLAGS = ['create' => 'CB_REGISTRY_CREATE', 'exclusive' => 'CB_REGISTRY_EXCLUSIVE', 'anyOwner' => 'CB_REGISTRY_ANY_OWNER'];

    private function __construct(private readonly mixed $native, private readonly bool $owned)
    {
    }

    /**
     * Opens a registry. Options (all optional):
     *   path          string  a registry file every process shares (else a private registry)
     *   create        bool    create the file if missing (mode 0600 unless mode says)
     *   exclusive     bool    with create: fail if it exists
     *   anyOwner      bool    trust a file another user owns
     *   mode          int     the created file's mode, e.g. 0660
     *   capacity      int     how many breakers it holds
     *   eventCapacity int     its event queue
     *   manualClock   bool    a clock that only advance() moves (tests)
     *   persistent    bool    with path: keep it mapped for the process (default true)
     */
    public static function open(array $options = []): self
    {
        $o = new \cb_registry_options();
        $path = null;
        $flags = 0;
        $persistent = true;
        foreach ($options as $key => $value) {
            $fail = static fn (string $want) => new InvalidArgumentException("{$key}: expected {$want}, got " . get_debug_type($value), (string) $key);
            switch ($key) {
                case 'path':
                    is_string($value) || throw $fail('a string');
                    $path = $value;
                    break;
                case 'create':
                case 'exclusive':
                case 'anyOwner':
                    is_bool($value) || throw $fail('a bool');
                    $flags |= $value ? constant(self::FLAGS[$key]) : 0;
                    break;
                case 'manualClock':
                    is_bool($value) || throw $fail('a bool');
                    $o->clock_set($value ? \CB_CLOCK_MANUAL : \CB_CLOCK_MONOTONIC);
                    break;
                case 'persistent':
                    is_bool($value) || throw $fail('a bool');
                    $persistent = $value;
                    break;
                case 'capacity':
                case 'eventCapacity':
                case 'mode':
                    is_int($value) && $value >= 0 && $value <= 4294967295 || throw $fail('an int 0..4294967295');
                    $field = strtolower(preg_replace('/[A-Z]/', '_$0', $key));
                    $o->{$field . '_set'}($value);
                    break;
                default:
                    throw new InvalidArgumentException("unknown option {$key} (the options: path, create, exclusive, anyOwner, mode, capacity, eventCapacity, manualClock, persistent)", (string) $key);
            }
        }
        $o->flags_set($flags); // SWIG's setters: its __set is slower
        try {
            $native = \lb_php_registry_open($o, $path, $persistent);
        } catch (LazyBreakerException $e) {
            $field = \cb_last_error_field();
            if ($e->getCode() === \CB_EINVAL && $field !== null) {
                $option = $field === 'clock' ? 'manualClock' : Config::camel($field);
                throw new InvalidArgumentException($option . ': ' . preg_replace('/^lazybreaker: [A-Z_]+: [^:]*: /', '', $e->getMessage()), $option, $e);
            }
            throw $e;
        }
        return new self($native, $path === null || !$persistent);
    }

    /** A private registry whose clock only advance() moves: for tests. */
    public static function manualClock(array $options = []): self
    {
        return self::open(['manualClock' => true] + $options);
    }

    /** The process's default registry (private, never closed). */
    public static function default(): self
    {
        return self::$default ??= new self(\lb_default_registry(), false);
    }

    /** Moves a manual clock forward (seconds, int or float). */
    public function advance(int|float $seconds): void
    {
        if (!is_finite((float) $seconds) || $seconds < 0 || $seconds * 1e9 >= 9.2e18) {
            throw new InvalidArgumentException('advance: expected seconds, 0 or more, got ' . $seconds, 'seconds');
        }
        $this->advanceNs((int) round($seconds * 1e9));
    }

    /** Moves a manual clock forward by exactly $ns nanoseconds. */
    public function advanceNs(int $ns): void
    {
        \cb_clock_advance($this->native(), $ns);
    }

    /** The registry's clock, in nanoseconds. */
    public function nowNs(): int
    {
        return \cb_clock_now($this->native());
    }

    /**
     * The breaker of that name, created with $config if there is none; of
     * concurrent calls with one name, in any process sharing the file, one
     * creates and the others get its breaker. A breaker of that name with
     * another configuration throws LazyBreakerException (CB_EEXIST).
     */
    public function getOrCreate(string $name, ?Config $config = null): Breaker
    {
        $config ??= new Config();
        try {
            $h = \cb_get_or_create($this->native(), $name, $config->native());
        } catch (LazyBreakerException $e) {
            throw $config->refused($e);
        }
        return new Breaker($this, $h, $name);
    }

    /** A new breaker (anonymous when $name is null); a name taken throws (CB_EEXIST). */
    public function create(?string $name = null, ?Config $config = null): Breaker
    {
        $config ??= new Config();
        try {
            $h = \cb_create($this->native(), $name, $config->native());
        } catch (LazyBreakerException $e) {
            throw $config->refused($e);
        }
        return new Breaker($this, $h, $name ?? '');
    }

    /** The breaker of that name, or null. */
    public function lookup(string $name): ?Breaker
    {
        $h = \cb_lookup($this->native(), $name);
        return $h === 0 ? null : new Breaker($this, $h, $name);
    }

    /** @return array<string, Breaker> every named breaker, by name */
    public function breakers(): array
    {
        $list = new \lb_handle_list($this->native());
        $out = [];
        for ($i = 0, $n = $list->count; $i < $n; $i++) {
            $h = $list->get($i);
            try {
                $name = \lb_name($h);
            } catch (LazyBreakerException) {
                continue; // destroyed meanwhile
            }
            if ($name !== '') {
                $out[$name] = new Breaker($this, $h, $name);
            }
        }
        ksort($out, SORT_STRING);
        return $out;
    }

    /** Every breaker in the Prometheus text format. */
    public function prometheus(): string
    {
        return \lb_prometheus($this->native());
    }

    /**
     * Closes this registry object; its breakers and permits then throw
     * ClosedException. A private registry is freed; a file kept for the
     * process stays mapped for the process's other requests.
     */
    public function close(): void
    {
        if ($this === self::$default) {
            throw new \LogicException('lazybreaker: the default registry is never closed');
        }
        if (!$this->closed && $this->owned) {
            \cb_registry_close($this->native);
        }
        $this->closed = true;
    }

    public function isClosed(): bool
    {
        return $this->closed;
    }

    /** @internal the cb_registry, or ClosedException */
    public function native(): mixed
    {
        if ($this->closed) {
            throw new ClosedException('lazybreaker: the registry is closed');
        }
        return $this->native;
    }

    public function __destruct()
    {
        if (!$this->closed && $this->owned) {
            \cb_registry_close($this->native);
            $this->closed = true;
        }
    }
}
