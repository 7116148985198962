#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-compare.sh - host tests of compare-verdicts.sh: it must accept a
# well-formed document with the expected verdicts and reject each kind of
# defect (wrong verdict, missing or repeated case, bad plan, misnumbered
# results, wrong policy, wrong exit status).

set -euo pipefail

readonly prog=${0##*/}
compare=$(cd "$(dirname "$0")" && pwd)/compare-verdicts.sh
readonly compare

case "${1:-}" in
-h | --help) echo "usage: $prog"; echo "Host tests of compare-verdicts.sh."; exit 0 ;;
'') ;;
*) echo "usage: $prog" >&2; exit 2 ;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/expected" <<'EOF'
# comment
policy always-sync
status 0
alpha ok
beta skip
gamma timeout
EOF

good='TAP version 13
1..3
# policy: always-sync
ok 1 alpha
ok 2 beta # SKIP policy always-sync
# stack: foo
not ok 3 gamma # TIMEOUT 10s
# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:1 error:0'

passed=0
failed=0

# expect <accept|reject> <what> <exit status> <document>
expect()
{
	local want=$1 what=$2 status=$3 got

	printf '%s\n' "$4" > "$tmp/doc"
	if "$compare" --status "$status" "$tmp/doc" "$tmp/expected" > "$tmp/out"; then
		got=accept
	else
		got=reject
	fi
	if [ "$got" = "$want" ]; then
		echo "PASS $want: $what"
		passed=$((passed + 1))
	else
		echo "FAIL $what: want $want, got $got"
		sed 's/^/    /' "$tmp/out"
		failed=$((failed + 1))
	fi
}

expect accept "well formed, all as expected" 0 "$good"
expect accept "KTAP version 1 header" 0 "${good/TAP version 13/KTAP version 1}"
expect reject "wrong verdict" 0 "${good/ok 1 alpha/not ok 1 alpha}"
expect reject "skip taken for ok" 0 "${good/ # SKIP policy always-sync/}"
expect reject "timeout taken for plain failure" 0 "${good/ # TIMEOUT 10s/}"
expect reject "missing case" 0 "${good/ok 2 beta # SKIP policy always-sync/}"
expect reject "case twice" 0 "$good
ok 4 alpha"
expect reject "unknown case" 0 "${good/alpha/delta}"
expect reject "plan mismatch" 0 "${good/1..3/1..4}"
expect reject "no plan" 0 "${good/1..3/}"
expect reject "no version line" 0 "${good/TAP version 13/}"
expect reject "misnumbered" 0 "${good/ok 2 beta/ok 5 beta}"
expect reject "wrong policy" 0 "${good/policy: always-sync/policy: skip-if-unused}"
expect reject "wrong exit status" 1 "$good"
expect reject "empty document" 0 ""

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
