/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Live table changes (app/control/changes.c): add or delete a route, a static MAC or
 * an ACL rule on the stats socket, and flush learned MACs, without editing a
 * file. A change is applied like a reload of the running file with every
 * live change on top (pf_topo_load_edited, pf_reload_live): the stage builds
 * its new table beside the running one and swaps it (RCU) or has its lcore
 * apply the difference between bursts, so the data path never waits.
 *
 * The topology file stays the source of truth: the changes are kept as a
 * list (/pipefwd/changes), written back by `pipefwd-ctl changes --save`, and
 * a reload of the file discards those not saved, saying which.
 *
 * Commands (owner-only socket, like /pipefwd/reload and capture):
 *   /pipefwd/change,add|del,STAGE,TABLE,ENTRY   TABLE: routes, rules, macs
 *   /pipefwd/changes[,OFFSET]                   the list, one page
 *   /pipefwd/changes_saved,VERSION              the list is in the files now
 *   /pipefwd/flush,STAGE[,port=P|domain=D]      learned MACs (stage act op)
 */
#ifndef PF_CHANGES_H
#define PF_CHANGES_H

#include <stddef.h>

#include "pf_runtime.h"

/** Register the commands (first call) and publish @p rt to them. */
int pf_changes_init(struct pf_runtime *rt);

/** Withdraw the runtime (commands answer null). Before pf_runtime_stop(). */
void pf_changes_shutdown(void);

/**
 * A reload of the file applied: forget the unsaved changes, log each, and
 * describe them in @p msg. Returns how many were discarded.
 */
unsigned int pf_changes_discard(char *msg, size_t len);

#endif /* PF_CHANGES_H */
