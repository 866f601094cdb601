<?php
// The classes of namespace LazyBreaker\ (PSR-4: LazyBreaker\Foo\Bar is
// Foo/Bar.php beside this file), for code without Composer:
//   require_once 'LazyBreaker/autoload.php';   (Debian: /usr/share/php)
// With Composer, composer.json's autoload section does the same.
declare(strict_types=1);

spl_autoload_register(static function (string $class): void {
    if (strncmp($class, 'LazyBreaker\\', 12) !== 0) {
        return;
    }
    $file = __DIR__ . '/' . str_replace('\\', '/', substr($class, 12)) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
