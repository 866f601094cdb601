'use strict';
// Names the package's classes share and users do not see.
module.exports = {
  kNative: Symbol('lazybreaker.native'),
  kTrack: Symbol('lazybreaker.track'),
  kDispatch: Symbol('lazybreaker.dispatch'),
  kDeliver: Symbol('lazybreaker.deliver'),
  kEvents: Symbol('lazybreaker.events'),
  kReport: Symbol('lazybreaker.report'),
  kHandle: Symbol('lazybreaker.handle'),
  kTicket: Symbol('lazybreaker.ticket'),
  kTracked: Symbol('lazybreaker.tracked'),
  kObserved: Symbol('lazybreaker.observed'),
  kSaw: Symbol('lazybreaker.saw'),
  kRestart: Symbol('lazybreaker.restart'),
};
