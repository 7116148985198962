#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Merge the KTAP documents of successive boots of one suite run into one
# document, as tools/vm-run.sh needs after a case wedged the kernel (or the
# guest died) and the remaining cases ran in a fresh VM.
#
# The first boot's document sets the version line, the plan (every case)
# and the order.  A case reported by a later boot supersedes its earlier
# result line (in practice "ok N case # SKIP kernel wedged by X"); every
# other line stays where it is, so the diagnostics ("#" lines) stay with the
# result line they precede.  Later boots lose their version and plan lines,
# their "# policy:" line becomes "# boot K policy:" (a document has one
# policy), and each starts with a note saying why it was needed:
#	# resumed in a fresh VM (boot K) after X wedged the kernel
#	# resumed in a fresh VM (boot K) after the guest died in X
# Results are numbered 1..N in order; kselftest's "# Totals:" line is
# recomputed for the merged document and ends it.
#
# Exit status, from the merged document: 0 nothing failed, 1 a case failed,
# 4 every case skipped; 2 bad usage, 3 the first document has no plan.

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/lib.sh"

usage()
{
	cat <<EOF
Usage: $PROG BOOT1.ktap [BOOT2.ktap ...]

Merge the KTAP documents of successive boots of one suite run (the first
boot's plan and order, later boots resuming the cases left over) into one
KTAP document on stdout.

  --help   show this help

Exit status: 0 nothing failed, 1 a case failed, 4 all skipped (of the
merged document), 2 bad usage, 3 the first document has no plan.
EOF
}

case ${1:-} in
-h|--help) usage; exit 0 ;;
--) shift ;;
-*) usage_error "unknown option '$1'" ;;
esac
[ $# -ge 1 ] || usage_error "no document to merge"
for f in "$@"; do
	[ -r "$f" ] || usage_error "cannot read '$f'"
done

# All documents are read into memory (they are small), each line tagged
# with its boot; then one pass finds the boot that reports each case last
# and one prints.
rc=0
for f in "$@"; do
	printf '\001 boot\n'
	tr -d '\r' <"$f"
	printf '\n'
done | awk '
function is_result(line) { return line ~ /^(not )?ok [0-9]+( |$)/ }
function result_name(line,    f) {
	split(line, f, " ")
	if (f[1] == "not") return (f[4] == "#" ? "" : f[4])
	return (f[3] == "#" ? "" : f[3])
}
function directive(line,    i) {
	i = index(line, " # ")
	return i ? substr(line, i + 3) : ""
}
# The text after "kernel wedged by ", or "".
function wedger(line,    i) {
	i = index(line, "kernel wedged by ")
	if (!i) return ""
	line = substr(line, i + 17)
	sub(/[ \t]+$/, "", line)
	return line
}
function out(line) { lines[++nlines] = line }
$0 == "\001 boot" { nboots++; next }
{ nin++; in_boot[nin] = nboots; in_line[nin] = $0 }
is_result($0) {
	name = result_name($0)
	if (name != "") last_boot[name] = nboots
	if ($1 == "not" && toupper(substr(directive($0), 1, 5)) == "ERROR")
		died_in[nboots] = name
	next
}
/^#/ && wedger($0) != "" { wedged_by[nboots] = wedger($0) }
END {
	boot = 0
	for (i = 1; i <= nin; i++) {
		line = in_line[i]
		if (in_boot[i] != boot) {
			boot = in_boot[i]
			if (boot > 1) {
				why = ""
				if (wedged_by[boot - 1] != "")
					why = " after " wedged_by[boot - 1] " wedged the kernel"
				else if (died_in[boot - 1] != "")
					why = " after the guest died in " died_in[boot - 1]
				out("# resumed in a fresh VM (boot " boot ")" why)
			}
		}
		if (line == "") continue
		if (line ~ /^(TAP|KTAP) version [0-9]+$/) {
			if (!have_version++) out(line)
			continue
		}
		if (line ~ /^1\.\.[0-9]+/) {
			if (boot == 1 && !have_plan++) out(line)
			continue
		}
		if (line ~ /^# Totals: /) continue
		if (line ~ /^# policy: /) {
			if (have_policy++) out("# boot " boot " " substr(line, 3))
			else out(line)
			continue
		}
		if (!is_result(line)) { out(line); continue }
		name = result_name(line)
		if (name != "" && last_boot[name] != boot) continue
		n++
		d = toupper(directive(line))
		split(line, f, " ")
		if (f[1] == "not") {
			failed++
			if (d ~ /^ERROR/) error++
			else fail++
			sub(/^not ok [0-9]+/, "not ok " n, line)
		} else {
			if (d ~ /^SKIP/) skip++
			else if (d ~ /^XFAIL/) xfail++
			else if (d ~ /^XPASS/) xpass++
			else pass++
			sub(/^ok [0-9]+/, "ok " n, line)
		}
		out(line)
	}
	if (!have_plan) exit 3
	if (!have_version) print "TAP version 13"
	for (i = 1; i <= nlines; i++) print lines[i]
	printf "# Totals: pass:%d fail:%d xfail:%d xpass:%d skip:%d error:%d\n",
		pass, fail, xfail, xpass, skip, error
	if (failed) exit 1
	if (n && skip == n) exit 4
	exit 0
}' || rc=$?
case $rc in
0|1|4) exit "$rc" ;;
3) printf '%s: %s has no plan line\n' "$PROG" "$1" >&2; exit 3 ;;
*) exit "$rc" ;;
esac
