#!/bin/sh
# debian-module.sh WORK SOURCE MODULE IMPORT...: vets and tests the Go
# module bindings/go/MODULE (a module of its own, beside the
# standard-library-only package) against Debian's Go packages in
# /usr/share/gocode, offline, in GOPATH mode as Debian builds Go: WORK's
# GOPATH holds the repository under its import path, the second GOPATH
# entry is Debian's. Each IMPORT must be there (else skipped, 77, saying
# which package to install; a failure under CI=true). Run under the go
# commands' environment (cmake/go.cmake's LB_GO_ENV).
set -eu
work=$1
source=$2
module=$3
shift 3
for import in "$@"; do
  if [ ! -d "/usr/share/gocode/src/$import" ]; then
    echo "debian-module.sh: $module needs $import from Debian (packaging/install-deps.sh go)" >&2
    [ "${CI:-}" != true ] || exit 1
    echo "SKIPPED: $module" >&2
    exit 77
  fi
done
gopath=$work/debian-path
mkdir -p "$gopath/src/github.com/lazybreaker"
ln -sfn "$source" "$gopath/src/github.com/lazybreaker/lazybreaker"
cd "$gopath/src/github.com/lazybreaker/lazybreaker/bindings/go/$module"
export GO111MODULE=off GOFLAGS= GOPATH="$gopath:/usr/share/gocode"
go vet .
go test -count=1 -v .
