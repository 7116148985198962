// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of lib/ktap.c, the runner's KTAP document: after a wedge no
 * case runs or gets a result, a timeout without one lets the run go on, a suite
 * that cannot run is one whole-suite SKIP. Each document is read by the
 * suite's KTAP reader (ktap_ask()), as the scripts read the runner's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "ktap.h"
#include "test_util.h"

static const char * const wedge_cases[] = {
	"first_passes", "second_wedges", "third", "fourth",
};

/* Each run_* prints a KTAP document in a child (run_captured()). */
static void run_a_wedge(const void *unused)
{
	struct ktap_verdict pass = { .kind = KTAP_PASS };
	struct ktap_verdict wedge = {
		.kind = KTAP_WEDGED, .bound_ms = 10000,
		.reason = "the job did not return within 10000 ms",
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	ktap_begin(ARRAY_SIZE(wedge_cases));
	if (ktap_may_run(wedge_cases[0]))
		ktap_result(wedge_cases[0], &pass);
	if (ktap_may_run(wedge_cases[1])) {
		ktap_wedge(wedge_cases[1]);
		ktap_diag("evidence");
		ktap_result(wedge_cases[1], &wedge);
	}
	if (ktap_may_run(wedge_cases[2]))
		ktap_result(wedge_cases[2], &pass);	/* must not happen */
	if (ktap_may_run(wedge_cases[3]))
		ktap_result(wedge_cases[3], &pass);
	ktap_exit();
}

/*
 * After a wedge no case gets a result: a lab reading the document files no
 * verdict for a case that did not run (a harness runs it on a fresh kernel).
 */
TEST(ktap_after_a_wedge_runs_and_reports_no_case)
{
	static char out[4096];
	char answer[1024];
	int status;

	status = run_captured(run_a_wedge, NULL, out, sizeof(out));
	EXPECT_EQ(1, status);
	/* Every case planned, two reported; nothing else than KTAP. */
	EXPECT_EQ(0, ktap_ask(out, "plan", NULL, answer, sizeof(answer)));
	EXPECT_STREQ("4", answer);
	EXPECT_EQ(0, ktap_ask(out, "verdicts", NULL, answer, sizeof(answer)));
	EXPECT_STREQ("1 first_passes ok\n2 second_wedges timeout", answer);
	EXPECT_EQ(0, ktap_ask(out, "unknown", NULL, answer, sizeof(answer)));
	EXPECT_STREQ("", answer);
	ktap_expect_result(_metadata, out, "first_passes", "ok", "", "");
	ktap_expect_result(_metadata, out, "second_wedges", "timeout",
			   "TIMEOUT", "the job did not return within 10000 ms");
	EXPECT_EQ(1, ktap_ask(out, "verdict", "third", answer, sizeof(answer)));
	EXPECT_EQ(1, ktap_ask(out, "verdict", "fourth", answer, sizeof(answer)));
	EXPECT_EQ(0, ktap_ask(out, "wedged", NULL, answer, sizeof(answer)));
	EXPECT_STREQ("second_wedges", answer);
	EXPECT_EQ(0, ktap_ask(out, "leftover", NULL, answer, sizeof(answer)));
	EXPECT_STREQ("third\nfourth", answer);

	/*
	 * Evidence, reason, the bound, verdict, cause, then the wedge and the
	 * cases not run, in this order; the result line names its case and
	 * its directive alone.
	 */
	EXPECT_EQ(0, ktap_ask(out, "diag", "second_wedges", answer,
			      sizeof(answer)));
	EXPECT_STREQ("# evidence\n"
		     "# the job did not return within 10000 ms\n"
		     "# second_wedges: TIMEOUT after 10s", answer);
	EXPECT_NE(NULL, strstr(out, "not ok 2 second_wedges # TIMEOUT\n"
				    "# second_wedges: TIMEOUT the job did not return within 10000 ms\n"
				    "# kernel wedged by second_wedges\n"
				    "# third: not run: kernel wedged by second_wedges\n"
				    "# fourth: not run: kernel wedged by second_wedges\n"));
	EXPECT_NE(NULL, strstr(out, "# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:0 error:0\n"));
}

static void run_a_timeout_without_wedge(const void *unused)
{
	struct ktap_verdict slow = {
		.kind = KTAP_TIMEOUT, .bound_ms = 2500,
		.reason = "the job did not start within 2500 ms",
	};
	struct ktap_verdict pass = { .kind = KTAP_PASS };

	ktap_begin(2);
	ktap_result("slow", &slow);
	if (ktap_may_run("after"))
		ktap_result("after", &pass);
	ktap_exit();
}

TEST(ktap_timeout_without_a_wedge_lets_the_run_go_on)
{
	static const char * const cases[] = { "slow", "after" };
	static char out[4096];
	char answer[1024];
	int status;

	status = run_captured(run_a_timeout_without_wedge, NULL, out,
			      sizeof(out));
	EXPECT_EQ(1, status);
	ktap_check(_metadata, out, cases, ARRAY_SIZE(cases));
	ktap_expect_result(_metadata, out, "slow", "timeout", "TIMEOUT",
			   "the job did not start within 2500 ms");
	EXPECT_NE(NULL, strstr(out, "# slow: TIMEOUT after 2.500s\nnot ok 1 slow # TIMEOUT\n"));
	ktap_expect_result(_metadata, out, "after", "ok", "", "");
	EXPECT_EQ(1, ktap_ask(out, "wedged", NULL, answer, sizeof(answer)));
	EXPECT_EQ(0, ktap_ask(out, "leftover", NULL, answer, sizeof(answer)));
	EXPECT_STREQ("", answer);
}

static void run_an_xfail(const void *unused)
{
	struct ktap_verdict xfail = {
		.kind = KTAP_XFAIL,
		.reason = "tasks could not be frozen: the load sleeps",
	};
	struct ktap_verdict skip = { .kind = KTAP_SKIP, .reason = "not here" };

	setvbuf(stdout, NULL, _IOLBF, 0);
	ktap_begin(2);
	ktap_result("known", &xfail);
	ktap_result("other", &skip);
	ktap_exit();
}

/*
 * A known failure, expected: "ok N <case> # XFAIL", its reason beside it,
 * counted as kselftest.h counts it; no failure of the run, even beside
 * skips alone (exit 0, not 4).
 */
TEST(ktap_xfail_is_ok_counted_and_named)
{
	static const char * const cases[] = { "known", "other" };
	static char out[4096];

	EXPECT_EQ(0, run_captured(run_an_xfail, NULL, out, sizeof(out)));
	ktap_check(_metadata, out, cases, ARRAY_SIZE(cases));
	ktap_expect_result(_metadata, out, "known", "xfail", "XFAIL",
			   "tasks could not be frozen: the load sleeps");
	ktap_expect_result(_metadata, out, "other", "skip", "SKIP", "not here");
	EXPECT_NE(NULL, strstr(out, "ok 1 known # XFAIL"));
	EXPECT_NE(NULL, strstr(out, "\n# known: XFAIL tasks could not be frozen"));
	EXPECT_NE(NULL, strstr(out, "# Totals: pass:0 fail:0 xfail:1 xpass:0 skip:1 error:0\n"));
}

static void run_a_whole_suite_skip(const void *unused)
{
	exit(ktap_skip_all("must be run as root"));
}

/* kselftest's whole-suite SKIP: a version line, "1..0 # SKIP <reason>". */
TEST(ktap_skip_all_is_a_whole_suite_skip)
{
	static char out[4096];

	EXPECT_EQ(4, run_captured(run_a_whole_suite_skip, NULL, out,
				  sizeof(out)));
	ktap_expect_skip_all(_metadata, out, "must be run as root");
}

TEST_HARNESS_MAIN
