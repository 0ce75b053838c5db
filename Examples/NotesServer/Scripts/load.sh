#!/usr/bin/env bash
# Load figures of NotesServer on both backends (LMDBRealm, and SQLite through GRDB), written to
# Examples/NotesServer/results/latest.md.
#
# For each backend: a fresh store in a temporary directory, seeded with NOTES notes over FOLDERS
# folders (in batches, by `NotesServer seed`); the server on a free loopback port; wrk for
# DURATION each on list (newest 50 of a folder), count, and create; then `NotesServer
# subscribe-bench`: SUBSCRIBERS event streams on one folder and up to COMMITS creates one after
# the other (no more once BUDGET seconds have passed, at least three), timing each from sending
# the create to the last subscriber's event.
#
#     Examples/NotesServer/Scripts/load.sh                 # or: make notes-load
#     DURATION=5s SUBSCRIBERS=200 Examples/NotesServer/Scripts/load.sh
#
# Needs wrk (Debian's package `wrk`; installed with apt-get when run as root). Takes about
# three minutes after the build. Traffic goes to 127.0.0.1 only.
set -euo pipefail

PACKAGE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NOTES="${NOTES:-20000}"
FOLDERS="${FOLDERS:-20}"
DURATION="${DURATION:-10s}"
THREADS="${THREADS:-2}"
CONNECTIONS="${CONNECTIONS:-32}"
SUBSCRIBERS="${SUBSCRIBERS:-1000}"
COMMITS="${COMMITS:-50}"
BUDGET="${BUDGET:-30}"
SWIFT="${SWIFT:-swift}"
OUT="$PACKAGE/results/latest.md"
export FOLDERS

if ! command -v wrk >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "Installing wrk (apt-get)..." >&2
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
    else
        echo "error: wrk is missing. Install it with: sudo apt-get install wrk" >&2
        exit 1
    fi
fi

echo "Building NotesServer (release)..." >&2
"$SWIFT" build -c release --package-path "$PACKAGE" --product NotesServer >&2
BIN="$("$SWIFT" build -c release --package-path "$PACKAGE" --show-bin-path)/NotesServer"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/notes-load.XXXXXX")"
SERVER=""
cleanup() {
    if [ -n "$SERVER" ] && kill -0 "$SERVER" 2>/dev/null; then
        kill -TERM "$SERVER" 2>/dev/null || true
        wait "$SERVER" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

# wrk's requests/s, and its 99th percentile latency in milliseconds.
requests_per_second() { awk '/^Requests\/sec:/ { print $2 }' "$1"; }
p99_ms() {
    awk '$1 == "99%" {
        v = $2
        if (v ~ /us$/) { sub(/us$/, "", v); v = v / 1000 }
        else if (v ~ /ms$/) { sub(/ms$/, "", v) }
        else if (v ~ /s$/) { sub(/s$/, "", v); v = v * 1000 }
        printf "%.2f", v
    }' "$1"
}
# Non-2xx answers and socket errors, when wrk reports any.
wrk_errors() { grep -E "Non-2xx|Socket errors" "$1" | sed 's/^ *//' | paste -sd ';' - || true; }
field() { tr ' ' '\n' < "$2" | awk -F= -v k="$1" '$1 == k { print $2 }'; }

run_backend() {
    local backend="$1" file
    case "$backend" in
        lmdbrealm) file="$WORK/$backend/notes.realm" ;;
        grdb) file="$WORK/$backend/notes.sqlite" ;;
    esac
    mkdir -p "$WORK/$backend"
    echo "== $backend" >&2
    "$BIN" seed --backend "$backend" --path "$file" --notes "$NOTES" --folders "$FOLDERS" >&2

    "$BIN" serve --backend "$backend" --path "$file" --port 0 --port-file "$WORK/$backend.port" \
        --log-level warning &
    SERVER=$!
    for _ in $(seq 1 300); do
        [ -s "$WORK/$backend.port" ] && break
        kill -0 "$SERVER" 2>/dev/null || { echo "error: the $backend server exited" >&2; exit 1; }
        sleep 0.1
    done
    [ -s "$WORK/$backend.port" ] || { echo "error: the $backend server did not start" >&2; exit 1; }
    local base="http://127.0.0.1:$(cat "$WORK/$backend.port")"

    local wrk=(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency)
    echo "list" >&2
    "${wrk[@]}" "$base/folders/folder-3/notes?limit=50" > "$WORK/$backend-list.txt"
    echo "count" >&2
    "${wrk[@]}" "$base/folders/folder-3/count" > "$WORK/$backend-count.txt"
    echo "create" >&2
    "${wrk[@]}" -s "$PACKAGE/Scripts/create.lua" "$base/notes" > "$WORK/$backend-create.txt"
    echo "subscribe-bench ($SUBSCRIBERS subscribers, $COMMITS commits)" >&2
    "$BIN" subscribe-bench --port "${base##*:}" --folder folder-7 --subscribers "$SUBSCRIBERS" \
        --commits "$COMMITS" --budget "$BUDGET" > "$WORK/$backend-sse-output.txt"
    grep '^subscribers=' "$WORK/$backend-sse-output.txt" > "$WORK/$backend-sse.txt"
    grep '^slowest:' "$WORK/$backend-sse-output.txt" > "$WORK/$backend-sse-slowest.txt" || true
    cat "$WORK/$backend-sse-output.txt" >&2
    curl -fsS "$base/metrics" > "$WORK/$backend-metrics.txt"

    kill -TERM "$SERVER"
    wait "$SERVER"
    SERVER=""
}

