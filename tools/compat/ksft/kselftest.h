/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For the standalone build only, never part of the suite in a kernel tree:
 * kselftest.h's ksft_test_result_code() for a kselftest.h without it (5.10's
 * and 6.1's; 6.12's and 7.2's have it). Where kselftest.h lacks the
 * function the build puts this directory before the tree's on the include
 * path (tools/compat/compat.mk): "kselftest.h" is this file, which includes
 * the tree's (#include_next) and adds the function.
 *
 * "ok|not ok N <test_name>", then " # SKIP ", " # XFAIL " or " # XPASS "
 * for those codes, " #  " before a message of a pass or failure, the
 * message, and counted as the code says; any other code is a failure.
 */
#ifndef MA_COMPAT_KSELFTEST_H
#define MA_COMPAT_KSELFTEST_H

#include_next "kselftest.h"

static inline __attribute__((format(printf, 3, 4)))
void ksft_test_result_code(int exit_code, const char *test_name,
			   const char *msg, ...)
{
	const char *verdict = "ok", *directive = "";
	int saved_errno = errno;
	va_list args;

	switch (exit_code) {
	case KSFT_PASS:
		ksft_inc_pass_cnt();
		break;
	case KSFT_SKIP:
		directive = " # SKIP ";
		ksft_inc_xskip_cnt();
		break;
	case KSFT_XFAIL:
		directive = " # XFAIL ";
		ksft_inc_xfail_cnt();
		break;
	case KSFT_XPASS:
		directive = " # XPASS ";
		ksft_inc_xpass_cnt();
		break;
	default:
		verdict = "not ok";
		ksft_inc_fail_cnt();
		break;
	}
	if (!directive[0] && msg)
		directive = " #  ";
	printf("%s %u %s%s", verdict, ksft_test_num(), test_name, directive);
	if (msg) {
		errno = saved_errno;
		va_start(args, msg);
		vprintf(msg, args);
		va_end(args);
	}
	printf("\n");
}

#endif /* MA_COMPAT_KSELFTEST_H */
