// SPDX-License-Identifier: GPL-2.0
/*
 * ma_request - tests request_module() from an async job
 *
 * The 2013 deadlock in its smallest form. Writing 1 to "start" queues one
 * job with async_schedule() (from the writing task, after this module has
 * loaded); the job waits on a gate, open from the start when the module is
 * loaded with "open=1", then calls request_module("%s", target)
 * synchronously, as device probing did when an async probe needed an I/O
 * scheduler, records what it returned in "result", how long it took in
 * "request_us" and the target's own "done" knob as it was the moment the
 * call returned in "target_done", and marks "done". The gate lets two jobs (this module's and
 * ma_request_twin's) be queued before either requests anything.
 *
 * request_module() runs modprobe and waits for it. If the target's
 * do_init_module() waits for all async work, it waits for this job, which
 * waits for modprobe: neither moves again, and the wait is uninterruptible.
 * It does not happen when the target has async_probe, or where the kernel
 * syncs only after an init that used async itself (the 3.8 flag) - unless
 * the target's init does use async (ma_nested). kernel/kmod.c warns about
 * every such call: WARN_ON_ONCE(wait && current_is_async()).
 *
 * The runner (cases request_module_from_async_*, nested_async_load and
 * warn_on_sync_request_from_async) waits for "done" with a bound, and runs
 * the cases that would deadlock only where its policy probe says they
 * cannot, or when told to. A job that never returns keeps its module
 * reference, so the module then cannot be unloaded (rather than crash).
 */
#include <linux/fs.h>
#include <linux/kmod.h>
#include <linux/ktime.h>
#include <linux/module.h>

#include "ma_job.h"

static char target[MODULE_NAME_LEN];
module_param_string(target, target, sizeof(target), 0644);
MODULE_PARM_DESC(target, "the module the job requests");

MA_KNOB_GATE_MS();
MA_KNOB_START();
MA_KNOB_OPEN();
MA_KNOB_STARTED();
MA_KNOB_DONE();
MA_KNOB_TIMED_OUT();
MA_KNOB_RESULT("what request_module() returned");

/* Written before ma_job_end() publishes "done": a reader of done sees it. */
static long request_us = -1;
module_param(request_us, long, 0444);
MODULE_PARM_DESC(request_us, "how long the last request_module() took (us)");

/*
 * The target's "done" knob (a test module's: ma_nested's job, ma_hold's
 * init) read at once after request_module() returned, as the runner reads
 * a load's: 1 or 0, or -errno where the target has no such knob. Written
 * before ma_job_end(), as request_us.
 */
static int target_done = -ENOENT;
module_param(target_done, int, 0444);
MODULE_PARM_DESC(target_done,
		 "the target's done knob when request_module() returned");

static int ma_target_done(const char *name)
{
	char path[sizeof("/sys/module//parameters/done") + MODULE_NAME_LEN];
	char buf[16];
	struct file *f;
	loff_t pos = 0;
	ssize_t n;
	int done, ret;

	snprintf(path, sizeof(path), "/sys/module/%s/parameters/done", name);
	f = filp_open(path, O_RDONLY, 0);
	if (IS_ERR(f))
		return PTR_ERR(f);
	n = kernel_read(f, buf, sizeof(buf) - 1, &pos);
	filp_close(f, NULL);
	if (n < 0)
		return n;
	buf[n] = '\0';
	ret = kstrtoint(strim(buf), 10, &done);
	return ret ? ret : done;
}

static void ma_job_fn(void *data, async_cookie_t cookie)
{
	char name[MODULE_NAME_LEN];
	ktime_t begin, end;
	int ret;

	ma_job_begin();
	ma_job_hold();
	ma_knob_copy(name, target, sizeof(name));
	pr_info("requesting %s from an async job\n", name);
	begin = ktime_get();
	ret = request_module("%s", name);
	end = ktime_get();
	WRITE_ONCE(target_done, ma_target_done(name));
	WRITE_ONCE(request_us, ktime_us_delta(end, begin));
	ma_job_end(ret);
}

module_exit(ma_job_exit);

MODULE_DESCRIPTION("module_async: an async job calls request_module()");
MODULE_LICENSE("GPL");
