<?php
declare(strict_types=1);

use PHPUnit\Framework\TestCase;

require_once __DIR__ . '/ConformanceRunner.php';

/**
 * Every step stream (LB_CONFORMANCE_STEPS: the directory the build writes
 * them to) through ConformanceRunner; the mismatch self-tests must
 * mismatch, or the runner could not fail.
 */
final class ConformanceTest extends TestCase
{
    private static function dir(): string
    {
        $dir = getenv('LB_CONFORMANCE_STEPS');
        if ($dir === false || !is_dir($dir)) {
            throw new \RuntimeException('LB_CONFORMANCE_STEPS must name the step streams\' directory (ctest -L php sets it)');
        }
        return $dir;
    }

    /** @return array<string, array{string}> */
    public static function streams(): array
    {
        $out = [];
        foreach (glob(self::dir() . '/*.steps') as $f) {
            $out[basename($f, '.steps')] = [$f];
        }
        return $out;
    }

    /** @return array<string, array{string}> */
    public static function mismatches(): array
    {
        $out = [];
        foreach (glob(self::dir() . '/selftest/mismatch/*.steps') as $f) {
            $out[basename($f, '.steps')] = [$f];
        }
        return $out;
    }

    /** @dataProvider streams */
    public function testTheScenariosPassThroughThePhpApi(string $stream): void
    {
        [$scenarios, $mismatches] = ConformanceRunner::run($stream);
        $this->assertGreaterThan(0, $scenarios);
        $this->assertSame([], $mismatches);
    }

    /** @dataProvider mismatches */
    public function testAMismatchIsReported(string $stream): void
    {
        [, $mismatches] = ConformanceRunner::run($stream);
        $this->assertNotEmpty($mismatches, 'the runner found no mismatch in a stream made to mismatch');
    }

    public function testThereAreStreams(): void
    {
        $this->assertGreaterThanOrEqual(20, count(self::streams()));
        $this->assertNotEmpty(self::mismatches());
    }

    public function testAFileThatIsNotAStreamIsRefused(): void
    {
        $this->expectException(\UnexpectedValueException::class);
        ConformanceRunner::run(__FILE__);
    }
}
