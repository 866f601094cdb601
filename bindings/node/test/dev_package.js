'use strict';
// The tests' npm packages (dev-dependencies.json), installed by the fixture
// node.dev_dependencies on NODE_PATH. A missing one skips the tests that
// need it, saying so, except under CI=true, where it is a failure.
function devPackage(name) {
  try {
    return { module: require(name), missing: null };
  } catch (error) {
    if (error.code !== 'MODULE_NOT_FOUND' || process.env.CI === 'true') throw error;
    return { module: null, missing: `${name} is not installed (see node.dev_dependencies)` };
  }
}

module.exports = { devPackage };
