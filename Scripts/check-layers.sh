#!/usr/bin/env bash
# The layers hold (arrows point down): only LMDBKit imports CLMDB; in LMDBRealm only Storage/
# imports LMDBKit, and Storage/ extends no type of the layers above it. Prints each crossing
# and exits 1 if there is any. Run by `make test`.
set -u
cd "$(dirname "$0")/.."
status=0
import_of() { grep -rlE "^[[:space:]]*(@[A-Za-z_]+(\([^)]*\))?[[:space:]]+)*((public|package|internal|fileprivate|private)[[:space:]]+)?import[[:space:]]+$1([[:space:]]|$)" "${@:2}" --include='*.swift'; }

for file in $(import_of CLMDB Sources | grep -v '^Sources/LMDBKit/'); do
    echo "layer check: $file imports CLMDB; only LMDBKit may (add a package API to LMDBKit)" >&2
    status=1
done
for file in $(import_of LMDBKit Sources/LMDBRealm | grep -v '^Sources/LMDBRealm/Storage/'); do
    echo "layer check: $file imports LMDBKit; only Sources/LMDBRealm/Storage/ may (go through StoreView or WriteSession)" >&2
    status=1
done
for hit in $(grep -rnE '^extension (Realm|Results|Object|NotificationToken)\b' Sources/LMDBRealm/Storage --include='*.swift' | cut -d: -f1,2); do
    echo "layer check: $hit extends a type of a layer above Storage; declare a protocol or hook in Storage instead" >&2
    status=1
done
[ "$status" = 0 ] && echo "layer check: the layers hold"
exit "$status"
