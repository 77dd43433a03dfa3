/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Live packet capture into pcapng files (app/console/capture.c).
 *
 * A client (pipefwd-ctl capture) asks through the telemetry socket for the
 * next N packets crossing an edge between two stages or a port, and a file:
 *
 *   /pipefwd/capture,TARGET,COUNT[,overwrite][,snaplen=N],/ABSOLUTE/PATH
 *   /pipefwd/capture_status
 *   /pipefwd/capture_stop
 *
 * TARGET is a ring ("rx->xc", or its key "rx_to_xc"), a port "p0"
 * (received and sent), "p0:rx" or "p0:tx", or the dropped packets: "drop"
 * (every reason), "drop:REASON" or "drop:STAGE:REASON". Arming stores a tap pointer in
 * the rings or stages concerned; the lcore that owns them sees it at its next
 * burst, copies the packets into a private mempool and hands the copies to
 * an MP/SC ring. A writer thread, alive only while a capture runs, formats
 * them with rte_pcapng and writes the file. With no capture armed the data
 * path pays one load and one never-taken branch per burst.
 */
#ifndef PF_CAPTURE_H
#define PF_CAPTURE_H

#include <stdint.h>

#include <rte_mbuf.h>

#include "pf_runtime.h"

/**
 * Data path, called by the lcore that owns a tapped ring or source stage
 * when *@p where is not NULL: copy the packets of the burst that the tap
 * selects (all of them for an edge; by port for a port), as long as the
 * capture wants more. Never blocks; a copy that finds no mbuf or no room in
 * the writer's ring is counted as dropped. The packets are not modified.
 */
void pf_capture_burst(struct pf_cap_tap **where, struct rte_mbuf **pkts, uint16_t n);

/**
 * Data path, drop capture (TARGET "drop", "drop:REASON", "drop:STAGE:REASON"):
 * copy @p m, which stage @p stage drops for @p reason (its counter index, or
 * PF_REASON_RING_FULL / PF_REASON_NO_EDGE), if the tap wants that reason.
 * The file gets "STAGE:REASON" in the packet's comment. Called by
 * app/console/trace.c before the packet is freed.
 */
void pf_capture_drop(struct pf_cap_tap *tap, struct rte_mbuf *m, uint16_t stage, uint16_t reason);

/**
 * Where captures may be written: @p dir (pipefwd --capture-dir; it must
 * exist), or NULL for the default, the DPDK runtime directory's captures/
 * (made 0700 at the first capture). Call before pf_capture_init().
 */
void pf_capture_set_dir(const char *dir);
/** The capture directory in use (after EAL init for the default). */
const char *pf_capture_dir(void);

/**
 * Register the /pipefwd/capture* telemetry commands (once) and publish
 * @p rt to them. Returns 0 or -errno (capture is then unavailable).
 */
int pf_capture_init(struct pf_runtime *rt);

/**
 * Stop a running capture (its file is completed and closed), wait for the
 * writer thread, withdraw the runtime from the commands and free the
 * capture's memory. Call while the workers still run, before
 * pf_runtime_stop(). Safe to call when nothing was captured.
 */
void pf_capture_shutdown(void);

#endif /* PF_CAPTURE_H */
