#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# expected.sh - the one reader of tools/expected/verdicts, the table of the
# verdicts the suite must give: cases down, kernels across, each cell
# "SAFE/ALLOWED" (a safe run, a run with deadlocks allowed) or one verdict
# for both.  It checks the table's shape (a "kernel" header row, one cell a
# kernel in every row, known verdicts, a numeric status) and prints one
# column of it in the form tools/ktap/compare-verdicts.sh reads.

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

  kernels          the kernels, one a line, in the table's order
  cases            the cases, one a line, in the table's order
  column KERNEL    what KERNEL must give, one line each: "policy <name>",
                   "status <N>", then "<case> <verdict>" a case
  --allow-deadlock the column for a run with deadlocks allowed
  --table FILE     read FILE instead
  -h, --help       this text

Exit status: 0; 1 a malformed table or an unknown kernel; 2 bad usage.
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
/^[ \t]*(#|$)/ { next }
!nkernels {
	if ($1 != "kernel" || NF < 2) bad("the first row must be \"kernel K1 K2 ...\"")
	nkernels = NF - 1
	for (i = 2; i <= NF; i++) {
		if ($i in col) bad("kernel " $i " twice")
		col[$i] = i
		if (cmd == "kernels") print $i
	}
	if (cmd == "column" && !(kernel in col)) bad("no kernel " kernel)
	next
}
{
	if (NF != nkernels + 1) bad($1 ": " NF - 1 " cells for " nkernels " kernels")
	if ($1 in seen) bad($1 " twice")
	seen[$1] = 1
	for (i = 2; i <= NF; i++) {
		n = split($i, cell, "/")
		if (n > 2 || cell[1] == "" || (n == 2 && cell[2] == "")) bad($1 ": bad cell " $i)
		for (j = 1; j <= n; j++) {
			if ($1 == "status" && cell[j] !~ /^[0-9]+$/) bad("status: bad cell " $i)
			if ($1 != "status" && $1 != "policy" &&
			    cell[j] !~ /^(ok|not-ok|skip|xfail|timeout|error)$/)
				bad($1 ": bad verdict " $i)
		}
	}
	if (cmd == "cases" && $1 != "policy" && $1 != "status") print $1
	if (cmd != "column") next
	n = split($col[kernel], cell, "/")
	line[++nlines] = $1 " " (mode == "allowed" && n == 2 ? cell[2] : cell[1])
}
END {
	if (failed) exit 1
	if (!nkernels) bad("no \"kernel\" row")
	if (!("policy" in seen) || !("status" in seen)) bad("no policy or no status row")
	if (cmd != "column") exit 0
	printf "# %s: kernel %s, %s\n", table, kernel,
		mode == "allowed" ? "deadlocks allowed" : "safe run"
	for (i = 1; i <= nlines; i++) print line[i]
}' "$table"
