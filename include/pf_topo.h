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

#include "pf_conf.h"
#include "pf_meta.h"

#define PF_NAME_MAX 32
#define PF_MAX_STAGES 64
#define PF_MAX_EDGES 8           /**< per stage, edge 0 included */
#define PF_MAX_RINGS 256
#define PF_MAX_LCORES 128        /**< RTE_MAX_LCORE of Debian's DPDK */
#define PF_MAX_EAL_ARGS 64
#define PF_MAX_INSTANCES 16      /**< most instances of one stage (instances: N) */
#define PF_NONE 0xffff
#define PF_RXQ_MAX 16            /**< rx queues per port pipefwd polls (queue 0..15) */

#define PF_RING_SIZE_DEFAULT 1024
#define PF_BURST_DEFAULT 32
#define PF_BURST_MAX 256

struct pf_stage_ops;

/** IPv6 addresses a port may carry (`ipv6:`), besides its MAC-derived link-local. */
#define PF_PORT_IPV6_MAX 4

struct pf_port_conf {
	char name[PF_NAME_MAX];
	const struct pf_node *node;
	char device[1024];         /**< vdev string ("net_pcap0,...") or PCI address */
	bool is_vdev;
	uint16_t rxd, txd;         /**< descriptors per queue */
	uint16_t n_rxq, n_txq;     /**< derived from the stages using the port */
	uint16_t mtu;              /**< IP MTU (`mtu:`, default 1500, like Linux) */
	uint16_t max_frame;        /**< largest untagged frame, FCS excluded: mtu + 14 or `max_frame:` */
	bool has_mac;
	uint8_t mac[6];            /**< used as source MAC when routing out */
	bool has_ipv4;
	uint32_t ipv4;             /**< interface address, host order */
	uint8_t ipv4_len;
	uint8_t n_ipv6;            /**< `ipv6:` addresses (one, or a list of up to PF_PORT_IPV6_MAX) */
	uint8_t ipv6_len[PF_PORT_IPV6_MAX];
	uint8_t ipv6[PF_PORT_IPV6_MAX][16]; /**< interface addresses, network order */
	uint32_t pcap_preload;     /**< packets net_pcap infinite_rx preloads */
	uint16_t port_id;          /**< DPDK port id, set by the runtime */
	uint8_t rss;               /**< enum pf_rss_mode (pf_portplan.h): symmetric, device, off */
	bool offloads_off;         /**< `offloads: off`: no rx checksum, no tx fast free */
	/** Set by the runtime: the port runs without RX IPv4 checksum offload (rx sums). */
	bool rx_cksum_off;
};

/**
 * A table file a stage's parse read (routes, rules, static MACs): what a
 * reload compares to see that the file changed though the YAML did not.
 */
struct pf_file_stamp {
	char *path;                      /**< as opened (resolved against the topology file) */
	uint64_t size;
	int64_t mtime_ns;
	uint64_t hash;                   /**< 64-bit hash of the content */
	uint64_t ino, dev;               /**< which file: a rename over it shows */
};

/** Largest table file (routes, rules, static MACs) read, in bytes. */
#define PF_TABLE_MAX_BYTES (256u << 20)
#define PF_TABLE_MAX_TEXT "256 MiB"

/**
 * One stage as the runtime runs it. A YAML stage with `instances: N` (N > 1)
 * becomes N consecutive confs named "<name>.0" .. "<name>.<N-1>" that share
 * the YAML node, the type and the edges; `group` keeps the YAML name.
 */
