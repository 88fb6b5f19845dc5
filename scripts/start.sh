#!/bin/sh
# `npm start`: svc from the bundle that `npm run build` writes (docs/OPERATIONS.md "Startup").
# Without it, one line says what to do instead of Node's MODULE_NOT_FOUND stack. `exec`, here and in
# package.json, so node replaces each shell and a SIGTERM reaches svc itself (its drain needs it).
# --max-semi-space-size=4 (MiB): a young generation sized for svc's short-lived request garbage
# instead of Node's default, which grows each semi-space to 16-32 MiB and keeps it resident
# (docs/BENCHMARKS.md "svc memory and its Node flags"). --max-old-space-size=1024 (MiB): V8 lets a
# heap grow past what its last full collection kept by a factor that rises with the heap's limit,
# which Node sizes from the machine's memory: on a large machine, under a request flood, the main
# thread's garbage piled up for tens of seconds before it was collected. A 1 GiB limit keeps the
# factor low (same section); the main thread holds no data of its own that comes near it (the
# catalog lives in its threads). Both size the main thread only: svc clears them before its worker
# threads start, which take their own limits (docs/CATALOG.md "Threads"). NODE_OPTIONS adds to them,
# and a heap flag it names itself is left to it: Node would take the command line's over it.
if [ ! -f dist/main.js ]; then
  echo 'svc: dist/main.js is missing; run `npm run build` first' >&2
  exit 1
fi
# MALLOC_ARENA_MAX=2: glibc gives every thread that allocates (svc's catalog and schema threads,
# libuv's pool) an arena of its own, each keeping freed pages resident; two arenas cost svc about
# 18 MiB less idle RSS at no measured speed cost (same section). The environment's value wins.
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
# NODE_COMPILE_CACHE: Node keeps the code V8 compiled from dist/ in dist/.compile-cache (written by
# the first start after a build, which `npm run build` empties with the rest of dist/), so later
# starts skip most of compiling the bundle (docs/OPERATIONS.md "Startup"). Node skips the cache
# when the directory cannot be written. The environment's value wins.
export NODE_COMPILE_CACHE="${NODE_COMPILE_CACHE:-dist/.compile-cache}"
heap_flags=''
case "${NODE_OPTIONS:-}" in *--max-semi-space-size*) ;; *) heap_flags='--max-semi-space-size=4' ;; esac
case "${NODE_OPTIONS:-}" in *--max-old-space-size*) ;; *) heap_flags="$heap_flags --max-old-space-size=1024" ;; esac
# $heap_flags unquoted: split into its flags (none holds a space).
exec node $heap_flags dist/main.js "$@"
