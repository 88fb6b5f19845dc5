#!/bin/sh
# `npm start`: svc from the bundle that `npm run build` writes (docs/OPERATIONS.md "Startup").
# Without it, one line says what to do instead of Node's MODULE_NOT_FOUND stack. `exec`, here and in
# package.json, so node replaces each shell and a SIGTERM reaches svc itself (its drain needs it).
# --max-semi-space-size=4 (MiB): a young generation sized for svc's short-lived request garbage
# instead of Node's default, which grows each semi-space to 16-32 MiB and keeps it resident
# (docs/BENCHMARKS.md "svc memory and its Node flags"). NODE_OPTIONS still adds to it.
if [ ! -f dist/main.js ]; then
  echo 'svc: dist/main.js is missing; run `npm run build` first' >&2
  exit 1
fi
exec node --max-semi-space-size=4 dist/main.js "$@"
