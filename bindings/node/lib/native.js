'use strict';
// The addon (src/*.c): LAZYBREAKER_ADDON names its file; else it sits in
// build/ beside lib/, where a built package puts it.
const path = require('node:path');

const file = process.env.LAZYBREAKER_ADDON || path.join(__dirname, '..', 'build', 'lazybreaker.node');
let binding;
try {
  binding = require(file);
} catch (cause) {
  throw new Error(`lazybreaker: cannot load the addon ${file} (build it with CMake, target ` +
                  `lazybreaker_node, or set LAZYBREAKER_ADDON): ${cause.message}`, { cause });
}
module.exports = binding;
