// SPDX-License-Identifier: GPL-2.0
/*
 * ma_hold - a module whose init holds on a gate, and uses no async itself
 *
 * Its init marks "started", waits on the gate until the runner writes 1 to
 * "open" (or gate_ms expires), marks "done" and returns. While it waits the load is under
 * way for as long as the runner likes: what else happens meanwhile (async
 * work an unrelated task queues, a second request for this same module)
 * happens during the load, by construction. The knobs exist from before
 * the init runs (the module's sysfs is set up first).
 *
 * The runner (cases unrelated_async_during_init and
 * request_module_twice_from_async) loads it itself or through
 * request_module(): then it must be installed where modprobe finds it
 * (modules.dep), and it waits the default gate_ms at most.
 */
#include <linux/module.h>

#include "ma_job.h"

MA_KNOB_GATE_MS();
MA_KNOB_OPEN();
MA_KNOB_STARTED();
MA_KNOB_DONE();
MA_KNOB_TIMED_OUT();

/* Never queued: the init holds, not an async job. */
static void ma_job_fn(void *data, async_cookie_t cookie)
{
}

static int __init ma_hold_init(void)
{
	ma_job_begin();
	ma_job_hold();
	WRITE_ONCE(ma_job.done, 1);
	return 0;
}
module_init(ma_hold_init);
module_exit(ma_job_exit);

MODULE_DESCRIPTION("module_async: init holds on a gate, without async");
MODULE_LICENSE("GPL");
