# SPDX-License-Identifier: GPL-2.0
#
# lib-verdicts.sh - a run's verdicts checked against tools/expected/verdicts;
# sourced after lib-tests.sh.

# shellcheck shell=bash

# expect_verdicts WHAT KERNEL DOC STATUS LOG: check WHAT, that DOC, of a run
# that exited STATUS, has KERNEL's expected verdicts (the comparison in LOG).
expect_verdicts()
{
	if "$TOOLS/expected/expected" compare --status "$4" "$2" "$3" >"$5" 2>&1; then
		pass "$1"
	else
		fail "$1 (${5#"$TOP"/})"
		"$KTAP" totals "$5" | sed '$d; s/^/# /' || true
	fi
}
