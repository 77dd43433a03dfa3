/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The stage contract, observation side: what a stage reports besides its
 * counters (gauges), pages of its tables (show) and what a traced packet
 * found (trace). A stage writes what it reports into an opaque sink; the
 * app renders it: telemetry JSON on the stats socket, the -j JSON report,
 * the console text summary. No stage knows those formats.
 *
 * Threads: gauges, show and busy run on any thread but the owning lcore's
 * (the stats socket's, the main thread's) while the data path runs, and read
 * only what their stage's control reads may read concurrently; never while
 * a reload changes the stage. trace runs on the owning lcore, right after
 * process_burst, for a traced packet only.
 */
#ifndef PF_STAGE_OBS_H
#define PF_STAGE_OBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pf_stage;
struct rte_mbuf;

/** Where observation ops write: a set of named values (app/runtime/sink.c). */
struct pf_sink;

/** Report a named number. */
void pf_sink_u64(struct pf_sink *s, const char *key, uint64_t v);
void pf_sink_int(struct pf_sink *s, const char *key, int64_t v);
/** Report a named string (a renderer may cut it at 127 bytes, keeping the start). */
void pf_sink_str(struct pf_sink *s, const char *key, const char *v);

/** A named value as the app collects them (pf_stage_gauges()). */
struct pf_gauge {
	char name[48];
	uint64_t value;
};

/**
 * A flow as a classifier sees it (/pipefwd/acl_match: the "match" table):
 * addresses in network order (IPv4 in the first 4 bytes), ports in host
 * order (0 for a protocol without ports).
 */
struct pf_tuple {
	uint8_t src[16];
	uint8_t dst[16];
	uint8_t family;           /**< 4 or 6 */
	uint8_t proto;            /**< IPPROTO_* (IPv6: the upper layer, after extension headers) */
	bool nonfirst;            /**< a non-first fragment: no ports to match */
	uint16_t sport;
	uint16_t dport;
	uint16_t in_port;         /**< port index, PF_PORT_NONE when not given */
};

/**
 * A request for one page of a stage's table (/pipefwd/table): the filters a
 * stage honours where they apply, and the page wanted.
 */
struct pf_show_req {
	uint32_t offset;          /**< matching rows to skip */
	uint32_t limit;           /**< most rows to return; the reply's size may cut it shorter */
	int32_t port;             /**< port index, -1: any */
	int32_t vlan;             /**< VLAN ID (0: untagged), -1: any */
	const char *addr;         /**< "lookup": the address asked about, else "" */
	/**
	 * "match": the flow asked about, else NULL. The stage runs it through
	 * its running tables as the data path would (reading only) and reports
	 * what decided it.
	 */
	const struct pf_tuple *tuple;
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
 * Start a page of rows with these columns in @p s. Returns NULL on ENOMEM,
 * or when the sink takes no tables (the caller then reports nothing more).
 */
struct pf_show *pf_show_start(struct pf_sink *s, const struct pf_show_req *req,
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

/** Observation ops (all optional). */
struct pf_stage_obs {
	/** Values besides the counters (table entries, memory, in_flight), into @p out. */
	void (*gauges)(const struct pf_stage *st, struct pf_sink *out);

	/**
	 * Table @p what ("macs", "routes", ...): one page with pf_show_start/row/
	 * end, or named values for single answers ("lookup"). Returns 0,
	 * -ENOENT for a table it does not have, -EINVAL for bad arguments.
	 */
	int (*show)(const struct pf_stage *st, const char *what, const struct pf_show_req *req,
		    struct pf_sink *out);
	/** Table names show() knows, NULL-ended (for help and errors). */
	const char *const *show_tables;

	/**
	 * Packet trace: on the owning lcore right after process_burst ran on the
	 * one traced packet @p m, say in @p buf what the lookup found that the
	 * metadata does not hold (the ACL rule, a session). Reads only.
	 */
	void (*trace)(const struct pf_stage *st, const struct rte_mbuf *m, char *buf, size_t len);

	/** Sinks and holding stages: is anything still buffered? (shutdown drains until not) */
	bool (*busy)(const struct pf_stage *st);

	/**
	 * Packets that left pipefwd other than through a port (host: written to
	 * a host interface); the accounting counts them as sent.
	 */
	uint64_t (*delivered)(const struct pf_stage *st);
};

#endif /* PF_STAGE_OBS_H */
