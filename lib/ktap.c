// SPDX-License-Identifier: GPL-2.0
/*
 * The runner's KTAP document (see ktap.h). The only user of kselftest.h's
 * counters in the runner: every result goes through here.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "kselftest.h"

#include "diag.h"
#include "ktap.h"

/*
 * The case that wedged the kernel, whether that was printed yet, and how
 * many cases were not run after it.
 */
static char wedged_by[128];
static unsigned int not_run;
static bool wedge_announced;

void ktap_begin(unsigned int plan)
{
	ksft_print_header();
	ksft_set_plan(plan);
}

/*
 * The version line is printed even under KSFT_TAP_LEVEL (which makes
 * ksft_print_header() leave it out): this document has always had it.
 */
int ktap_skip_all(const char *reason)
{
	printf("TAP version 13\n1..0 # SKIP %s\n", reason);
	return KSFT_SKIP;
}

void ktap_diag(const char *line)
{
	ksft_print_msg("%s\n", line);
}

/*
 * A failure's cause, "# <case>: FAIL|TIMEOUT|XFAIL <reason>", just after its
 * result: a lab's log of a case holds the lines after its result line,
 * the evidence before it holds the same line among the rest.
 */
static void ktap_cause(const char *name, const char *keyword,
		       const char *reason)
{
	if (reason[0])
		ksft_print_msg("%s: %s %s\n", name, keyword, reason);
}

/*
 * kselftest.h has no TIMEOUT directive: a failure, its line written here.
 * The bound goes on the line before, as short as it is exact ("10s",
 * "2.5s"): a result line's text is a lab's ID for the case, the same in
 * every run.
 */
static void ktap_timeout(const char *name, int bound_ms)
{
	if (bound_ms % 1000)
		ksft_print_msg("%s: TIMEOUT after %d.%03ds\n", name,
			       bound_ms / 1000, bound_ms % 1000);
	else
		ksft_print_msg("%s: TIMEOUT after %ds\n", name,
			       bound_ms / 1000);
	ksft_test_result_fail("%s # TIMEOUT\n", name);
}

void ktap_result(const char *name, const struct ktap_verdict *v)
{
	switch (v->kind) {
	case KTAP_PASS:
		ksft_test_result_code(KSFT_PASS, name, NULL);
		break;
	case KTAP_FAIL:
		if (v->reason[0])
			ktap_diag(v->reason);
		ksft_test_result_code(KSFT_FAIL, name, NULL);
		ktap_cause(name, "FAIL", v->reason);
		break;
	case KTAP_TIMEOUT:
	case KTAP_WEDGED:
		if (v->reason[0])
			ktap_diag(v->reason);
		ktap_timeout(name, v->bound_ms);
		ktap_cause(name, "TIMEOUT", v->reason);
		break;
	case KTAP_SKIP:
		ksft_print_msg("%s: SKIP %s\n", name, v->reason);
		ksft_test_result_code(KSFT_SKIP, name, NULL);
		break;
	case KTAP_XFAIL:
		if (v->reason[0])
			ktap_diag(v->reason);
		ksft_test_result_code(KSFT_XFAIL, name, NULL);
		ktap_cause(name, "XFAIL", v->reason);
		break;
	}
	if (wedged_by[0] && !wedge_announced) {
		wedge_announced = true;
		ksft_print_msg("kernel wedged by %s\n", wedged_by);
	}
}

void ktap_wedge(const char *name)
{
	if (!wedged_by[0])
		snprintf(wedged_by, sizeof(wedged_by), "%s", name);
}

const char *ktap_wedged_by(void)
{
	return wedged_by[0] ? wedged_by : NULL;
}

bool ktap_may_run(const char *name)
{
	if (!wedged_by[0])
		return true;
	ksft_print_msg("%s: not run: kernel wedged by %s\n", name, wedged_by);
	not_run++;
	return false;
}

/*
 * After a wedge that left cases not run the document ends short of its
 * plan: KTAP's "Bail out!", the totals, exit 1 (KSFT_FAIL). Else returns.
 */
void ktap_bail_out_if_wedged(void)
{
	if (not_run)
		ksft_exit_fail_msg("kernel wedged by %s: the cases left need a fresh boot\n",
				   wedged_by);
}

/*
 * ksft_exit_pass() and ksft_exit_fail() exit: they return int before 6.12
 * and are void __noreturn since, so neither value is used.
 */
void ktap_exit(void)
{
	if (ksft_get_fail_cnt() || ksft_get_error_cnt())
		ksft_exit_fail();
	if (ksft_get_pass_cnt() || ksft_get_xfail_cnt() ||
	    !ksft_get_xskip_cnt())
		ksft_exit_pass();
	ksft_print_cnts();
	exit(KSFT_SKIP);
}
