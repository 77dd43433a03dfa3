/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Where asynchronous signals run. A signal sent to the process goes to any
 * thread that does not block it, preferring one with none pending; under a
 * stream of them (net_tap raises its real-time signal once a received
 * frame) a loaded machine leaves the idle threads with signals pending and
 * the kernel hands the rest to whichever thread is running: a worker lcore,
 * which then runs handlers instead of passes (rx stood still for 0.5 s in
 * fault_tap_signals), or the main thread, which then misses its stop. So
 * every thread blocks them, and one thread, pf-signals, takes them all: its
 * handlers only set flags and counters that the others read.
 */
#ifndef PF_SIGNALS_H
#define PF_SIGNALS_H

/**
 * Block asynchronous signals in the calling thread, before it creates any
 * other (EAL's lcores and control threads inherit the mask). Faults
 * (SIGSEGV and the like) stay open: blocked, they would kill without the
 * handler's report.
 */
void pf_signals_block(void);

/**
 * Start pf-signals, the thread that unblocks them and runs their handlers
 * (after rte_eal_init). If it cannot start, the calling thread unblocks
 * them instead, as before.
 *
 * @return 0, or a negative errno (the fallback is in place).
 */
int pf_signals_start(void);

#endif /* PF_SIGNALS_H */
