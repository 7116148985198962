// SPDX-License-Identifier: GPL-2.0
/*
 * Prerequisites: of the whole suite (root, module support, the test
 * modules, module loading allowed) and of one case (a target it can load,
 * a kernel whose warnings do not panic it, a policy under which it is safe).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
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
 * A virtual machine, where a case that touches the whole machine harms
 * nothing a throw-away guest's reboot does not mend: the CPU's
 * "hypervisor" flag (x86, under any hypervisor, QEMU's TCG too), Xen's
 * /sys/hypervisor, or QEMU's arm "virt" board. Says how it knows in @why.
 */
static bool machine_virtual(char *why, size_t len)
{
	char *line = NULL, buf[64];
	size_t size = 0;
	bool flag = false;
	FILE *f;

	f = fopen("/proc/cpuinfo", "r");
	while (f && !flag && getline(&line, &size, f) > 0)
		flag = !strncmp(line, "flags", 5) &&
		       strstr(line, " hypervisor");
	free(line);
	if (f)
		fclose(f);
	if (flag)
		snprintf(why, len, "the CPU's hypervisor flag");
	else if (!sysfs_read("/sys/hypervisor/type", buf, sizeof(buf)) && buf[0])
		snprintf(why, len, "/sys/hypervisor/type %s", buf);
	else if (!sysfs_read("/proc/device-tree/compatible", buf, sizeof(buf)) &&
		 !strcmp(buf, "linux,dummy-virt"))
		snprintf(why, len, "QEMU's virt board");
	else
		return false;
	return true;
}

static bool intrusive_ok;

/* Whether the cases that touch the whole machine run here, said once. */
void suite_intrusive(struct suite *s)
{
	char why[96];

	if (s->intrusive >= 0) {
		intrusive_ok = s->intrusive;
		diag("intrusive cases: %s (--intrusive %s)",
		     intrusive_ok ? "run" : "skipped", intrusive_ok ? "yes" : "no");
	} else if (machine_virtual(why, sizeof(why))) {
		intrusive_ok = true;
		diag("intrusive cases: run, in a virtual machine (%s)", why);
	} else {
		diag("intrusive cases: skipped, no virtual machine seen (%s)",
		     "--intrusive yes runs them");
	}
}

/* A case that touches the whole machine skips but where it may. */
bool skip_if_intrusive(struct case_ctx *ctx)
{
	if (!ctx->c->intrusive || intrusive_ok)
		return false;
	verdict(ctx, KTAP_SKIP,
		"it %s: by default in a virtual machine only (--intrusive yes)",
		ctx->c->intrusive);
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
	if (!would_deadlock(s, ctx->c->safety))
		return false;

	if (s->policy == POLICY_UNNAMED)
		verdict(ctx, KTAP_SKIP,
			"would deadlock unless the facts are right: they name no policy");
	else if (s->facts[FACT_UNRELATED] == FACT_YES)
		verdict(ctx, KTAP_SKIP,
			"would deadlock: this kernel syncs all async work on module init");
	else if (ctx->c->safety == UNSAFE_IF_DURING_AWAITED)
		verdict(ctx, KTAP_SKIP,
			"would deadlock: a load here waits for the async work queued while its init runs");
	else if (ctx->c->safety == UNSAFE)
		verdict(ctx, KTAP_SKIP,
			"would deadlock: the nested module's load waits for the job loading it");
	else
		verdict(ctx, KTAP_SKIP,
			"would deadlock unless the kernel skips the sync: policy unknown");
	return true;
}

/* ---- the whole suite's ------------------------------------------------ */

enum prerequisite {
	ROOT,
	MODULE_SUPPORT,
	EVERY_TEST_MODULE,	/* built, all of them */
	FIRST_TEST_MODULE,	/* built, the first one */
	SAME_KERNEL,		/* built for the running kernel */
	LOADING_ENABLED,
	NO_SIGNATURES_ENFORCED,
	NO_LOCKDOWN,
	NO_TEST_MODULE_LOADED,
};

/*
 * The whole suite's prerequisites, checked in this order, each with its
 * reason ("%s": what the check found) in the two forms a missing one is
 * reported in (see enum skip_form). A form with no reason does not check
 * the row: module_async.sh's whole-suite SKIP has always looked for one
 * test module only and at the modules' vermagic, the runner's own form at
 * every module, at kernel.modules_disabled and at leftovers; CI systems
 * have seen both wordings for long, so both stay as they are.
 */
