#!/bin/sh
# `npm start`: svc from the bundle that `npm run build` writes (docs/OPERATIONS.md "Startup").
# Without it, one line says what to do instead of Node's MODULE_NOT_FOUND stack. `exec`, here and in
# package.json, so node replaces each shell and a SIGTERM reaches svc itself (its drain needs it).
if [ ! -f dist/main.js ]; then
  echo 'svc: dist/main.js is missing; run `npm run build` first' >&2
  exit 1
fi
exec node dist/main.js "$@"
