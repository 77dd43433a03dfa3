/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Live table changes on the stats socket (app/control/pf_changes.h does the
 * work; this file only reads requests and writes replies):
 *
 *   /pipefwd/change,add|del,STAGE,TABLE,ENTRY   TABLE: routes, rules, macs
 *   /pipefwd/port_add,NAME DEVICE [KEY=VALUE ...]  a port added live (rx=, tx=: wired)
 *   /pipefwd/port_del,NAME                      a port removed live
 *   /pipefwd/changes[,OFFSET]                   the list, one page
 *   /pipefwd/changes_check                      the files are as loaded (before a save)
 *   /pipefwd/changes_saved,VERSION              the list is in the files now
 *   /pipefwd/flush,STAGE[,port=P|domain=D]      learned MACs (the stage's act op)
 *
 * Access: like /pipefwd/reload and /pipefwd/capture, any client of the
 * owner-only telemetry socket (0600 in a 0700 directory, commands.c) may
 * change tables; there is no read-only mode to bypass.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_telemetry.h>

#include "pf_changes.h"
#include "pf_console.h"
#include "pf_runtime.h"
#include "pf_sink.h"

#define CHANGES_PAGE 24        /* changes per reply: 16 KiB at their longest */
#define TEL_STR 128            /* DPDK 22.11 telemetry string size, NUL included */

static int
cmd_change(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	struct pf_errs errs = { 0 };
	struct pf_change ch;
	const char *bad;
	char msg[TEL_STR];

	bad = pf_change_parse(con->rt, params, &ch);
	if (bad != NULL) {
		pf_console_error(d, bad);
		return 0;
	}
	if (pf_changes_apply(con->changes, con->rt, &ch, &errs) < 0) {
		pf_errs_first(&errs, msg, sizeof(msg));
		pf_console_error(d, msg);
		return 0;
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "applied", ch.del ? "del" : "add");
	rte_tel_data_add_dict_string(d, "stage", ch.stage);
	rte_tel_data_add_dict_string(d, "table", ch.table);
	rte_tel_data_add_dict_string(d, "entry", ch.entry);
	rte_tel_data_add_dict_u64(d, "unsaved", pf_changes_count(con->changes));
	rte_tel_data_add_dict_u64(d, "version", pf_changes_version(con->changes));
	return 0;
}

/* "NAME DEVICE [KEY=VALUE ...]" or "NAME": a port added or removed live. */
static int
port_change(struct pf_console *con, bool del, const char *params, struct rte_tel_data *d)
{
	struct pf_errs errs = { 0 };
	struct pf_change ch;
	const char *bad;
	char msg[TEL_STR];

	bad = pf_port_change_parse(con->rt, del, params, &ch);
	if (bad != NULL) {
		pf_console_error(d, bad);
		return 0;
	}
	if (pf_changes_apply(con->changes, con->rt, &ch, &errs) < 0) {
		pf_errs_first(&errs, msg, sizeof(msg));
		pf_console_error(d, msg);
		return 0;
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "applied", del ? "port-del" : "port-add");
	rte_tel_data_add_dict_string(d, "port", ch.key);
	rte_tel_data_add_dict_u64(d, "unsaved", pf_changes_count(con->changes));
	rte_tel_data_add_dict_u64(d, "version", pf_changes_version(con->changes));
	return 0;
}

static int
cmd_port_add(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	return port_change(con, false, params, d);
}

static int
cmd_port_del(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	return port_change(con, true, params, d);
}

/* A string cell, keeping the end of what does not fit (paths). */
static void
add_cell(struct rte_tel_data *a, const char *v)
{
	size_t len = strlen(v);

	rte_tel_data_add_array_string(a, len < TEL_STR ? v : v + len - (TEL_STR - 1));
}

/* A dict string keeping the end of what does not fit (paths). */
static void
add_string(struct rte_tel_data *d, const char *name, const char *v)
{
	size_t len = strlen(v);

	rte_tel_data_add_dict_string(d, name, len < TEL_STR ? v : v + len - (TEL_STR - 1));
}

static int
cmd_changes(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	static const char *const cols[] = { "op", "stage", "table", "entry", "key", "file",
					    "item" };
	const struct pf_changes *cl = con->changes;
	const struct pf_changes_stats *cs = pf_changes_stats(cl);
	struct rte_tel_data *a[RTE_DIM(cols)], *line, *col;
	unsigned int k, c, end, n = pf_changes_count(cl);
	unsigned long off = 0;
	char *e;

	if (params != NULL && *params != '\0') {
		off = strtoul(params, &e, 10);
		if (*e != '\0')
			return -EINVAL;
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "version", pf_changes_version(cl));
	rte_tel_data_add_dict_u64(d, "unsaved", n);
	rte_tel_data_add_dict_u64(d, "applied", cs->applied);
	rte_tel_data_add_dict_u64(d, "refused", cs->refused);
	rte_tel_data_add_dict_u64(d, "refused_full", cs->refused_full);
	rte_tel_data_add_dict_u64(d, "discarded", cs->discarded);
	rte_tel_data_add_dict_string(d, "last_error", cs->last_error);
	rte_tel_data_add_dict_string(d, "topology", con->rt->topo->file);
	end = RTE_MIN(n, (unsigned int)RTE_MIN(off + CHANGES_PAGE, (unsigned long)n));
	rte_tel_data_add_dict_int(d, "next", end < n ? (int)end : -1);
	line = rte_tel_data_alloc();
	col = rte_tel_data_alloc();
	for (c = 0; c < RTE_DIM(cols); c++)
		a[c] = rte_tel_data_alloc();
	for (c = 0; c < RTE_DIM(cols); c++)
		if (a[c] == NULL || line == NULL || col == NULL)
			goto nomem;
	for (c = 0; c < RTE_DIM(cols); c++)
		rte_tel_data_start_array(a[c], RTE_TEL_STRING_VAL);
	rte_tel_data_start_array(line, RTE_TEL_INT_VAL);
	rte_tel_data_start_array(col, RTE_TEL_INT_VAL);
	for (k = (unsigned int)RTE_MIN(off, (unsigned long)n); k < end; k++) {
		const struct pf_change *ch = pf_changes_at(cl, k);

		add_cell(a[0], ch->del ? "del" : "add");
		add_cell(a[1], ch->stage);
		add_cell(a[2], ch->table);
		add_cell(a[3], ch->entry);
		add_cell(a[4], ch->key);
		add_cell(a[5], ch->file);
		add_cell(a[6], ch->item);
		rte_tel_data_add_array_int(line, ch->line);
		rte_tel_data_add_array_int(col, ch->col);
	}
	for (c = 0; c < RTE_DIM(cols); c++)
		rte_tel_data_add_dict_container(d, cols[c], a[c], 0);
	rte_tel_data_add_dict_container(d, "line", line, 0);
	rte_tel_data_add_dict_container(d, "col", col, 0);
	return 0;
nomem:
	for (c = 0; c < RTE_DIM(cols); c++)
		rte_tel_data_free(a[c]);
	rte_tel_data_free(line);
	rte_tel_data_free(col);
	return -ENOMEM;
}

/* The client wrote list version @p params into the files: forget it. */
static int
cmd_saved(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	unsigned long long v;
	char *e;

	if (params == NULL || *params == '\0')
		return -EINVAL;
	v = strtoull(params, &e, 10);
	if (*e != '\0')
		return -EINVAL;
	if (pf_changes_saved(con->changes, v) < 0) {
		pf_console_error(d, "the changes changed while they were saved: save again");
		return 0;
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "version", pf_changes_version(con->changes));
	rte_tel_data_add_dict_u64(d, "unsaved", 0);
	return 0;
}

/* Before a save: the files are still those loaded (else the positions moved). */
static int
cmd_check(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	struct pf_errs errs = { 0 };
	char msg[TEL_STR];

	RTE_SET_USED(params);
	if (pf_changes_files_check(con->rt, &errs) < 0) {
		/* The message and the file apart: a long path must not cut the message. */
		snprintf(msg, sizeof(msg), "%.*s", TEL_STR - 1,
			 errs.n != 0 ? errs.e[0].msg : "refused");
		pf_console_error(d, msg);
		add_string(d, "file", errs.n != 0 ? errs.e[0].file : "");
		return 0;
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "files", "as loaded");
	rte_tel_data_add_dict_u64(d, "version", pf_changes_version(con->changes));
	rte_tel_data_add_dict_u64(d, "unsaved", pf_changes_count(con->changes));
	return 0;
}

/* "STAGE[,ARGS]": the stage's act op, on every instance (each acts on what it owns). */
static int
cmd_flush(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	const struct pf_runtime *rt = con->rt;
	const struct pf_stage *st = NULL;
	struct pf_sink out;
	char buf[128], *args;
	uint16_t i;
	int rc = -ENOENT;

	if (params == NULL || snprintf(buf, sizeof(buf), "%s", params) >= (int)sizeof(buf))
		return -EINVAL;
	args = strchr(buf, ',');
	if (args != NULL)
		*args++ = '\0';
	for (i = 0; i < rt->n_stages && st == NULL; i++)
		if (strcmp(rt->stages[i]->conf->group, buf) == 0 ||
		    strcmp(rt->stages[i]->conf->name, buf) == 0)
			st = rt->stages[i];
	if (st == NULL || st->ops->ctl.act == NULL) {
		pf_console_error(d, st == NULL ? "unknown stage" : "this stage has nothing to flush");
		return 0;
	}
	pf_sink_tel_init(&out, d);
	for (i = 0; i < rt->n_stages; i++)
		if (strcmp(rt->stages[i]->conf->group, st->conf->group) == 0) {
			/* The reply is the last instance's outcome. */
			rte_tel_data_start_dict(d);
			rc = st->ops->ctl.act(rt->stages[i], "flush", args != NULL ? args : "", &out);
			if (rc < 0)
				break;
		}
	return rc;
}

const struct pf_cmd pf_change_cmds[] = {
	{ "/pipefwd/change", "pipefwd: live table change. Params: add|del,STAGE,TABLE,ENTRY",
	  cmd_change, false },
	{ "/pipefwd/port_add", "pipefwd: add a port live. Params: NAME DEVICE [KEY=VALUE ...]",
	  cmd_port_add, false },
	{ "/pipefwd/port_del", "pipefwd: remove a port live. Param: NAME", cmd_port_del, false },
	{ "/pipefwd/changes", "pipefwd: unsaved live changes. Param: offset", cmd_changes, false },
	{ "/pipefwd/changes_saved", "pipefwd: changes are in the files. Param: version",
	  cmd_saved, false },
	{ "/pipefwd/changes_check", "pipefwd: are the files as loaded (before a save)",
	  cmd_check, true },
	{ "/pipefwd/flush", "pipefwd: flush learned MACs. Params: STAGE[,port=P|domain=D]",
	  cmd_flush, false },
	{ NULL, NULL, NULL, false },
};
