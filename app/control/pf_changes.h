/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Live table changes (app/control/changes.c): add or delete a route, a
 * static MAC or an ACL rule without editing a file. A plain module: no
 * telemetry, no globals; the console's /pipefwd/change commands
 * (app/console/change_cmds.c) own one list and call it under their lock.
 *
 * A change is applied like a reload of the running file with every live
 * change on top (pf_topo_load_edited, then pf_reload_live): the stage builds
 * its new table beside the running one and swaps it, or has its lcore apply
 * the difference between bursts, so the data path never waits. The list
 * joins the change only once it runs; a refused change leaves the list and
 * the data path as they were. A delete of an entry added live takes that add
 * off the list instead (the file never had it).
 *
 * The topology file stays the source of truth: the list is written back by
 * `pipefwd-ctl changes --save`, and a reload of the file discards what was
 * not saved (pf_changes_discard).
 */
#ifndef PF_CHANGES_H
#define PF_CHANGES_H

#include <stddef.h>
#include <stdint.h>

#include "pf_err.h"
#include "pf_stage_ctl.h"

struct pf_runtime;

/** Unsaved changes held; then they must be saved (a delete that takes one back is always taken). */
#define PF_CHANGES_MAX 256

/** Outcomes since start, for /pipefwd/changes. */
struct pf_changes_stats {
	uint64_t applied, refused, refused_full, discarded;
	char last_error[128];
};

struct pf_changes;

/** A new empty list, or NULL (ENOMEM). */
struct pf_changes *pf_changes_new(void);
void pf_changes_free(struct pf_changes *cl);

/**
 * Read "add|del,STAGE,TABLE,ENTRY" into @p ch, checked against @p rt's
 * stages (the stage exists, has live changes and that table). Returns NULL,
 * or what is wrong (a constant string).
 */
const char *pf_change_parse(const struct pf_runtime *rt, const char *text, struct pf_change *ch);

/**
 * A live port change (pipefwd-ctl port-add, port-del) from @p text: for an
 * add "NAME DEVICE [KEY=VALUE ...]", for a delete "NAME"; table "ports", no
 * stage, key NAME. Applied like a table change (pf_changes_apply), as an
 * edit of the topology's ports and the rx/tx stages' port lists
 * (pf_topo_port_changes). Returns NULL, or what is wrong (a constant
 * string): a name in use, no such port.
 */
const char *pf_port_change_parse(const struct pf_runtime *rt, bool del, const char *text,
				 struct pf_change *ch);

/**
 * Apply @p ch to @p rt on top of the list. Returns 0 with *@p ch normalised
 * by its stage (entry, key, save location), or -errno with errors in
 * @p errs: -ENOSPC when the list is full and @p ch takes nothing back, else
 * what the stage's edit or update refused. Not reentrant: one caller at a
 * time (the console's lock).
 */
int pf_changes_apply(struct pf_changes *cl, struct pf_runtime *rt, struct pf_change *ch,
		     struct pf_errs *errs);

/** Changes in the list, and change @p k of them (0 .. count-1). */
unsigned int pf_changes_count(const struct pf_changes *cl);
const struct pf_change *pf_changes_at(const struct pf_changes *cl, unsigned int k);
/** Bumps with every change to the list: what a save names. */
uint64_t pf_changes_version(const struct pf_changes *cl);
const struct pf_changes_stats *pf_changes_stats(const struct pf_changes *cl);

/**
 * A client wrote list version @p version into the files: forget the list.
 * Returns 0, or -ESTALE when the list changed since (nothing forgotten).
 */
int pf_changes_saved(struct pf_changes *cl, uint64_t version);

/**
 * Before a save writes the files: are they still what @p rt loaded (the
 * topology and every table file)? The list's positions hold only then.
 * Returns 0, or -ESTALE (a file changed on disk) / -EINVAL (it no longer
 * loads) with what is wrong in @p errs.
 */
int pf_changes_files_check(const struct pf_runtime *rt, struct pf_errs *errs);

/**
 * A reload of the file applied: forget the unsaved changes, log each, and
 * describe them in @p msg. Returns how many were discarded.
 */
unsigned int pf_changes_discard(struct pf_changes *cl, char *msg, size_t len);

#endif /* PF_CHANGES_H */
