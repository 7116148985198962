// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the runner (module_async), run as a program: its lists,
 * its usage errors and help, and the KTAP it prints where no case can run
 * (its modules missing, or as an unprivileged user), read back by the
 * suite's KTAP reader (ktap_ask()) as the scripts read it.
 * MODULE_ASYNC_RUNNER names the runner binary; nothing is loaded. Built and
 * run by "make -C lib check".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/diag.h"
#include "lib/test_util.h"

static const char *runner_path(void)
{
	const char *path = getenv("MODULE_ASYNC_RUNNER");

	return path && !access(path, X_OK) ? path : NULL;
}

/*
 * Run the runner with @args (NULL-terminated), as @uid unless it is -1;
 * its stdout in @out. Returns its exit status, or -1.
 */
struct runner_run {
	const char *argv[16];
	uid_t uid;
};

/*
 * The exit statuses of a child that never ran the runner: it could not
 * become @uid; @uid may not reach it (a clone under /root, mode 0700);
 * it could not run it.
 */
#define NO_SETUID	126
#define NO_ACCESS	125
#define NO_EXEC		127

/* In the child: become @uid, if asked, and run the runner. */
static void exec_runner(const void *arg)
{
	const struct runner_run *run = arg;

	if (run->uid != (uid_t)-1 && (setgid(run->uid) || setuid(run->uid)))
		_exit(NO_SETUID);
	execv(run->argv[0], (char **)run->argv);
	_exit(run->uid != (uid_t)-1 && errno == EACCES ? NO_ACCESS : NO_EXEC);
}

static int run_runner(const char *const args[], uid_t uid, char *out,
		      size_t len)
{
	struct runner_run run = { .argv = { runner_path() }, .uid = uid };
	int i;

	for (i = 0; args[i] && i < 14; i++)
		run.argv[i + 1] = args[i];
	return run_captured(exec_runner, &run, out, len);
}

/* Why the runner's tests skip when have_runner() is false. */
#define NO_RUNNER "MODULE_ASYNC_RUNNER not set or not executable"

static bool have_runner(void)
{
	return runner_path();
}

/*
 * The case names are an interface CI systems track, exact, in order: the
 * expected verdicts (tools/expected/) name every one, and tools/check.sh
 * checks --list against them. Here they come from --list, so that the
 * runner's other outputs can be checked against the table it runs.
 */
#define CASES_MAX	32

static char case_name_buf[CASES_MAX][128];
static const char *case_names[CASES_MAX];
static unsigned int nr_cases;

/* Read "--list": one "<name> <safety>" line a case. True if well-formed. */
static bool read_case_names(void)
{
	static const char * const args[] = { "--list", NULL };
	char out[4096], *line, *save = NULL, safety[64];

	nr_cases = 0;
	if (run_runner(args, -1, out, sizeof(out)))
		return false;
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (nr_cases == CASES_MAX ||
		    sscanf(line, "%127s %63s", case_name_buf[nr_cases],
			   safety) != 2)
			return false;
		if (strcmp(safety, "safe") &&
		    strcmp(safety, "unsafe-if-always-sync") &&
		    strcmp(safety, "unsafe-if-during-awaited") &&
		    strcmp(safety, "unsafe"))
			return false;
		case_names[nr_cases] = case_name_buf[nr_cases];
		nr_cases++;
	}
	return nr_cases > 0;
}

TEST(runner_lists_every_case_once_with_its_safety)
{
	unsigned int i, j;

	if (!have_runner())
		SKIP(return, NO_RUNNER);
	ASSERT_TRUE(read_case_names());
	for (i = 0; i < nr_cases; i++)
		for (j = i + 1; j < nr_cases; j++)
			EXPECT_STRNE(case_names[i], case_names[j]);
}

/* The kernel's modules the cases load: names modprobe takes, each once. */
#define REQUEST_CASE	"request_module_from_async_"

TEST(runner_lists_the_kernel_modules_it_loads)
{
	static const char * const args[] = { "--list-modules", NULL };
	char out[4096], *line, *save = NULL, *names[32];
	unsigned int n = 0, i;

	if (!have_runner())
		SKIP(return, NO_RUNNER);
	ASSERT_EQ(0, run_runner(args, -1, out, sizeof(out)));
	for (line = strtok_r(out, "\n", &save); line && n < ARRAY_SIZE(names);
	     line = strtok_r(NULL, "\n", &save)) {
		EXPECT_EQ(strlen(line), strcspn(line, " \t/"));
		for (i = 0; i < n; i++)
			EXPECT_STRNE(names[i], line);
		names[n++] = line;
	}
	/* request_module_from_async_<target>'s targets are among them. */
	ASSERT_TRUE(read_case_names());
	for (i = 0; i < nr_cases; i++) {
		const char *target = case_names[i] + strlen(REQUEST_CASE);
		unsigned int j;
		bool found = false;

		if (strncmp(case_names[i], REQUEST_CASE, strlen(REQUEST_CASE)) ||
		    !strcmp(target, "async_probe"))
			continue;
		for (j = 0; j < n; j++)
			found |= !strcmp(names[j], target);
		EXPECT_TRUE(found) TH_LOG("%s: not in --list-modules", target);
	}
}

