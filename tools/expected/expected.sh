#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# expected.sh - the one reader of tools/expected/verdicts, the table of the
# verdicts the suite must give: a map of kernels to policies, each kernel
# with the cases where it differs from its policy (its exceptions), and
# the table proper, cases down and policies across, each cell
# "SAFE/ALLOWED" (a safe run, a run with deadlocks allowed) or one verdict
# for both (the file's header says more).  It checks the table's shape (a
# "policy" header row, a cell a policy in every row, known verdicts, a
# numeric status, each kernel's policy a column or facts, each exception a
# known case that differs from its column) and prints one kernel's
# verdicts in the form tools/ktap/compare-verdicts.sh reads.

set -euo pipefail

PROG=${0##*/}
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

usage()
{
	cat <<EOF
Usage: $PROG [--table FILE] kernels
       $PROG [--table FILE] cases
       $PROG [--table FILE] [--allow-deadlock] column KERNEL

Read the expected-verdicts table (default: tools/expected/verdicts).

  kernels          the kernels, one a line, in the map's order
  cases            the cases, one a line, in the table's order
  column KERNEL    what KERNEL must give, one line each: "policy <name>",
                   "status <N>", then "<case> <verdict>" a case
  --allow-deadlock the column for a run with deadlocks allowed
  --table FILE     read FILE instead
  -h, --help       this text

Exit status: 0; 1 a malformed table or map, or an unknown kernel; 2 bad
usage.
EOF
}

table=$TOOLS/expected/verdicts mode=safe
while [ $# -gt 0 ]; do
	case $1 in
	--table) need_arg "$1" $#; table=$2; shift 2 ;;
	--allow-deadlock) mode=allowed; shift ;;
	-h | --help) usage; exit 0 ;;
	-*) usage_error "unknown option '$1'" ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || usage_error "no command"
cmd=$1 kernel=''
shift
case $cmd in
kernels | cases) [ $# -eq 0 ] || usage_error "$cmd takes no argument" ;;
column)
	[ $# -eq 1 ] || usage_error "column needs a kernel"
	kernel=$1
	;;
*) usage_error "unknown command '$cmd'" ;;
esac
[ -r "$table" ] || die "cannot read $table"

# shellcheck disable=SC2016 # awk, not shell
awk -v cmd="$cmd" -v kernel="$kernel" -v mode="$mode" -v table="$table" '
function bad(why) {
	printf "%s:%d: %s\n", table, FNR, why > "/dev/stderr"
	failed = 1
	exit 1
}
# cell_ok(ROW, CELL): CELL is a well-formed cell of ROW.
function cell_ok(row, c,    n, part, j) {
	n = split(c, part, "/")
	if (n > 2 || part[1] == "" || (n == 2 && part[2] == "")) return 0
	for (j = 1; j <= n; j++)
		if (row == "status" ? part[j] !~ /^[0-9]+$/ :
		    part[j] !~ /^(ok|not-ok|skip|xfail|timeout|error)$/) return 0
	return 1
}
# A kernel line: "kernel NAME POLICY [CASE=CELL]...", a line that begins
# with a tab going on with its exceptions.
/^\t/ && last != "" {
	for (i = 1; i <= NF; i++) except[last] = except[last] " " $i
	next
}
/^[ \t]*(#|$)/ { next }
{ last = "" }
$1 == "kernel" {
	if (ncols) bad("a kernel line after the \"policy\" row")
	if (NF < 3) bad("a kernel line must be \"kernel NAME POLICY [CASE=CELL]...\"")
	if ($2 in policy) bad("kernel " $2 " twice")
	policy[$2] = $3
	order[++nkernels] = last = $2
	where[$2] = FNR
	for (i = 4; i <= NF; i++) except[$2] = except[$2] " " $i
	if (cmd == "kernels") print $2
	next
}
!ncols {
	if ($1 != "policy" || NF < 2) bad("the table must begin with \"policy P1 P2 ...\"")
	ncols = NF - 1
	for (i = 2; i <= NF; i++) {
		if ($i in col) bad("policy " $i " twice")
		col[$i] = i - 1
	}
	next
}
{
	if (NF != ncols + 1) bad($1 ": " NF - 1 " cells for " ncols " policies")
	if ($1 in seen) bad($1 " twice")
	seen[$1] = 1
	rows[++nrows] = $1
	for (i = 2; i <= NF; i++) {
		if (!cell_ok($1, $i)) bad($1 ": bad cell " $i)
		cell[$1, i - 1] = $i
	}
	if (cmd == "cases" && $1 != "status") print $1
}
END {
	if (failed) exit 1
	if (!ncols) bad("no \"policy\" row")
	if (!("status" in seen)) bad("no status row")
	if (cmd == "column" && !(kernel in policy)) bad("no kernel " kernel)
	# Every kernel resolves: its column, its exceptions.
	for (k = 1; k <= nkernels; k++) {
		name = order[k]
		FNR = where[name]
		c = policy[name] ~ /=/ ? "no-policy" : policy[name]
		if (!(c in col)) bad(name ": no column " c)
		for (r = 1; r <= nrows; r++) got[name, rows[r]] = cell[rows[r], col[c]]
		n = split(except[name], ex, " ")
		for (i = 1; i <= n; i++) {
			j = index(ex[i], "=")
			row = substr(ex[i], 1, j - 1)
			v = substr(ex[i], j + 1)
			if (!j || !(row in seen)) bad(name ": " ex[i] " names no case")
			if (!cell_ok(row, v)) bad(name ": bad cell " ex[i])
			if (v == cell[row, col[c]]) bad(name ": " ex[i] " is " c "'"'"'s cell")
			if ((name, row) in done) bad(name ": " row " twice")
			done[name, row] = 1
			got[name, row] = v
		}
	}
	if (cmd != "column") exit 0
	printf "# %s: kernel %s, %s\n", table, kernel,
		mode == "allowed" ? "deadlocks allowed" : "safe run"
	print "policy " policy[kernel]
	for (r = 1; r <= nrows; r++) {
		n = split(got[kernel, rows[r]], part, "/")
		print rows[r], (mode == "allowed" && n == 2 ? part[2] : part[1])
	}
}' "$table"
