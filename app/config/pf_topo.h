/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The topology: ports, stages, rings and the lcore map, as loaded from one
 * YAML file and fully validated before anything runs.
 *
 * pf_topo_load() does both passes (types and ranges, then the graph) and the
 * stages' own parameter parsing, without touching DPDK. The result is what
 * the runtime builds from, what --check prints about, and what a reload is
 * compared against.
 */
#ifndef PF_TOPO_H
#define PF_TOPO_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "pf_eal.h"
#include "pf_stage_ctl.h"

#define PF_MAX_RINGS 256
#define PF_MAX_LCORES 128        /**< RTE_MAX_LCORE of Debian's DPDK */
#define PF_MAX_EAL_ARGS 64

#define PF_RING_SIZE_DEFAULT 1024

/** One ring: all edges from one stage to another share it (order is kept). */
struct pf_ring_conf {
	char name[2 * PF_NAME_MAX + 4];  /**< "from->to" */
	uint16_t from, to;               /**< stage indexes */
	uint32_t size;                   /**< rte_ring size (power of two, usable size-1) */
	uint32_t burst;                  /**< consumer dequeue burst */
};

struct pf_lcore_conf {
	unsigned int id;
	const struct pf_node *node;      /**< its key in `lcores:` (for messages) */
	uint16_t n_stages;
	uint16_t stages[PF_MAX_STAGES];
};

/** Route sources (route_sources:): where learnt routes come from (app/control/routing.c). */
#define PF_MAX_SOURCES 8                 /**< == PF_ROUTE_SRC_MAX: a source is a learnt source id */

enum pf_source_type {
	PF_SOURCE_FPM = 1,   /**< FRR zebra's dplane_fpm_nl connects to us over TCP */
	PF_SOURCE_NETLINK,   /**< the kernel routing table of a namespace (BIRD, ip route) */
};

struct pf_source_conf {
	char name[PF_NAME_MAX];
	const struct pf_node *node;      /**< its mapping, for messages */
	enum pf_source_type type;
	uint8_t id;                      /**< learnt source id: the lowest wins a prefix */
	char ns[64];                     /**< network namespace ("": pipefwd's own) */
	char listen[64];                 /**< fpm: the address to listen on (numeric) */
	uint16_t port;                   /**< fpm: TCP port */
	uint32_t table;                  /**< netlink: the kernel table followed */
	uint32_t grace_ms;               /**< routes kept this long after the source went away */
	uint32_t resync_ms;              /**< fpm: after a reconnect, stale routes swept this late */
};

/** runtime.hugepages: EAL memory from hugepages or not. */
enum pf_hugepages {
	PF_HUGE_AUTO = 0,    /**< hugepages when /proc/meminfo shows free ones, else --no-huge */
	PF_HUGE_ON,          /**< EAL's default: fail without hugepages */
	PF_HUGE_OFF,         /**< always --no-huge */
};

struct pf_topo {
	char file[PATH_MAX];
	struct pf_doc *doc;
	uint64_t doc_hash;               /**< of the file's tree, before live port changes */

	int eal_argc;
	char *eal_argv[PF_MAX_EAL_ARGS];
	bool eal_has_lcores;             /**< the file chose lcores itself (-l/-c/--lcores) */
	unsigned int main_lcore;
	struct pf_eal eal;               /**< what the eal list asks for (pf_eal_read; main adds the command line's) */

	uint16_t n_ports;                /**< indexes used; a hole has pf_port_present() false */
	struct pf_port_conf ports[PF_MAX_PORTS];
	uint16_t n_stages;
	struct pf_stage_conf stages[PF_MAX_STAGES];
	uint16_t n_rings;
	struct pf_ring_conf rings[PF_MAX_RINGS];
	uint16_t n_lcores;
	struct pf_lcore_conf lcores[PF_MAX_LCORES];
	uint16_t n_sources;
	struct pf_source_conf sources[PF_MAX_SOURCES];

	uint32_t ring_size_default;
	uint32_t burst_default;
	uint32_t mbufs;                  /**< pool size: configured or derived */
	uint32_t mbufs_required;         /**< what the topology needs at least */
	uint16_t mbuf_data_size;
	uint32_t tx_flush_us;
	enum pf_clock_mode clock;
	/** runtime.backpressure: lossless mode, a stage takes only what its downstream rings hold */
	bool backpressure;
	/** runtime.latency: measure ring sojourn and rx -> tx latency from start */
	bool latency;
	/**
	 * runtime.idle_sleep_us: an lcore that found nothing to do sleeps this long
	 * (0: polls without pause); default from PIPEFWD_IDLE_SLEEP_US, else 0.
	 */
	uint32_t idle_sleep_us;
#define PF_IDLE_SLEEP_MAX_US 10000
	enum pf_hugepages hugepages;     /**< runtime.hugepages */
	/** The stages' view of this topology, filled once its ports and runtime keys are read. */
	struct pf_stage_env env;
};

/**
 * Load and validate @p path. All problems are appended to @p errs.
 * Returns 0 with *out set, or -EINVAL (errors recorded) with *out NULL.
 */