TEST(runner_skips_every_case_without_its_modules)
{
	static const char * const args[] = {
		"--modules-dir", "/nonexistent/modules", NULL,
	};
	static char out[16384];
	int status;

	if (!have_runner())
		SKIP(return, NO_RUNNER);
	if (geteuid())
		SKIP(return, "as non-root every case skips for that reason");
	ASSERT_TRUE(read_case_names());
	status = run_runner(args, -1, out, sizeof(out));
	ktap_check(_metadata, out, case_names, nr_cases);
	ktap_expect_every_result(_metadata, out, nr_cases, "skip", "SKIP",
				 "test modules not built");
	EXPECT_EQ(4, status);	/* KSFT_SKIP */
}

TEST(runner_skips_every_case_when_not_root)
{
	static const char * const args[] = { NULL };
	static char out[16384];
	int status;

	if (!have_runner())
		SKIP(return, NO_RUNNER);
	ASSERT_TRUE(read_case_names());
	status = run_runner(args, geteuid() ? (uid_t)-1 : 65534, out,
			    sizeof(out));
	if (status == NO_ACCESS)
		SKIP(return, "uid 65534 may not run %s", runner_path());
	ASSERT_NE(NO_SETUID, status);
	ktap_check(_metadata, out, case_names, nr_cases);
	ktap_expect_every_result(_metadata, out, nr_cases, "skip", "SKIP",
				 "not root");
	EXPECT_EQ(4, status);
}

/*
 * As module_async.sh runs it (WHOLE_SUITE_SKIP_ENV in ../module_async.c):
 * kselftest's whole-suite SKIP, "1..0 # SKIP <reason>", and exit 4.
 */
TEST(runner_skips_the_whole_suite_when_not_root_if_asked)
{
	static const char * const args[] = { NULL };
	static char out[16384];
	int status;

	if (!have_runner())
		SKIP(return, NO_RUNNER);
	setenv("MODULE_ASYNC_WHOLE_SUITE_SKIP", "1", 1);
	status = run_runner(args, geteuid() ? (uid_t)-1 : 65534, out,
			    sizeof(out));
	unsetenv("MODULE_ASYNC_WHOLE_SUITE_SKIP");
	if (status == NO_ACCESS)
		SKIP(return, "uid 65534 may not run %s", runner_path());
	ASSERT_NE(NO_SETUID, status);
	EXPECT_EQ(4, status);
	ktap_expect_skip_all(_metadata, out, "must be run as root");
}

TEST(runner_runs_the_selected_cases_in_table_order)
{
	static const char * const args[] = {
		"--case", "warn_on_sync_request_from_async",
		"--case", "async_init_completes",
		"--modules-dir", "/nonexistent/modules", NULL,
	};
	static const char * const expected[] = {
		"async_init_completes", "warn_on_sync_request_from_async",
	};
	static char out[16384];

	if (!have_runner())
		SKIP(return, NO_RUNNER);
	EXPECT_EQ(4, run_runner(args, -1, out, sizeof(out)));
	ktap_check(_metadata, out, expected, ARRAY_SIZE(expected));
}

/*
 * --repeat: one document, repetition K > 1 naming its results <case>.K,
 * then repeat_drift; every name once.
 */
TEST(runner_repeats_the_selected_cases_with_names_of_their_own)
{
	static const char * const args[] = {
		"--repeat", "3", "--case", "async_init_completes",
		"--case", "nested_async_load",
		"--modules-dir", "/nonexistent/modules", NULL,
	};
	static const char * const expected[] = {
		"async_init_completes", "nested_async_load",
		"async_init_completes.2", "nested_async_load.2",
		"async_init_completes.3", "nested_async_load.3",
		"repeat_drift",
	};
	static char out[16384];

	if (!have_runner())
		SKIP(return, NO_RUNNER);
	EXPECT_EQ(4, run_runner(args, -1, out, sizeof(out)));
	ktap_check(_metadata, out, expected, ARRAY_SIZE(expected));
}