for backend in lmdbrealm grdb; do run_backend "$backend"; done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
gauge() { awk -v k="$1" '$1 == k { printf "%.0f", $2 }' "$2"; }
mean_commit_ms() {
    awk '$1 == "notes_commit_duration_seconds_sum" { s = $2 } $1 == "notes_commit_duration_seconds_count" { c = $2 }
        END { if (c > 0) printf "%.2f", s / c * 1000; else print "n/a" }' "$1"
}

{
    echo "# NotesServer load figures"
    echo
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores ($(uname -m)), release build, one run on a shared machine."
    echo "$NOTES notes over $FOLDERS folders seeded before each run; wrk \`-t$THREADS -c$CONNECTIONS -d$DURATION\`;"
    echo "server and load generator on the same machine, over 127.0.0.1."
    echo
    echo "| Workload | LMDBRealm req/s | LMDBRealm p99 ms | GRDB req/s | GRDB p99 ms | req/s LMDBRealm ÷ GRDB |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: |"
    for op in list count create; do
        case "$op" in
            list) label='`GET /folders/folder-3/notes?limit=50`' ;;
            count) label='`GET /folders/folder-3/count`' ;;
            create) label='`POST /notes`' ;;
        esac
        l="$WORK/lmdbrealm-$op.txt"
        g="$WORK/grdb-$op.txt"
        echo "| $label | $(requests_per_second "$l") | $(p99_ms "$l") | $(requests_per_second "$g") | $(p99_ms "$g") | $(ratio "$(requests_per_second "$l")" "$(requests_per_second "$g")") |"
    done
    echo
    echo "Server-sent events: $SUBSCRIBERS subscribers of \`folder-7\`, then creates in that folder one after the other"
    echo "(up to $COMMITS, none begun after ${BUDGET} s), each timed from sending \`POST /notes\` to the moment the last"
    echo "subscriber has its \`change\` event (p50, p99, max); \`created_p50_ms\`: to the answer of the \`POST\` (a durable"
    echo "commit); \`first_p50_ms\`: to the first subscriber's event; \`commit_p50_ms\`, \`commit_p99_ms\`: from the \`POST\`'s"
    echo "answer to the last subscriber's event (the fan-out after the commit, without the commit's own fsync);"
    echo "\`open_s\`: the time to open every stream and receive its \`initial\` event. The subscribers read their streams on"
    echo "plain NIO channels, in one process with the creates."
    echo
    echo "| | LMDBRealm | GRDB | GRDB ÷ LMDBRealm |"
    echo "| --- | ---: | ---: | ---: |"
    for key in commits p50_ms p99_ms max_ms created_p50_ms first_p50_ms commit_p50_ms commit_p99_ms open_s; do
        l="$(field "$key" "$WORK/lmdbrealm-sse.txt")"
        g="$(field "$key" "$WORK/grdb-sse.txt")"
        if [ "$key" = commits ]; then
            echo "| commits measured | $l | $g | |"
        else
            echo "| $key | $l | $g | $(ratio "$g" "$l") |"
        fi
    done
    echo
    echo "Slowest create, from sending it: LMDBRealm $(sed 's/^slowest: //' "$WORK/lmdbrealm-sse-slowest.txt");"
    echo "GRDB $(sed 's/^slowest: //' "$WORK/grdb-sse-slowest.txt")."
    echo
    echo "Store after the run (from \`/metrics\`):"
    echo
    echo "| | LMDBRealm | GRDB |"
    echo "| --- | ---: | ---: |"
    for key in notes_store_file_size_bytes notes_store_used_size_bytes; do
        echo "| \`$key\` | $(gauge "$key" "$WORK/lmdbrealm-metrics.txt") | $(gauge "$key" "$WORK/grdb-metrics.txt") |"
    done
    echo "| mean time to a durable commit, ms (\`notes_commit_duration_seconds\`) | $(mean_commit_ms "$WORK/lmdbrealm-metrics.txt") | $(mean_commit_ms "$WORK/grdb-metrics.txt") |"
    errors=""
    for backend in lmdbrealm grdb; do
        for op in list count create; do
            e="$(wrk_errors "$WORK/$backend-$op.txt")"
            if [ -n "$e" ]; then errors="$errors"$'\n'"- $backend $op: $e"; fi
        done
    done
    if [ -n "$errors" ]; then
        echo
        echo "wrk reported:$errors"
    fi
} > "$OUT"

cat "$OUT"
