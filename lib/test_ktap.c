// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of lib/ktap.c, the runner's KTAP document: a wedge skips the
 * rest naming the case, a timeout without one lets the run go on.
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

TEST(ktap_after_a_wedge_skips_the_rest_naming_the_case)
{
	static char out[4096], copy[4096];
	struct ktap k;
	int status;

	status = run_captured(run_a_wedge, NULL, out, sizeof(out));
	EXPECT_EQ(1, status);
	strcpy(copy, out);
	ktap_parse(&k, copy);
	ktap_check(_metadata, &k, wedge_cases, ARRAY_SIZE(wedge_cases));
	EXPECT_TRUE(k.results[0].ok);
	EXPECT_STREQ("", k.results[0].directive);
	EXPECT_FALSE(k.results[1].ok);
	EXPECT_STREQ("TIMEOUT 10s", k.results[1].directive);
	EXPECT_TRUE(k.results[2].ok);
	EXPECT_STREQ("SKIP kernel wedged by second_wedges", k.results[2].directive);
	EXPECT_TRUE(k.results[3].ok);
	EXPECT_STREQ("SKIP kernel wedged by second_wedges", k.results[3].directive);

	/* Evidence, reason, verdict, then the wedge, in this order. */
	EXPECT_NE(NULL, strstr(out, "# evidence\n"
			       "# the job did not return within 10000 ms\n"
			       "not ok 2 second_wedges # TIMEOUT 10s\n"
			       "# kernel wedged by second_wedges\n"
			       "ok 3 third # SKIP kernel wedged by second_wedges\n"));
	EXPECT_NE(NULL, strstr(out, "# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:2 error:0\n"));
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
	static char out[4096];
	int status;

	status = run_captured(run_a_timeout_without_wedge, NULL, out,
			      sizeof(out));
	EXPECT_EQ(1, status);
	EXPECT_NE(NULL, strstr(out, "not ok 1 slow # TIMEOUT 2.500s\nok 2 after\n"));
	EXPECT_EQ(NULL, strstr(out, "wedged"));
}

TEST_HARNESS_MAIN
