/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The stage contract, observation side: what a stage reports besides its
 * counters (gauges), pages of its tables (show) and what a traced packet
 * found (trace). The telemetry thread calls gauges and show while the data
 * path runs; trace runs on the owning lcore for a traced packet only.
 */
#ifndef PF_STAGE_OBS_H
#define PF_STAGE_OBS_H

#include <stdbool.h>
#include <stdint.h>

struct rte_tel_data;

/** A named value a stage reports besides its counters (table entries, memory). */
struct pf_gauge {
	char name[48];
	uint64_t value;
};

/**
 * A request for one page of a stage's table (/pipefwd/table, app/console/show.c):
 * the filters a stage honours where they apply, and the page wanted.
 */
struct pf_show_req {
	uint32_t offset;          /**< matching rows to skip */
	uint32_t limit;           /**< most rows to return; the 16 KiB reply may cut it shorter */
	int32_t port;             /**< port index, -1: any */
	int32_t vlan;             /**< VLAN ID (0: untagged), -1: any */
	const char *addr;         /**< "lookup": the address asked about, else "" */
};

/** Column types of a page. */
enum pf_show_type { PF_SHOW_STR = 0, PF_SHOW_U64 };

struct pf_show_col {
	const char *name;
	uint8_t type;             /**< enum pf_show_type */
};

/** One cell of a row: .s for PF_SHOW_STR columns, .u for PF_SHOW_U64. */
union pf_show_val {
	const char *s;
	uint64_t u;
};

struct pf_show;

/**
 * Start the page in @p d with these columns (app/console/show.c). The reply holds
 * one array per column (DPDK 22.11 telemetry nests one level only).
 * Returns NULL on ENOMEM.
 */
struct pf_show *pf_show_start(struct rte_tel_data *d, const struct pf_show_req *req,
			      const struct pf_show_col *cols, uint16_t n_cols);
/**
 * Offer the next matching row. Rows before req->offset are only counted;
 * rows past the page (req->limit or the reply's byte budget) are counted
 * in "total" too. Returns false once the page is full: a caller that need
 * not report the total may stop there.
 */
bool pf_show_row(struct pf_show *sh, const union pf_show_val *vals);
/** Finish the page: total, count, next offset (-1 at the end). Frees @p sh. */
void pf_show_end(struct pf_show *sh);
/** "aa:bb:cc:dd:ee:ff" into @p buf (18 bytes). */
void pf_show_mac(char *buf, const uint8_t *mac);

#endif /* PF_STAGE_OBS_H */