struct pf_stage_conf {
	char name[PF_NAME_MAX];
	char group[PF_NAME_MAX];         /**< the YAML stage name (== name without instances) */
	uint16_t instance;               /**< 0 .. n_instances-1 */
	uint16_t n_instances;            /**< instances: N (1 for a plain stage) */
	uint16_t first;                  /**< index of instance 0 of the group */
	const struct pf_stage_ops *ops;
	const struct pf_node *node;      /**< the stage's whole mapping */
	/** Target per edge (instance 0 of the target group), PF_NONE if unconnected. */
	uint16_t next[PF_MAX_EDGES];
	uint16_t n_inputs;               /**< rings feeding this stage */
	uint32_t burst;                  /**< source stages: port rx burst */
	int lcore;                       /**< from the lcore map, -1 until mapped */
	/* Port use, filled by the stage's parse() so the topology can check it. */
	uint16_t n_rx_ports;
	uint16_t rx_ports[PF_MAX_PORTS];
	uint16_t rx_queue;               /**< the rx queue polled on every rx port */
	/** rx `affine: true`: instance k feeds instance k of a next stage with as many
	 *  instances (RSS already spread the flows), no flow-hash fan-out */
	bool affine;
	uint16_t n_tx_ports;
	uint16_t tx_ports[PF_MAX_PORTS];
	uint16_t tx_queue[PF_MAX_PORTS]; /**< tx queue per tx port, assigned by the topology */
	void *cfg;                       /**< stage-private config from ops->parse */
	uint16_t n_files;                /**< table files parse read (pf_stage_conf_add_file) */
	struct pf_file_stamp *files;
	uint64_t edits;                  /**< hash of the live changes applied to cfg, 0: none */
};

/** One ring: all edges from one stage to another share it (order is kept). */
struct pf_ring_conf {
	char name[2 * PF_NAME_MAX + 4];  /**< "from->to" */
	uint16_t from, to;               /**< stage indexes */
	uint32_t size;                   /**< rte_ring size (power of two, usable size-1) */
	uint32_t burst;                  /**< consumer dequeue burst */
};

struct pf_lcore_conf {
	unsigned int id;
	uint16_t n_stages;
	uint16_t stages[PF_MAX_STAGES];
};

/** runtime.hugepages: EAL memory from hugepages or not. */
enum pf_hugepages {
	PF_HUGE_AUTO = 0,    /**< hugepages when /proc/meminfo shows free ones, else --no-huge */
	PF_HUGE_ON,          /**< EAL's default: fail without hugepages */
	PF_HUGE_OFF,         /**< always --no-huge */
};

enum pf_clock_mode {
	PF_CLOCK_WALL = 0,   /**< TSC */
	PF_CLOCK_PCAP,       /**< packet timestamps drive time (replay tests of aging) */
};

/**
 * What a stage sees of the topology (its parse, edit and every op through
 * pf_stage.env): the ports (names, MACs, addresses, frame sizes, offloads),
 * the clock, the tx flush interval and the file (relative table paths).
 * Not the other stages, the rings, the lcore map or the EAL arguments:
 * those are the runtime's. Each pf_topo holds its own (pf_topo.env), filled
 * while it loads; a reload hands the stages the new file's.
 */
struct pf_stage_env {
	const char *file;                 /**< the topology file */
	uint16_t n_ports;
	const struct pf_port_conf *ports; /**< n_ports, by port index */
	enum pf_clock_mode clock;
	uint32_t tx_flush_us;             /**< runtime.tx_flush_us */
};

struct pf_topo {
	char file[PATH_MAX];
	struct pf_doc *doc;

	int eal_argc;
	char *eal_argv[PF_MAX_EAL_ARGS];
	bool eal_has_lcores;             /**< the file chose lcores itself (-l/-c/--lcores) */
	unsigned int main_lcore;

	uint16_t n_ports;
	struct pf_port_conf ports[PF_MAX_PORTS];
	uint16_t n_stages;
	struct pf_stage_conf stages[PF_MAX_STAGES];
	uint16_t n_rings;
	struct pf_ring_conf rings[PF_MAX_RINGS];
	uint16_t n_lcores;
	struct pf_lcore_conf lcores[PF_MAX_LCORES];