int pf_topo_load(const char *path, struct pf_topo **out, struct pf_errs *errs);
/** Same from memory; @p name stands for the file name in messages (tests). */
int pf_topo_load_string(const char *name, const char *text, struct pf_topo **out,
			struct pf_errs *errs);
void pf_topo_free(struct pf_topo *topo);

struct pf_change;
/**
 * Load @p path like pf_topo_load, then apply the live changes @p ch[0..n)
 * to the stages they name: each stage's edit op, after its parse, which
 * normalises the change (its entry, key and where it would be saved). A
 * stage's sc->edits records its net changes (pf_changes_hash). Errors of a
 * change name the change. Reentrant: the changes are an argument.
 *
 * With @p running (a reload, a live change; NULL: ports in file order),
 * every port @p running has keeps its index, whatever the file's order: a
 * port's index is what learnt MACs, neighbours and routes refer to. A new
 * port takes the next index after the running ones (a hole a removed port
 * left only once all PF_MAX_PORTS are used); a running port the file no
 * longer has leaves a hole (pf_port_present() false, every field zero).
 */
int pf_topo_load_edited(const char *path, struct pf_change *ch, unsigned int n,
			const struct pf_topo *running, struct pf_topo **out,
			struct pf_errs *errs);
/*
 * Editing a loaded YAML tree, as a live port change does before the topology
 * is read from it (app/config/conf.c). Nodes made here carry the document's
 * file, line @p line and column 1.
 */
struct pf_doc;
/** A new scalar (@p value copied), sequence or mapping (@p value NULL), or NULL (ENOMEM). */
struct pf_node *pf_node_new(const struct pf_doc *doc, enum pf_node_kind kind, const char *value,
			    int line);
/** Append @p item (with @p key in a mapping) to @p coll, which owns them now; -ENOMEM frees them. */
int pf_node_append(struct pf_node *coll, struct pf_node *key, struct pf_node *item);
/** Remove and free item @p i (and its key) of @p coll. */
void pf_node_remove(struct pf_node *coll, uint32_t i);
/** A hash of the tree under @p n: equal for trees node_equal, map order ignored. */
uint64_t pf_node_hash(const struct pf_node *n);
/** Free a node made by pf_node_new and not appended (NULL-safe). */
void pf_node_free(struct pf_node *n);
/**
 * The live port changes among @p ch[0..n) (table "ports": pipefwd-ctl
 * port-add, port-del) made to the loaded tree of @p doc
 * (app/config/port_change.c). Returns 0, or -errno with errors.
 */
int pf_topo_port_changes(struct pf_doc *doc, const struct pf_change *ch, unsigned int n,
			 struct pf_errs *errs);

int pf_topo_port_index(const struct pf_topo *topo, const char *name);

/**
 * Read route_sources: (@p n, NULL when absent) into @p t (app/config/sources.c),
 * after the stages: a source needs a stage that takes learnt routes.
 */
void pf_topo_load_sources(struct pf_topo *t, const struct pf_node *n, struct pf_errs *errs);

/** Whether two sources are the same (a reload keeps its routes and connection). */
bool pf_source_conf_same(const struct pf_source_conf *a, const struct pf_source_conf *b);
int pf_topo_stage_index(const struct pf_topo *topo, const char *name);
/** Index of instance 0 of the YAML stage @p group ("acl" for acl.0 .. acl.N-1), or -1. */
int pf_topo_group_index(const struct pf_topo *topo, const char *group);
/** Ring index from stage @p from to stage @p to, or -1. */
int pf_topo_ring_index(const struct pf_topo *topo, uint16_t from, uint16_t to);
/*
 * Edges from stage @p from to stage @p to go instance k to instance k (affine,
 * or flow-picked and keeping the flow key: topology.c mark_flow_picked).
 */
bool pf_topo_same_instance_edge(const struct pf_topo *topo, uint16_t from, uint16_t to);
/* Ring @p r joins different instances of such an edge: it never carries. */
bool pf_topo_ring_unused(const struct pf_topo *topo, uint16_t r);

/**
 * The first table file of @p a whose stamp (path, size, mtime, content hash)
 * differs in @p b, or that only one of them read; NULL when they read the
 * same files unchanged. The returned pointer is into @p b (or @p a when @p b
 * lacks the file).
 */
const char *pf_stage_conf_files_changed(const struct pf_stage_conf *a,
					const struct pf_stage_conf *b);
/** Free @p sc's file stamps (pf_topo_free does it for every stage). */
void pf_stage_conf_files_free(struct pf_stage_conf *sc);

/** Print a short human description (used by --check). */
void pf_topo_describe(const struct pf_topo *topo, FILE *out);

/**
 * What needs the whole EAL argument list (the topology's, then the command
 * line's, both read into topo->eal): every mapped lcore in EAL's lcore set,
 * the main lcore in it and mapped to no stage. Errors to @p errs, located at
 * the lcores entry. Returns 0 or -EINVAL.
 */
int pf_topo_check_eal(struct pf_topo *topo, struct pf_errs *errs);

#endif /* PF_TOPO_H */
