<?php
// One process of bench/php: N protected calls (a closure that succeeds)
// through one breaker, and the time they took, as "ns_per_call queries".
//
//   php -d extension=lazybreaker.so bench.php lazybreaker|sqlite|redis N TARGET
//
// TARGET: the registry file (lazybreaker), the SQLite database (sqlite),
// or the Redis port (redis). The competitors are the two shared breakers
// PHP users run today, as they describe them: a database table read before
// every call and written after it (pdo_sqlite; a row per circuit with
// name UNIQUE, state, failure_count, failure_threshold, open_until,
// half_open_at, last_failure_at, updated_at), and ganesha-style counters in
// Redis (a GET of the circuit's state before the call, an INCR of its
// outcome's counter after).
declare(strict_types=1);

[, $mode, $n, $target] = $argv + [null, null, null, null];
$n = (int) $n;
$work = static fn (): bool => true;

switch ($mode) {
    case 'lazybreaker':
        require_once __DIR__ . '/../../bindings/php/src/autoload.php';
        $breaker = LazyBreaker\Registry::open(['path' => $target, 'create' => true])
            ->getOrCreate('bench', new LazyBreaker\Config(failureThreshold: 5, timeoutSeconds: 30));
        $one = static fn () => $breaker->call($work);
        $queries = 0;
        break;
    case 'sqlite':
        $db = new PDO("sqlite:{$target}", null, null, [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]);
        $db->exec('PRAGMA busy_timeout = 10000');
        $db->exec('PRAGMA journal_mode = WAL');
        $db->exec('CREATE TABLE IF NOT EXISTS circuit_breakers (name TEXT UNIQUE NOT NULL, state TEXT NOT NULL,
            failure_count INTEGER NOT NULL, failure_threshold INTEGER NOT NULL, open_until REAL, half_open_at REAL,
            last_failure_at REAL, updated_at REAL)');
        $db->exec("INSERT OR IGNORE INTO circuit_breakers VALUES ('bench', 'closed', 0, 5, NULL, NULL, NULL, 0)");
        $read = $db->prepare('SELECT state, failure_count, failure_threshold, open_until FROM circuit_breakers WHERE name = ?');
        $toHalfOpen = $db->prepare("UPDATE circuit_breakers SET state = 'half_open', half_open_at = ?, updated_at = ? WHERE name = ? AND state = 'open'");
        $ok = $db->prepare("UPDATE circuit_breakers SET state = 'closed', failure_count = 0, updated_at = ? WHERE name = ?");
        $bad = $db->prepare("UPDATE circuit_breakers SET failure_count = failure_count + 1, last_failure_at = ?, updated_at = ?,
            state = CASE WHEN failure_count + 1 >= failure_threshold THEN 'open' ELSE state END,
            open_until = CASE WHEN failure_count + 1 >= failure_threshold THEN ? ELSE open_until END WHERE name = ?");
        $one = static function () use ($read, $toHalfOpen, $ok, $bad, $work) {
            $now = microtime(true);
            $read->execute(['bench']);
            $row = $read->fetch(PDO::FETCH_ASSOC);
            $read->closeCursor();
            if ($row['state'] === 'open') {
                if ($row['open_until'] > $now) {
                    throw new RuntimeException('open');
                }
                $toHalfOpen->execute([$now, $now, 'bench']);
            }
            try {
                $result = $work();
            } catch (Throwable $e) {
                $bad->execute([$now, $now, $now + 30, 'bench']);
                throw $e;
            }
            $ok->execute([$now, 'bench']);
            return $result;
        };
        $queries = 2;
        break;
    case 'redis':
        $redis = new Redis();
        $redis->connect('127.0.0.1', (int) $target);
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
    default:
        fwrite(STDERR, "usage: bench.php lazybreaker|sqlite|redis N TARGET\n");
        exit(2);
}

for ($i = 0; $i < min(1000, $n); $i++) {
    $one(); // warm up
}
$t0 = hrtime(true);
for ($i = 0; $i < $n; $i++) {
    $one();
}
$elapsed = hrtime(true) - $t0;
printf("%.1f %d\n", $elapsed / $n, $queries);
