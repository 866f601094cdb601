// lazybreaker for Node.js, as an ES module: the CommonJS entry's exports.
import lazybreaker from './index.cjs';

export const {
  CircuitBreaker, Permit, Registry, CircuitOpenError, TimeoutError, version,
  httpBreakerName, shed, fastifyShed, wrapFetch, interceptor,
} = lazybreaker;
export default lazybreaker;