/* --latency, --storm: their result after the cases --case names, or alone. */
TEST(runner_measures_latency_after_the_selected_cases_only)
{
	static const char * const with_case[] = {
		"--latency", "1,10,100,1000", "--case", "async_init_completes",
		"--modules-dir", "/nonexistent/modules", NULL,
	};
	static const char * const alone[] = {
		"--latency", "5", "--modules-dir", "/nonexistent/modules", NULL,
	};
	static const char * const storm[] = {
		"--storm", "1,8,32", "--modules-dir", "/nonexistent/modules",
		NULL,
	};
	static const char * const expected[] = {
		"async_init_completes", "latency",
	};
	static char out[16384];

	if (!have_runner())
		SKIP(return, NO_RUNNER);
	EXPECT_EQ(4, run_runner(with_case, -1, out, sizeof(out)));
	ktap_check(_metadata, out, expected, ARRAY_SIZE(expected));
	EXPECT_EQ(4, run_runner(alone, -1, out, sizeof(out)));
	ktap_check(_metadata, out, expected + 1, 1);
	EXPECT_EQ(4, run_runner(storm, -1, out, sizeof(out)));
	ktap_check(_metadata, out, expected + 1, 1);
}

TEST(runner_usage_errors_exit_1_with_nothing_on_stdout)
{
	static const char * const unknown_case[] = { "--case", "no_such_case", NULL };
	static const char * const bad_timeout[] = { "--timeout-ms", "0", NULL };
	static const char * const not_a_number[] = { "--timeout-ms", "10s", NULL };
	/* Below the floor: shorter than an honest load may take. */
	static const char * const short_timeout[] = { "--timeout-ms", "10", NULL };
	static const char * const under_floor[] = { "--timeout-ms", "999", NULL };
	static const char * const unknown_option[] = { "--no-such-option", NULL };
	static const char * const extra_argument[] = { "extra", NULL };
	static const char * const no_repeat[] = { "--repeat", "0", NULL };
	static const char * const repeat_word[] = { "--repeat", "x", NULL };
	static const char * const repeat_unsafe[] = {
		"--repeat", "2", "--allow-deadlock", NULL,
	};
	static const char * const no_jobs[] = { "--latency", "0", NULL };
	static const char * const many_jobs[] = { "--latency", "1,1001", NULL };
	static const char * const jobs_word[] = { "--latency", "1,x", NULL };
	static const char * const many_counts[] = {
		"--latency", "1,2,3,4,5,6,7,8,9", NULL,
	};
	static const char * const latency_repeat[] = {
		"--latency", "1", "--repeat", "2", NULL,
	};
	static const char * const intrusive_maybe[] = {
		"--intrusive", "maybe", NULL,
	};
	static const char * const no_loads[] = { "--storm", "0", NULL };
	static const char * const many_loads[] = { "--storm", "8,65", NULL };
	static const char * const storm_repeat[] = {
		"--storm", "8", "--repeat", "2", NULL,
	};
	static const char * const facts_unknown[] = {
		"--facts", "own=yes,worker=unknown", NULL,
	};
	static const char * const facts_no_fact[] = {
		"--facts", "own=yes,flag=no", NULL,
	};
	static const char * const facts_trailing[] = { "--facts", "own=yes,", NULL };
	const char * const *const all[] = {
		unknown_case, bad_timeout, not_a_number, short_timeout,
		under_floor, unknown_option,
		extra_argument, no_repeat, repeat_word, repeat_unsafe,
		no_jobs, many_jobs, jobs_word, many_counts, latency_repeat,
		no_loads, many_loads, storm_repeat, intrusive_maybe,
		facts_unknown, facts_no_fact, facts_trailing,
	};
	char out[4096];
	unsigned int i;

	if (!have_runner())
		SKIP(return, NO_RUNNER);
	for (i = 0; i < ARRAY_SIZE(all); i++) {
		EXPECT_EQ(KSFT_FAIL, run_runner(all[i], -1, out, sizeof(out)));
		EXPECT_STREQ("", out);
	}
}

/* --facts takes the facts as the "# facts:" line prints them. */
TEST(runner_takes_facts_as_printed)
{
	static const char * const args[] = {
		"--facts",
		"own=yes,worker=no,unrelated=no,older=yes,async_probe=moot,async_probe_knob=absent",
		"--list", NULL,
	};
	char out[4096];

	if (!have_runner())
		SKIP(return, NO_RUNNER);
	EXPECT_EQ(0, run_runner(args, -1, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "async_init_completes safe\n"));
}

/* The floor itself is a bound the runner takes. */
TEST(runner_takes_the_timeout_floor)
{
	static const char * const args[] = {
		"--timeout-ms", "1000", "--list", NULL,
	};
	char out[4096];

	if (!have_runner())
		SKIP(return, NO_RUNNER);
	EXPECT_EQ(0, run_runner(args, -1, out, sizeof(out)));
}

TEST(runner_help)
{
	static const char * const args[] = { "--help", NULL };
	char out[4096];

	if (!have_runner())
		SKIP(return, NO_RUNNER);
	EXPECT_EQ(0, run_runner(args, -1, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "Usage:"));
	EXPECT_NE(NULL, strstr(out, "--allow-deadlock"));
}

TEST_HARNESS_MAIN
