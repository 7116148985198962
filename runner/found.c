// SPDX-License-Identifier: GPL-2.0
/*
 * The machine left as found, checked: the state is read before each case
 * and after its cleanup, and before the first case and after the last; a
 * difference fails the case that made it, printed ("# left as found:
 * no: ..."), and one at the end of the run fails the run (exit 1).
 *
 * The state (lib/state.h): the loaded modules (one another loads meanwhile,
 * udev say, is no difference), the reference counts of the
 * suite's modules (the test modules, the kernel's that the cases load),
 * every knob the suite writes (module.async_probe, its modprobe.d file,
 * the freezer's test mode and its timeouts),
 * the null_blk devices. A gate is a test module's knob: none is left where
 * no test module is.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "runner.h"

static const char * const watched[] = {
	"/sys/module/module/parameters/async_probe",
	MODPROBE_RUN_DIR "*",		/* the directory made */
	ASYNC_PROBE_CONF,
	"/sys/block/nullb*",
	PM_TEST,
	PM_FREEZE_TIMEOUT,
	PM_TEST_DELAY,
	NULL,
};

/* Before the run's first case, before this case; after it. */
static struct ma_state run_before, case_before, now;
static bool run_saved;

/* The suite's modules, normalized as /proc/modules lists them. */
static const char *counted[2 * MA_TEST_MODULES_MAX + 1];

int found_save(struct ma_state *st)
{
	return state_read(st, "/proc/modules", watched);
}

int found_diff(const struct ma_state *before, char *diff, size_t len)
{
	diff[0] = '\0';
	if (found_save(&now))
		return 0;
	return state_diff(before, &now, counted, diff, len);
}

void found_run_begin(struct suite *s, const char * const kernel_modules[])
{
	size_t n = 0, i;

	for (i = 0; s->test_modules[i]; i++)
		counted[n++] = s->test_modules[i];
	for (i = 0; kernel_modules[i] && n < ARRAY_SIZE(counted) - 1; i++)
		counted[n++] = kernel_modules[i];
	counted[n] = NULL;
	run_saved = !found_save(&run_before);
}

void found_case_begin(void)
{
	if (found_save(&case_before))
		case_before.nr_modules = 0;
}

void found_case_check(struct case_ctx *ctx)
{
	static char diff[1024];

	if (ktap_wedged_by() || !found_diff(&case_before, diff, sizeof(diff)))
		return;
	diag("left as found: no: %s", diff);
	if (ctx->verdict.kind == KTAP_PASS || ctx->verdict.kind == KTAP_SKIP ||
	    ctx->verdict.kind == KTAP_XFAIL) {
		if (ctx->verdict.kind != KTAP_PASS)
			diag("%s", ctx->verdict.reason);
		verdict(ctx, KTAP_FAIL, "did not leave the machine as found: %s",
			diff);
	}
}

bool found_run_check(void)
{
	static char diff[1024];

	if (ktap_wedged_by()) {
		diag("left as found: not checked: kernel wedged by %s",
		     ktap_wedged_by());
		return true;
	}
	if (!run_saved) {
		diag("left as found: not checked: cannot read /proc/modules");
		return true;
	}
	if (found_diff(&run_before, diff, sizeof(diff))) {
		diag("left as found: no: %s", diff);
		return false;
	}
	diag("left as found: yes: %u modules loaded, as before the first case",
	     now.nr_modules);
	return true;
}
