/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Live stats on DPDK's telemetry socket (app/console/telemetry.c).
 *
 * pipefwd registers /pipefwd/{rings,stages,lcores,ports,config,totals,table,clear,...} with
 * rte_telemetry_register_cmd, so any DPDK telemetry client (dpdk-telemetry.py,
 * scripts/pipefwd-ctl) reads them from
 * <runtime dir>/dpdk_telemetry.v2 (/var/run/dpdk/<file-prefix>/ for root).
 * docs/stats.md describes every field.
 *
 * Readers never lock the data path: every counter has one writer (the lcore
 * running the stage or ring end) and is read with relaxed 64-bit loads, so a
 * reply is a set of recent values, not an atomic snapshot across counters.
 */
#ifndef PF_TELEMETRY_H
#define PF_TELEMETRY_H

#include "pf_runtime.h"

/**
 * Make the runtime directory (0700) and the telemetry socket (0600) private
 * to the owner, then publish @p rt to the /pipefwd/... commands (registered
 * on the first call). Call after pf_runtime_create().
 * Returns 0, or -errno when the socket could not be secured or the commands
 * not registered (the caller may go on: stats are then unavailable or only
 * as private as the directory).
 */
int pf_telemetry_register(struct pf_runtime *rt);

/**
 * Withdraw the runtime from the commands (they answer null from now on) and
 * wait for any reply being built. Call before pf_runtime_stop().
 */
void pf_telemetry_unregister(void);

/**
 * Hold replies (clients wait, they are not refused) while the main thread
 * changes what they read: pf_reload() rewrites the topology in place.
 * Never call from a worker lcore.
 */
void pf_telemetry_pause(void);
void pf_telemetry_resume(void);

/** Called (from the telemetry thread) by /pipefwd/reload; must only set a flag. */
void pf_telemetry_set_reload_hook(void (*fn)(void));

#endif /* PF_TELEMETRY_H */
