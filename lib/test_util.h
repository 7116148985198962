/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the library's host tests (lib/test_*.c) and the runner's
 * (../test_module_async.c) share: temporary files, captured diagnostics,
 * the stacks of a stock kernel's deadlock, and the questions they ask the
 * suite's KTAP reader. No kernel module is loaded by any of them.
 */
#ifndef MA_TEST_UTIL_H
#define MA_TEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "tasks.h"

/* Slack for a loaded host: a bound must hold within this much. */
#define SLACK_MS	1000

/* diag() lines, when capture_diag() is the hook, one a line. */
extern char captured[16384];
void capture_diag(const char *line);

/* A child_fn (child.h) that never returns: the watchdog must end it. */
struct child_report;
void child_hangs(void *arg, struct child_report *report);

/*
 * Run @fn(@arg) in a child, its stdout into @out (NUL-terminated, @len
 * bytes at most), its stderr (usage texts: not under test) to /dev/null.
 * @fn exits; if it returns, the child exits 99. Returns the child's exit
 * status, or -1.
 */
int run_captured(void (*fn)(const void *arg), const void *arg, char *out,
		 size_t len);

void write_file(const char *path, const char *text);
char *make_temp_dir(void);
void remove_tree(const char *dir);
long long elapsed_ms(long long since_us);

/* As the stock Debian 6.1 kernel showed them in request_module_from_async_*. */
extern const char * const requester_stack[];
extern const char * const loader_stack[];
/* A task blocked elsewhere, and a job held on its gate. */
extern const char * const unrelated_stack[];
extern const char * const gated_job_stack[];

/* A blocked task with @frames (NULL-terminated) as its stack. */
void make_task(struct task_stack *t, int pid, const char *comm,
	       const char *parent, const char *cmdline,
	       const char * const frames[]);

/*
 * Ask the suite's one KTAP reader, tools/ktap/ktap (its path is KTAP_READER,
 * passed in by lib/Makefile), about @doc: "ktap @cmd [@arg] FILE" on a copy
 * of it, so that the runner's KTAP is judged as every script judges it.
 * The reader's answer (its stdout, without the last newline) is in @answer.
 * Returns the reader's exit status: 0, 1 when what was asked is not in the
 * document or a check failed, 2 a usage error; or -1.
 */
int ktap_ask(const char *doc, const char *cmd, const char *arg, char *answer,
	     size_t len);

#ifdef __KSELFTEST_HARNESS_H
/*
 * The reader finds @doc well formed ("check"), with nothing in it that is
 * not KTAP ("unknown"), the version line before the plan and the results
 * ("records"), a plan of @nr ("plan"), and one result per expected case, numbered in order
 * ("verdicts"). Each case's verdict, directive and reason:
 * ktap_expect_result().
 */
static inline void ktap_check(struct __test_metadata *_metadata,
			      const char *doc, const char * const names[],
			      unsigned int nr)
{
	char answer[16384], want[32], name[128], verdict[16], extra;
	char *line, *save = NULL;
	unsigned int i, number;
	int fields;

	EXPECT_EQ(0, ktap_ask(doc, "check", NULL, answer, sizeof(answer)))
		TH_LOG("ktap check:\n%s", answer);
	EXPECT_EQ(0, ktap_ask(doc, "unknown", NULL, answer, sizeof(answer)));
	EXPECT_STREQ("", answer);
	EXPECT_EQ(0, ktap_ask(doc, "records", NULL, answer, sizeof(answer)));
	EXPECT_EQ(0, strncmp("version\n", answer, 8))
		TH_LOG("ktap records:\n%s", answer);
	snprintf(want, sizeof(want), "%u", nr);
	EXPECT_EQ(0, ktap_ask(doc, "plan", NULL, answer, sizeof(answer)));
	EXPECT_STREQ(want, answer);
	ASSERT_EQ(0, ktap_ask(doc, "verdicts", NULL, answer, sizeof(answer)));
	line = strtok_r(answer, "\n", &save);
	for (i = 0; i < nr && line; i++, line = strtok_r(NULL, "\n", &save)) {
		/* "<n> <case> <verdict>": a case of one word. */
		fields = sscanf(line, "%u %127s %15s %c", &number, name,
				verdict, &extra);
		EXPECT_EQ(3, fields) TH_LOG("ktap verdicts: '%s'", line);
		EXPECT_EQ(i + 1, number);
		EXPECT_STREQ(names[i], name);
	}
	EXPECT_EQ(nr, i);
	EXPECT_EQ(NULL, line) TH_LOG("more results than cases: '%s'", line);
}

/*
 * The reader reads @verdict, @directive and @reason ("" for none) for case
 * @name.
 */
static inline void ktap_expect_result(struct __test_metadata *_metadata,
				      const char *doc, const char *name,
				      const char *verdict,
				      const char *directive,
				      const char *reason)
{
	char answer[1024];

	EXPECT_EQ(0, ktap_ask(doc, "verdict", name, answer, sizeof(answer)))
		TH_LOG("no result for %s", name);
	EXPECT_STREQ(verdict, answer) TH_LOG("verdict of %s", name);
	EXPECT_EQ(0, ktap_ask(doc, "directive", name, answer, sizeof(answer)));
	EXPECT_STREQ(directive, answer) TH_LOG("directive of %s", name);
	EXPECT_EQ(0, ktap_ask(doc, "reason", name, answer, sizeof(answer)));
	EXPECT_STREQ(reason, answer) TH_LOG("reason of %s", name);
}

/*
 * @doc has @nr results, each with @verdict and @directive, and a reason
 * that holds @reason: one question to the reader ("causes") for all.
 */
static inline void ktap_expect_every_result(struct __test_metadata *_metadata,
					    const char *doc, unsigned int nr,
					    const char *verdict,
					    const char *directive,
					    const char *reason)
{
	static char answer[16384];
	char *line, *save = NULL, *f[4];
	unsigned int i, n = 0;

	ASSERT_EQ(0, ktap_ask(doc, "causes", NULL, answer, sizeof(answer)));
	for (line = strtok_r(answer, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		f[0] = line;
		for (i = 1; i < 4 && f[i - 1]; i++) {
			f[i] = strchr(f[i - 1], '\t');
			if (f[i])
				*f[i]++ = '\0';
		}
		ASSERT_NE(NULL, f[3]) TH_LOG("ktap causes: '%s'", line);
		EXPECT_STREQ(verdict, f[1]) TH_LOG("verdict of %s", f[0]);
		EXPECT_STREQ(directive, f[2]) TH_LOG("directive of %s", f[0]);
		EXPECT_NE(NULL, strstr(f[3], reason))
			TH_LOG("%s: %s", f[0], f[3]);
		n++;
	}
	EXPECT_EQ(nr, n);
}

/*
 * @doc is kselftest's whole-suite SKIP for @reason ("skip-all"): a version
 * line, "1..0 # SKIP <reason>" and nothing else ("body").
 */
static inline void ktap_expect_skip_all(struct __test_metadata *_metadata,
					const char *doc, const char *reason)
{
	char answer[1024];

	ktap_check(_metadata, doc, NULL, 0);
	EXPECT_EQ(0, ktap_ask(doc, "skip-all", NULL, answer, sizeof(answer)));
	EXPECT_STREQ(reason, answer);
	EXPECT_EQ(0, ktap_ask(doc, "body", NULL, answer, sizeof(answer)));
	EXPECT_STREQ("", answer);
}
#endif /* __KSELFTEST_HARNESS_H */

#endif /* MA_TEST_UTIL_H */
