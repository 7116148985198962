// SPDX-License-Identifier: GPL-2.0
/*
 * Prerequisites: of the whole suite (root, module support, the test
 * modules, module loading allowed) and of one case (a target it can load,
 * a kernel whose warnings do not panic it, a policy under which it is safe).
 */
#include <stdarg.h>
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"

static bool warnings_panic(void)
{
	char value[16];

	return !sysfs_read("/proc/sys/kernel/panic_on_warn", value,
			   sizeof(value)) && strcmp(value, "0");
}

/* The case's job calls request_module() from async: the kernel WARNs. */
bool skip_if_warn_panics(struct case_ctx *ctx)
{
	if (!warnings_panic())
		return false;
	verdict(ctx, KTAP_SKIP,
		"kernel.panic_on_warn is set: the kernel's warning would panic it");
	return true;
}

/*
 * Why this case cannot load @target (built in, already loaded, not
 * installed), in @buf; NULL if it can.
 */
const char *why_not_loadable(const struct case_ctx *ctx, const char *target,
			     char *buf, size_t len)
{
	char name[MA_MODULE_NAME_LEN];

	module_name_normalize(name, target, sizeof(name));
	if (module_builtin(name))
		snprintf(buf, len, "%s is built in: there is nothing to load",
			 target);
	else if (knob_exists(name, NULL) || modlist_has(&ctx->before, name))
		snprintf(buf, len, "%s is already loaded: unload it to test loading it",
			 target);
	else if (!module_available(name))
		snprintf(buf, len, "%s is not available to modprobe (modules.dep)",
			 target);
	else
		return NULL;
	return buf;
}

bool skip_unless_loadable(struct case_ctx *ctx, const char *target)
{
	char reason[128];

	if (!why_not_loadable(ctx, target, reason, sizeof(reason)))
		return false;
	verdict(ctx, KTAP_SKIP, "%s", reason);
	return true;
}

/*
 * Would this case wedge this kernel for good? Then it skips. True if the
 * case must not run (its verdict is set: a skip, or the probe's wedge).
 */
bool skip_if_unsafe(struct case_ctx *ctx)
{
	struct suite *s = ctx->suite;

	if (ctx->c->safety == SAFE || s->allow_deadlock)
		return false;
	suite_probe_policy(ctx);
	if (ktap_wedged_by())
		return true;
	if (s->policy == POLICY_SKIP_IF_UNUSED && ctx->c->safety != UNSAFE)
		return false;

	if (s->policy == POLICY_ALWAYS_SYNC)
		verdict(ctx, KTAP_SKIP,
			"would deadlock: this kernel syncs all async work on module init");
	else if (ctx->c->safety == UNSAFE)
		verdict(ctx, KTAP_SKIP,
			"would deadlock: the nested module's load waits for the job loading it");
	else
		verdict(ctx, KTAP_SKIP,
			"would deadlock unless the kernel skips the sync: policy unknown");
	return true;
}

static void __printf(2, 3)
suite_skip_all(struct suite *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->skip_all, sizeof(s->skip_all), fmt, ap);
	va_end(ap);
}

void suite_check_prerequisites(struct suite *s)
{
	char path[PATH_MAX], value[64];
	size_t i;

	if (geteuid() != 0) {
		suite_skip_all(s, "not root");
		return;
	}
	for (i = 0; s->test_modules[i]; i++) {
		module_path(s, s->test_modules[i], path, sizeof(path));
		if (access(path, R_OK)) {
			suite_skip_all(s, "test modules not built: no %s", path);
			return;
		}
	}
	if (access("/proc/modules", R_OK)) {
		suite_skip_all(s, "no module support (CONFIG_MODULES)");
		return;
	}
	if (!sysfs_read("/proc/sys/kernel/modules_disabled", value,
			sizeof(value)) && strcmp(value, "0")) {
		suite_skip_all(s, "module loading is disabled (kernel.modules_disabled)");
		return;
	}
	if (!knob_read("module", "sig_enforce", value, sizeof(value)) &&
	    !strcmp(value, "Y")) {
		suite_skip_all(s, "module signatures enforced: the test modules are unsigned");
		return;
	}
	if (!sysfs_read("/sys/kernel/security/lockdown", path, sizeof(path)) &&
	    !strstr(path, "[none]") && path[0]) {
		suite_skip_all(s, "kernel lockdown is on (%s)", path);
		return;
	}
	for (i = 0; s->test_modules[i]; i++) {
		if (knob_exists(s->test_modules[i], NULL)) {
			suite_skip_all(s, "%s is already loaded (left over from an earlier run?)",
				       s->test_modules[i]);
			return;
		}
	}
}
