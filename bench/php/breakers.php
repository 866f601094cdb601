<?php
// The breakers bench/php compares, each as a protected call of a closure
// that succeeds: [callable, queries per call]. bench.php calls one in a
// loop from php-cli; fpm-app.php once per request under php-fpm.
//
// The competitors are the two shared breakers PHP users run today, as they
// describe them: a database table read before every call and written after
// it (pdo_sqlite in WAL mode; a row per circuit with name UNIQUE, state,
// failure_count, failure_threshold, open_until, half_open_at,
// last_failure_at, updated_at), and ganesha-style counters in Redis (a GET
// of the circuit's state before the call, an INCR of its outcome's counter
// after). 'none' is the call alone. Connections are persistent under
// php-fpm (PDO::ATTR_PERSISTENT, Redis::pconnect), as the extension's file
// is.
declare(strict_types=1);

function lb_bench_breaker(string $mode, string $target, bool $persistent = false): array
{
    $work = static fn (): bool => true;

    switch ($mode) {
        case 'lazybreaker':
            require_once getenv('LB_PHP_CLASSES') ?: __DIR__ . '/../../bindings/php/src/autoload.php';
            $breaker = LazyBreaker\Registry::open(['path' => $target, 'create' => true])
                ->getOrCreate('bench', new LazyBreaker\Config(failureThreshold: 5, timeoutSeconds: 30));
            $one = static fn () => $breaker->call($work);
            $queries = 0;
            break;
        case 'sqlite':
            $db = new PDO("sqlite:{$target}", null, null, [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION, PDO::ATTR_PERSISTENT => $persistent]);
            $db->exec('PRAGMA busy_timeout = 120000');
            $db->exec('PRAGMA journal_mode = WAL');
            $db->exec('BEGIN IMMEDIATE');
            $db->exec('CREATE TABLE IF NOT EXISTS circuit_breakers (name TEXT UNIQUE NOT NULL, state TEXT NOT NULL,
                failure_count INTEGER NOT NULL, failure_threshold INTEGER NOT NULL, open_until REAL, half_open_at REAL,
                last_failure_at REAL, updated_at REAL)');
            $db->exec("INSERT OR IGNORE INTO circuit_breakers VALUES ('bench', 'closed', 0, 5, NULL, NULL, NULL, 0)");
            $db->exec('COMMIT');
            // A write in WAL mode from a connection whose snapshot is stale
            // fails at once (SQLITE_BUSY, no busy wait): each write takes the
            // write lock first, as SQLite's documentation advises.
            $write = static function (PDOStatement $st, array $args) use ($db): void {
                $db->exec('BEGIN IMMEDIATE');
                $st->execute($args);
                $db->exec('COMMIT');
            };
            $read = $db->prepare('SELECT state, failure_count, failure_threshold, open_until FROM circuit_breakers WHERE name = ?');
            $toHalfOpen = $db->prepare("UPDATE circuit_breakers SET state = 'half_open', half_open_at = ?, updated_at = ? WHERE name = ? AND state = 'open'");
            $ok = $db->prepare("UPDATE circuit_breakers SET state = 'closed', failure_count = 0, updated_at = ? WHERE name = ?");
            $bad = $db->prepare("UPDATE circuit_breakers SET failure_count = failure_count + 1, last_failure_at = ?, updated_at = ?,
                state = CASE WHEN failure_count + 1 >= failure_threshold THEN 'open' ELSE state END,
                open_until = CASE WHEN failure_count + 1 >= failure_threshold THEN ? ELSE open_until END WHERE name = ?");
            $one = static function () use ($read, $toHalfOpen, $ok, $bad, $work, $write) {
                $now = microtime(true);
                $read->execute(['bench']);
                $row = $read->fetch(PDO::FETCH_ASSOC);
                $read->closeCursor();
                if ($row['state'] === 'open') {
                    if ($row['open_until'] > $now) {
                        throw new RuntimeException('open');
                    }
                    $write($toHalfOpen, [$now, $now, 'bench']);
                }
                try {
                    $result = $work();
                } catch (Throwable $e) {
                    $write($bad, [$now, $now, $now + 30, 'bench']);
                    throw $e;
                }
                $write($ok, [$now, 'bench']);
                return $result;
            };
            $queries = 2;
            break;
        case 'redis':
            $redis = new Redis();
            $persistent ? $redis->pconnect('127.0.0.1', (int) $target) : $redis->connect('127.0.0.1', (int) $target);
            $one = static function () use ($redis, $work) {
                $openUntil = $redis->get('cb:bench:open_until');
                if ($openUntil !== false && (float) $openUntil > microtime(true)) {
                    throw new RuntimeException('open');
                }
                try {
                    $result = $work();
                } catch (Throwable $e) {
                    $redis->incr('cb:bench:failure');
                    throw $e;
                }
                $redis->incr('cb:bench:success');
                return $result;
            };
            $queries = 2;
            break;
        case 'none':
            $one = $work;
            $queries = 0;
            break;
        default:
            throw new InvalidArgumentException("unknown breaker {$mode}");
    }
    return [$one, $queries];
    }

