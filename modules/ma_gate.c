// SPDX-License-Identifier: GPL-2.0
/*
 * ma_gate - holds async jobs, unrelated to any load, on a gate
 *
 * The other half of the policy measurements: it tests nothing itself.
 * Writing 1 to "start" queues one job (or "jobs" of them, given at load)
 * with async_schedule() from the writing task, after the module has loaded;
 * once they are done, again (the policy probe holds jobs this way for each
 * of its measurements).
 * A job marks "started" and waits on a gate until the runner writes 1 to
 * "open" (or gate_ms expires); "held" counts the jobs waiting, "done" is 1
 * once the last has ended. While they wait they are outstanding async work
 * like any other: a kernel whose do_init_module() calls
 * async_synchronize_full() for every module makes any load wait for them.
 *
 * The runner holds this job to measure the kernel's policy safely: it loads
 * ma_plain beside it and sees whether that load returns before the gate
 * opens (cases plain_load_skips_unrelated_async and
 * async_probe_skips_unrelated_async, and the policy probe), and with "jobs"
 * measures a load's latency against many held jobs (--latency). Note that
 * delete_module() also waits for all async work: unload other modules only
 * after opening the gate.
 */
#include <linux/module.h>

#include "ma_job.h"

MA_KNOB_GATE_MS();
MA_KNOB_JOBS();
MA_KNOB_START();
MA_KNOB_OPEN();
MA_KNOB_STARTED();
MA_KNOB_HELD();
MA_KNOB_DONE();
MA_KNOB_TIMED_OUT();

static void ma_job_fn(void *data, async_cookie_t cookie)
{
	ma_job_begin();
	ma_job_hold();
	ma_job_end(0);
}

module_exit(ma_job_exit);

MODULE_DESCRIPTION("module_async: unrelated async jobs held on a gate");
MODULE_LICENSE("GPL");