static const struct {
	enum prerequisite what;
	const char *reason[2];	/* by enum skip_form */
} prerequisites[] = {
	{ ROOT, { "not root", "must be run as root" } },
	{ EVERY_TEST_MODULE, { "test modules not built: no %s" } },
	{ MODULE_SUPPORT, {
		"no module support (CONFIG_MODULES)",
		"kernel without module support (CONFIG_MODULES)" } },
	{ FIRST_TEST_MODULE, {
		NULL, "test modules not built (no %s): make -C modules KDIR=..." } },
	{ SAME_KERNEL, { NULL, "test modules built for %s" } },
	{ LOADING_ENABLED, {
		"module loading is disabled (kernel.modules_disabled)" } },
	{ NO_SIGNATURES_ENFORCED, {
		"module signatures enforced: the test modules are unsigned",
		"module signature enforcement is on; the test modules are unsigned" } },
	{ NO_LOCKDOWN, {
		"kernel lockdown is on (%s)",
		"kernel lockdown forbids unsigned modules (%s)" } },
	{ NO_TEST_MODULE_LOADED, {
		"%s is already loaded (left over from an earlier run?)" } },
};

/* Is test module @i missing? Its path in @detail. */
static bool test_module_missing(const struct suite *s, size_t i,
				char *detail, size_t len)
{
	module_path(s, s->test_modules[i], detail, len);
	return access(detail, R_OK);
}

static bool any_test_module_missing(const struct suite *s, char *detail,
				    size_t len)
{
	size_t i;

	for (i = 0; s->test_modules[i]; i++)
		if (test_module_missing(s, i, detail, len))
			return true;
	return false;
}

/* Built for another kernel: "<their release>, running <this one>". */
static bool built_for_another_kernel(const struct suite *s, char *detail,
				     size_t len)
{
	char path[PATH_MAX], vermagic[256];
	struct utsname u;
	size_t n;

	module_path(s, s->test_modules[0], path, sizeof(path));
	if (uname(&u) || module_file_vermagic(path, vermagic, sizeof(vermagic)))
		return false;
	n = strlen(u.release);
	if (!strncmp(vermagic, u.release, n) && vermagic[n] == ' ')
		return false;
	snprintf(detail, len, "%.*s, running %s",
		 (int)strcspn(vermagic, " "), vermagic, u.release);
	return true;
}

/* Is /proc/sys/kernel/@name, or module.@name, not @ok? */
static bool sysctl_is_not(const char *name, const char *ok)
{
	char path[PATH_MAX], value[16];

	snprintf(path, sizeof(path), "/proc/sys/kernel/%s", name);
	return !sysfs_read(path, value, sizeof(value)) && strcmp(value, ok);
}

static bool module_param_is(const char *name, const char *bad)
{
	char value[16];

	return !knob_read("module", name, value, sizeof(value)) &&
	       !strcmp(value, bad);
}

/* Lockdown in a mode other than none: the mode line in @detail. */
static bool locked_down(char *detail, size_t len)
{
	return !sysfs_read("/sys/kernel/security/lockdown", detail, len) &&
	       detail[0] && !strstr(detail, "[none]");
}

static bool test_module_loaded(const struct suite *s, char *detail,
			       size_t len)
{
	size_t i;

	for (i = 0; s->test_modules[i]; i++) {
		if (knob_exists(s->test_modules[i], NULL)) {
			snprintf(detail, len, "%s", s->test_modules[i]);
			return true;
		}
	}
	return false;
}

/* Is @what missing here? What the check found, if anything, in @detail. */
static bool missing(enum prerequisite what, const struct suite *s,
		    char *detail, size_t len)
{
	switch (what) {
	case ROOT:
		return geteuid() != 0;
	case MODULE_SUPPORT:
		return access("/proc/modules", R_OK);
	case EVERY_TEST_MODULE:
		return any_test_module_missing(s, detail, len);
	case FIRST_TEST_MODULE:
		return test_module_missing(s, 0, detail, len);
	case SAME_KERNEL:
		return built_for_another_kernel(s, detail, len);
	case LOADING_ENABLED:
		return sysctl_is_not("modules_disabled", "0");
	case NO_SIGNATURES_ENFORCED:
		return module_param_is("sig_enforce", "Y");
	case NO_LOCKDOWN:
		return locked_down(detail, len);
	case NO_TEST_MODULE_LOADED:
		return test_module_loaded(s, detail, len);
	}
	return false;
}

void suite_check_prerequisites(struct suite *s, enum skip_form form)
{
	char detail[PATH_MAX];
	const char *reason;
	size_t i;

	s->skip_all[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(prerequisites); i++) {
		reason = prerequisites[i].reason[form];
		detail[0] = '\0';
		if (!reason || !missing(prerequisites[i].what, s, detail,
					sizeof(detail)))
			continue;
		snprintf(s->skip_all, sizeof(s->skip_all), reason, detail);
		return;
	}
}