	uint32_t ring_size_default;
	uint32_t burst_default;
	uint32_t mbufs;                  /**< pool size: configured or derived */
	uint32_t mbufs_required;         /**< what the topology needs at least */
	uint16_t mbuf_data_size;
	uint32_t tx_flush_us;
	enum pf_clock_mode clock;
	/** runtime.backpressure: lossless mode, a stage takes only what its downstream rings hold */
	bool backpressure;
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
 * to the stages they name (each stage's edit op, after its parse; sets
 * sc->edits). Errors of a change name the change. Not thread-safe: one
 * such load at a time (app/changes.c holds the telemetry lock).
 */
/** What sc->edits records for the changes @p ch[0..n) of YAML stage @p group (0: none). */
uint64_t pf_changes_hash(const struct pf_change *ch, unsigned int n, const char *group);
int pf_topo_load_edited(const char *path, struct pf_change *ch, unsigned int n,
			struct pf_topo **out, struct pf_errs *errs);

int pf_topo_port_index(const struct pf_topo *topo, const char *name);
int pf_topo_stage_index(const struct pf_topo *topo, const char *name);
/** Index of instance 0 of the YAML stage @p group ("acl" for acl.0 .. acl.N-1), or -1. */
int pf_topo_group_index(const struct pf_topo *topo, const char *group);
/** Ring index from stage @p from to stage @p to, or -1. */
int pf_topo_ring_index(const struct pf_topo *topo, uint16_t from, uint16_t to);

/** Port index of @p name among @p env's ports, or -1 (stages). */
int pf_stage_port_index(const struct pf_stage_env *env, const char *name);
/**
 * Read a port list parameter ("ports: [p0, p1]") into port indexes.
 * Used by stages that name ports; errors go to @p errs.
 */
int pf_stage_port_list(const struct pf_stage_env *env, const struct pf_node *seq,
		       const char *path, uint16_t *idx, uint16_t max, uint16_t *n,
		       struct pf_errs *errs);
/**
 * Whether some stage wires an edge named @p edge (of a stage of type
 * @p from_type; NULL: any type) to @p sc, which belongs to @p env's
 * topology: the one wiring question a stage's parse may ask (neigh: is any
 * "arp" edge wired to me?).
 */
bool pf_stage_fed_by(const struct pf_stage_env *env, const struct pf_stage_conf *sc,
		     const char *edge, const char *from_type);

/**
 * Record that @p sc's parse reads the table file @p path: its size, mtime,
 * inode and a hash of its content. Call it before reading the file: a file
 * that changes while it is read is then refused (pf_stage_conf_files_check)
 * and an edit racing the read is seen by the next reload. A path that is
 * not a regular file (directory, FIFO, device) or is larger than
 * PF_TABLE_MAX_BYTES is refused here, before any blocking open: -EINVAL
 * with the error at the YAML value naming the file. A file that does not
 * exist or cannot be read is recorded empty (the parser says why).
 * Returns 0, -EINVAL or -ENOMEM. No DPDK.
 */
int pf_stage_conf_add_file(struct pf_stage_conf *sc, const char *path, struct pf_errs *errs);
/**
 * Open a table file for the parsers: never blocks (O_NONBLOCK, regular files
 * only, else NULL with errno EISDIR or EINVAL) and reads at most
 * PF_TABLE_MAX_BYTES (then EOF). Returns a stdio stream or NULL with errno.
 */
FILE *pf_table_fopen(const char *path);
/**
 * After @p sc's parse: refuse every table file that changed while it was
 * read (size, mtime, inode or content differ from the stamp taken before),
 * and in errors from index @p first on, do not echo content of a file that
 * does not look like a table (its first entry line does not parse: a file
 * named by mistake, or a secret one): position only. Returns 0 or -EINVAL.
 */
int pf_stage_conf_files_check(struct pf_stage_conf *sc, unsigned int first,
			      struct pf_errs *errs);
/** Stamp @p path into @p out (path not set). Returns 0 or -errno. */
int pf_file_stamp_read(const char *path, struct pf_file_stamp *out);
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

#endif /* PF_TOPO_H */
