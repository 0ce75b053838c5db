#!/usr/bin/env bash
# The layers hold (arrows point down). Most of it the compiler enforces: the layers are targets
# (LMDBKit, LMDBRealmFormat, LMDBRealmStorage, LMDBRealm), and none can use what its dependents
# declare. This checks what the compiler cannot see: that only CLMDB's shim includes lmdb.h
# (CHotPaths, the other C target, must not), that only LMDBKit imports CLMDB, that of
# LMDBRealm's layers only LMDBRealmStorage imports LMDBKit, and, inside the LMDBRealm target,
# that no code below Realm/ names the Realm type. Prints each crossing and exits 1 if there is
# any. Run by `make test`.
#
# It also checks that the storage target changes the file only through StoreWriter (below).
set -u
cd "$(dirname "$0")/.."
status=0
import_of() { grep -rlE "^[[:space:]]*(@[A-Za-z_]+(\([^)]*\))?[[:space:]]+)*((public|package|internal|fileprivate|private)[[:space:]]+)?import[[:space:]]+$1([[:space:]]|$)" "${@:2}" --include='*.swift'; }

for file in $(grep -rlE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]lmdb\.h[>"]' Sources --include='*.c' --include='*.h' | grep -v '^Sources/CLMDB/'); do
    echo "layer check: $file includes lmdb.h; only CLMDB's shim may (LMDBKit wraps LMDB for everything else)" >&2
    status=1
done
for file in $(import_of CLMDB Sources | grep -v '^Sources/LMDBKit/'); do
    echo "layer check: $file imports CLMDB; only LMDBKit may (add a package API to LMDBKit)" >&2
    status=1
done
for file in $(import_of LMDBKit Sources/LMDBRealm Sources/LMDBRealmFormat); do
    echo "layer check: $file imports LMDBKit; only LMDBRealmStorage may (go through StoreView or WriteSession)" >&2
    status=1
done
# Every change a write makes to the file passes through StoreWriter, which moves the realm's
# generation on so that no borrowed record is read stale: only its file takes LMDBKit's
# writing view of a transaction (`unsafeWrite`, `UnsafeWriteTransaction`).
for file in $(grep -rlE '\bunsafeWrite\b|\bUnsafeWriteTransaction\b' Sources --include='*.swift' | grep -v '^Sources/LMDBKit/' | grep -vx 'Sources/LMDBRealmStorage/StoreWriter.swift'); do
    echo "layer check: $file writes through LMDBKit directly; change the file through WriteSession.writer (StoreWriter)" >&2
    status=1
done
# Inside the LMDBRealm target, below Realm/ (Query, Schema) no code names the Realm type: what
# those folders need from a realm is a protocol (QueryContext; the storage target's StoreReader,
# WriteSessionObserver, CommitAnnouncer; Object's field accessors in Schema/Object+Managed.swift
# reach the store through the storage target's ObjectStore). The one exception is Object's
# `realm` property, RealmSwift's API, and the stored reference behind it. Comments and string
# literals are ignored.
for dir in Query Schema; do
    for file in $(find "Sources/LMDBRealm/$dir" -name '*.swift'); do
        sed -E -e 's#^[[:space:]]*//.*##' -e 's#"([^"\\]|\\.)*"##g' "$file" | grep -nw 'Realm' |
            grep -vE '^[0-9]+:.*(final var _realm: Realm\?|public var realm: Realm\? \{ _realm \})$' |
            while IFS= read -r hit; do
                echo "layer check: $file:${hit%%:*} names Realm from below it; declare a protocol in $dir/ instead" >&2
                echo x
            done
    done
done | grep -q x && status=1
[ "$status" = 0 ] && echo "layer check: the layers hold"
exit "$status"
