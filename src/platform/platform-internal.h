/*
 * platform-internal.h — what the files of the platform box share: the probe
 * context (root directory, CPUID seam, the text of /proc/cpuinfo and
 * /proc/cmdline read once) and the small parsers every topic uses.
 *
 * Each topic lives in its own file and fills its part of the report:
 * platform-cpu.c (identity, flags, SMT, hypervisor, wait strategy),
 * platform-mem.c (huge pages, THP), platform-pmu.c (PMU, RDT),
 * platform-freq.c (cpufreq, throttling, RAPL, MSRs), platform-kernel.c
 * (kernel, command line, modules, DMI), platform-cpuid.c (the CPUID seam and
 * dumps), platform-ctxsw.c (the context-switch measurement).
 */
#ifndef CORUN_PLATFORM_INTERNAL_H
#define CORUN_PLATFORM_INTERNAL_H

#include <stddef.h>

#include "corun/platform.h"

struct corun__pf_ctx {
    int root; /* directory fd of opts.root */
    const struct corun_platform_opts *opts;
    corun_platform_cpuid_fn cpuid; /* NULL: no CPUID */
    void *cpuid_user;
    char *cpuinfo;        /* /proc/cpuinfo, or NULL */
    char cpuinfo_why[96]; /* why cpuinfo is NULL */
    char *flags;          /* " flag flag ... " of the first processor, or NULL */
    const char *cmdline;  /* the report's kernel.cmdline, or NULL */
};

/* Registers of a CPUID leaf. */
enum { CORUN__EAX = 0, CORUN__EBX, CORUN__ECX, CORUN__EDX };

/* CPUID bit @bit of register @reg of @leaf/@sub: YES/NO, UNKNOWN without CPUID. */
enum corun_tri corun__pf_cpuid_bit(const struct corun__pf_ctx *c, uint32_t leaf, uint32_t sub,
                                   int reg, unsigned bit);
/* Whether the first processor's cpuinfo flags hold @flag; UNKNOWN without them. */
enum corun_tri corun__pf_flag(const struct corun__pf_ctx *c, const char *flag);

/*
 * corun__pf_cpuinfo_field() - the value of the first "KEY<tabs>: value" line
 * of cpuinfo text @text, copied into @out (NUL-terminated, trimmed). Returns
 * true when found.
 */
bool corun__pf_cpuinfo_field(const char *text, const char *key, char *out, size_t len);
/*
 * corun__pf_cpuinfo_flags() - a malloc'd " a b c " copy of the first "flags"
 * line of @text (spaces around every flag, so " pcid " finds whole words), or
 * NULL when there is none or memory ran out.
 */
char *corun__pf_cpuinfo_flags(const char *text);
/* Number of "processor" lines in @text. */
unsigned corun__pf_cpuinfo_count(const char *text);

/*
 * corun__pf_param() - whether kernel command line @cmdline holds parameter
 * @name (a bare word or name=value). The value (or "") goes into @val when
 * given. Quotes around values are honoured; everything after a lone "--" is
 * for init and ignored. The last occurrence wins, as in the kernel.
 */
bool corun__pf_param(const char *cmdline, const char *name, char *val, size_t len);

/* Reads @path below the root into @buf, trimmed. Returns length or -errno. */
int corun__pf_read_str(const struct corun__pf_ctx *c, const char *path, char *buf, size_t len);
/* Reads a decimal (signed) integer from @path. 0 or -errno / -EINVAL. */
int corun__pf_read_i64(const struct corun__pf_ctx *c, const char *path, int64_t *out);

/*
 * corun__pf_list_dir() - the names in directory @path below the root (no "."
 * and ".."), sorted, as a malloc'd array of malloc'd strings in *@names.
 * Returns the count or -errno. Free with corun__pf_free_names().
 */
int corun__pf_list_dir(const struct corun__pf_ctx *c, const char *path, char ***names);
void corun__pf_free_names(char **names, int n);

/* Copies @src into @dst of @len bytes, truncating; always NUL-terminates. */
void corun__pf_copy(char *dst, size_t len, const char *src);

/* The topics, each filling its part of @p. A failure is recorded in @p as
 * unknown-with-a-reason; only -ENOMEM is returned. */
int corun__pf_cpu(struct corun__pf_ctx *c, struct corun_platform *p);
int corun__pf_mem(struct corun__pf_ctx *c, struct corun_platform *p);
int corun__pf_pmu(struct corun__pf_ctx *c, struct corun_platform *p);
int corun__pf_rdt(struct corun__pf_ctx *c, struct corun_platform *p);
int corun__pf_freq(struct corun__pf_ctx *c, struct corun_platform *p);
int corun__pf_msr(struct corun__pf_ctx *c, struct corun_platform *p);

/*
 * The groups of Intel's turbo table into @m from MSR_TURBO_RATIO_LIMIT
 * @limits: one ratio per byte, lowest byte first, up to the first zero; for
 * the busy-core counts of MSR_TURBO_RATIO_LIMIT_CORES @cores when it was
 * read (@have_cores) and holds rising non-zero counts for those groups, else
 * for 1, 2, ... busy cores.
 */
void corun__pf_turbo_decode(uint64_t limits, bool have_cores, uint64_t cores,
                            struct corun_platform_msr *m);
int corun__pf_kernel(struct corun__pf_ctx *c, struct corun_platform *p);
int corun__pf_modules(struct corun__pf_ctx *c, struct corun_platform *p);
int corun__pf_firmware(struct corun__pf_ctx *c, struct corun_platform *p);

#endif
