'use strict';
// The addon (src/*.c), first found of: the file LAZYBREAKER_ADDON names;
// the prebuilt one a packed tarball carries in prebuilds/<platform>-<arch>/;
// build/ beside lib/, where a development build puts it.
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const prebuilt = path.join(root, 'prebuilds', `${process.platform}-${process.arch}`, 'lazybreaker.node');
const file = process.env.LAZYBREAKER_ADDON ||
  (fs.existsSync(prebuilt) ? prebuilt : path.join(root, 'build', 'lazybreaker.node'));
let binding;
try {
  binding = require(file);
} catch (cause) {
  throw new Error(`lazybreaker: cannot load the addon ${file} (build it with CMake, target ` +
                  `lazybreaker_node, or set LAZYBREAKER_ADDON): ${cause.message}`, { cause });
}
module.exports = binding;
