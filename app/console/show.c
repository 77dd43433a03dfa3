/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The telemetry renderer of the observation sink (app/runtime/pf_sink.h):
 * named values become dict entries, and pages of table rows for
 * /pipefwd/table (stages' show ops) column arrays. DPDK 22.11
 * telemetry nests containers one level deep and drops what does not fit in
 * its 16 KiB reply buffer, so a page is one array per column, and rows stop
 * joining it once the JSON they would take passes a byte budget: the client
 * asks again from "next". No row is ever cut silently: "count" says how many
 * the page holds, "total" how many matched.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_telemetry.h>

#include "pf_console.h"
#include "pf_sink.h"

#define SHOW_REPLY_MAX 16384
/* Room for the reply's header fields, column names and brackets. */
#define SHOW_HEADER 1024
#define SHOW_COLS_MAX 12

struct pf_show {
	struct rte_tel_data *d;
	struct rte_tel_data *col[SHOW_COLS_MAX];
	const struct pf_show_col *cols;
	uint16_t n_cols;
	uint32_t offset, limit;
	uint32_t seen;            /* matching rows so far */
	uint32_t count;           /* rows in the page */
	uint32_t bytes;           /* JSON the page's rows take */
	uint32_t budget;
	bool full;
};

static struct pf_show *
tel_show_start(void *ctx, const struct pf_show_req *req, const struct pf_show_col *cols,
	       uint16_t n_cols)
{
	struct rte_tel_data *d = ctx;
	struct pf_show *sh = calloc(1, sizeof(*sh));
	uint32_t hdr = SHOW_HEADER;
	uint16_t c;

	if (sh == NULL || n_cols > SHOW_COLS_MAX) {
		free(sh);
		return NULL;
	}
	for (c = 0; c < n_cols; c++) {
		sh->col[c] = rte_tel_data_alloc();
		if (sh->col[c] == NULL) {
			while (c-- > 0)
				rte_tel_data_free(sh->col[c]);
			free(sh);
			return NULL;
		}
		rte_tel_data_start_array(sh->col[c], cols[c].type == PF_SHOW_STR ?
					 RTE_TEL_STRING_VAL : RTE_TEL_U64_VAL);
		hdr += (uint32_t)strlen(cols[c].name) + 8;
	}
	sh->d = d;
	sh->cols = cols;
	sh->n_cols = n_cols;
	sh->offset = req->offset;
	sh->limit = RTE_MIN(req->limit, (uint32_t)RTE_TEL_MAX_ARRAY_ENTRIES);
	sh->budget = SHOW_REPLY_MAX - hdr;
	return sh;
}

/* What a row adds to the JSON reply: each cell and its separator. */
static uint32_t
row_bytes(const struct pf_show *sh, const union pf_show_val *vals)
{
	char num[24];
	uint32_t n = 0;
	uint16_t c;

	for (c = 0; c < sh->n_cols; c++)
		n += sh->cols[c].type == PF_SHOW_STR ?
		     (uint32_t)strnlen(vals[c].s, RTE_TEL_MAX_STRING_LEN) + 3 :
		     (uint32_t)snprintf(num, sizeof(num), "%" PRIu64, vals[c].u) + 1;
	return n;
}

bool
pf_show_row(struct pf_show *sh, const union pf_show_val *vals)
{
	uint32_t b;
	uint16_t c;

	sh->seen++;
	if (sh->seen <= sh->offset || sh->full)
		return !sh->full;
	b = row_bytes(sh, vals);
	if (sh->count == sh->limit || sh->bytes + b > sh->budget) {
		sh->full = true;
		return false;
	}
	for (c = 0; c < sh->n_cols; c++) {
		if (sh->cols[c].type == PF_SHOW_STR)
			rte_tel_data_add_array_string(sh->col[c], vals[c].s);
		else
			rte_tel_data_add_array_u64(sh->col[c], vals[c].u);
	}
	sh->bytes += b;
	sh->count++;
	return true;
}

void
pf_show_end(struct pf_show *sh)
{
	struct rte_tel_data *names = rte_tel_data_alloc();
	uint16_t c;

	rte_tel_data_add_dict_u64(sh->d, "total", sh->seen);
	rte_tel_data_add_dict_u64(sh->d, "offset", sh->offset);
	rte_tel_data_add_dict_u64(sh->d, "count", sh->count);
	rte_tel_data_add_dict_int(sh->d, "next", sh->offset + sh->count < sh->seen ?
				  (int)(sh->offset + sh->count) : -1);
	if (names != NULL) {
		rte_tel_data_start_array(names, RTE_TEL_STRING_VAL);
		for (c = 0; c < sh->n_cols; c++)
			rte_tel_data_add_array_string(names, sh->cols[c].name);
		if (rte_tel_data_add_dict_container(sh->d, "columns", names, 0) != 0)
			rte_tel_data_free(names);
	}
	for (c = 0; c < sh->n_cols; c++)
		if (rte_tel_data_add_dict_container(sh->d, sh->cols[c].name, sh->col[c], 0) != 0)
			rte_tel_data_free(sh->col[c]);
	free(sh);
}

/* ---- named values --------------------------------------------------------- */

static void
tel_u64(void *ctx, const char *key, uint64_t v)
{
	rte_tel_data_add_dict_u64(ctx, key, v);
}

static void
tel_i64(void *ctx, const char *key, int64_t v)
{
	rte_tel_data_add_dict_int(ctx, key, (int)RTE_MAX(RTE_MIN(v, (int64_t)INT32_MAX),
							 (int64_t)INT32_MIN));
}

static void
tel_str(void *ctx, const char *key, const char *v)
{
	char buf[RTE_TEL_MAX_STRING_LEN];

	/* 22.11 refuses a longer string: keep its start. */
	snprintf(buf, sizeof(buf), "%s", v);
	rte_tel_data_add_dict_string(ctx, key, buf);
}

static const struct pf_sink_ops tel_ops = {
	.u64 = tel_u64,
	.i64 = tel_i64,
	.str = tel_str,
	.show_start = tel_show_start,
};

void
pf_sink_tel_init(struct pf_sink *s, struct rte_tel_data *d)
{
	s->ops = &tel_ops;
	s->ctx = d;
}
