/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The runner's KTAP document, on kselftest.h: header and plan, "#"
 * diagnostics, one result line per case, totals and the exit status.
 *
 * Results are written with kselftest.h's ksft_test_result_code(), which
 * names the case: "ok N <case>", "not ok N <case>", "ok N <case> # SKIP ".
 * A result line names its case and nothing else but the directive: CI
 * systems track results by an ID made of that text (a SKIP's reason
 * included), so the why is a line of its own beside it:
 *   # <case>: SKIP <reason>
 *   ok N <case> # SKIP
 * and for a failure the evidence, then
 *   not ok N <case>
 *   # <case>: FAIL <reason>
 * kselftest.h has no TIMEOUT: that line is written here, its bound (or
 * the time to the proof of a deadlock) on the line before it:
 *   # <case>: TIMEOUT after <seconds>s
 *   not ok N <case> # TIMEOUT
 *   # <case>: TIMEOUT <reason>
 * A known failure of the kernel under test, expected where it is seen, is
 * KTAP's XFAIL: not a failure of the run, and not hidden either
 * (kselftest.h counts it as "xfail:"):
 *   ok N <case> # XFAIL
 *   # <case>: XFAIL <reason>
 *
 * A case can wedge the kernel for good: after a genuine deadlock every
 * later module load and unload hangs. Its TIMEOUT is followed by
 *   # kernel wedged by <case>
 * and no later case runs or gets a result line: each is named as
 *   # <name>: not run: kernel wedged by <case>
 * and the document ends with fewer results than its plan, so that a lab
 * reading it files no verdict for a case that did not run, and a harness
 * can run the remaining cases on a fresh kernel and merge the documents.
 */
#ifndef MA_KTAP_H
#define MA_KTAP_H

#include <stdbool.h>

#include "diag.h"

enum ktap_kind {
	KTAP_PASS,
	KTAP_FAIL,
	KTAP_TIMEOUT,		/* a load or job did not end within bound_ms */
	KTAP_WEDGED,		/* a TIMEOUT the kernel does not come back from */
	KTAP_SKIP,
	KTAP_XFAIL,		/* a known failure of this kernel, expected */
};

struct ktap_verdict {
	enum ktap_kind kind;
	int bound_ms;		/* KTAP_TIMEOUT: the bound that expired */
	char reason[256];	/* FAIL, TIMEOUT, XFAIL: a "#" line; SKIP: the reason */
};

/* "TAP version 13" and the plan. */
void ktap_begin(unsigned int plan);

/*
 * The whole document of a program that cannot run at all, "TAP version 13"
 * and "1..0 # SKIP <reason>", as ksft_exit_skip() prints it; returns
 * KSFT_SKIP (4), the exit status.
 */
int ktap_skip_all(const char *reason);

/* One "#" line (a diag() hook: see diag.h). */
void ktap_diag(const char *line);

/*
 * Print @name's result; a TIMEOUT and a WEDGED one print alike. The first
 * result after the kernel was wedged is followed by "# kernel wedged by
 * <case>".
 */
void ktap_result(const char *name, const struct ktap_verdict *v);

/*
 * The kernel is wedged by case @name from now on (the first call counts):
 * this is the one record of it, read with ktap_wedged_by().
 */
void ktap_wedge(const char *name);

/* The case that wedged the kernel, or NULL. */
const char *ktap_wedged_by(void);

/*
 * May @name run? Not once the kernel is wedged: then its "not run" line is
 * printed here (no result) and false returned.
 */
bool ktap_may_run(const char *name);

/* "Bail out!", the totals and exit 1 if a wedge left cases not run. */
void ktap_bail_out_if_wedged(void);

/*
 * Totals, then exit 1 if a case failed, 4 if all skipped, else 0 (an
 * XFAIL is no failure).
 */
void ktap_exit(void) __noreturn;

#endif /* MA_KTAP_H */
