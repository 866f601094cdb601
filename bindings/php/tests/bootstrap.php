<?php
// PHPUnit's bootstrap for the PHP binding's tests: the classes of this
// tree (the extension is loaded by CTest's `php -d extension=...`).
declare(strict_types=1);

if (!extension_loaded('lazybreaker')) {
    fwrite(STDERR, "the lazybreaker extension is not loaded: run through ctest -L php\n");
    exit(2);
}
require_once __DIR__ . '/../src/autoload.php';
