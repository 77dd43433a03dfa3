/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * What the runtime serves every stage (app/runtime/services.c): the clock,
 * grace periods a worker can test without waiting, and heap use. A stage
 * never waits for the other lcores itself: its live update hands the old
 * state back (pf_stage_ctl.commit) and the runtime waits one grace period
 * for the whole reload before releasing it.
 */
#ifndef PF_SERVICES_H
#define PF_SERVICES_H

#include <stdbool.h>
#include <stdint.h>

/**
 * Time for stages, in nanoseconds. With clock "wall" it follows the TSC;
 * with clock "pcap" it is the newest packet timestamp seen by rx, so replay
 * tests can age tables without waiting.
 */
uint64_t pf_now_ns(void);
/** rx calls this with each packet timestamp in pcap mode. */
void pf_clock_advance_ns(uint64_t ns);

/**
 * Non-blocking grace periods for the data path (a worker must never wait for
 * the others): pf_rcu_start() returns a token, pf_rcu_done(token) is true
 * once every worker has passed a quiescent point since. Without a running
 * runtime (unit tests) every token is done at once.
 */
uint64_t pf_rcu_start(void);
bool pf_rcu_done(uint64_t token);

/** Bytes allocated on every DPDK heap now (stages report table memory as a delta). */
uint64_t pf_heap_used(void);

#endif /* PF_SERVICES_H */
