// kdns_memory.node: giving the kernel back memory a long-running kdns keeps without using it.
//
// dropBinaryPages(): the node binary is a 100 MB file mapped into every Node.js process; what
// start-up touched of it (the module loader, the compilers, the code of every builtin module
// loaded once) stays mapped, about 50 MiB of RSS on Node.js 26 of which a server then runs
// about 20. madvise(MADV_DONTNEED) unmaps the pages of the binary's read-only mappings from
// this process; the next access maps them again from the page cache (a minor fault), so only
// the pages still in use come back. Only mappings of the binary itself that are not writable
// and hold no private (copied, relocated) page are touched: their contents are the file's, so
// dropping them loses nothing. They stay in the page cache, shared, until the kernel needs the
// memory; unmapped, it can take them without asking kdns.
//
// trimMalloc(): glibc keeps freed memory in each thread's arena; V8's compiler threads leave
// several MiB of it after a burst of optimisation. malloc_trim(0) returns the free pages of
// every arena, not only the top of the main one.

#define _GNU_SOURCE
#include <node_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

// The node binary has a handful of mappings (headers, text, read-only data, relocated data,
// data); V8 maps its embedded code once more.
#define MAX_RANGES 32

struct mapping {
  unsigned long start, end;
  char perms[8];
  unsigned int dev_major, dev_minor;
  unsigned long inode;
  long rss_kb, private_dirty_kb, anonymous_kb;
  int valid;
};

struct ranges {
  unsigned long start[MAX_RANGES], end[MAX_RANGES];
  long rss_kb;
  int count;
};

// A mapping of the binary whose pages are all the file's: not writable, private, and without
// a page written (Private_Dirty) or copied on write (Anonymous).
static int droppable(const struct mapping *m, const struct stat *exe) {
  return m->valid && m->inode == (unsigned long)exe->st_ino && m->dev_major == major(exe->st_dev) && m->dev_minor == minor(exe->st_dev) &&
         m->perms[1] != 'w' && m->perms[3] == 'p' && m->private_dirty_kb == 0 && m->anonymous_kb == 0;
}

static void keep(struct ranges *r, const struct mapping *m, const struct stat *exe) {
  if (!droppable(m, exe) || r->count == MAX_RANGES) return;
  r->start[r->count] = m->start;
  r->end[r->count] = m->end;
  r->rss_kb += m->rss_kb;
  r->count++;
}

// The binary's droppable mappings, read from /proc/self/smaps. Collected first and advised
// after the file is closed, so the listing is not read while it changes.
static int find_ranges(struct ranges *r) {
  struct stat exe;
  if (stat("/proc/self/exe", &exe) != 0) return -1;
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f) return -1;
  struct mapping m = {0};
  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, f) >= 0) {
    struct mapping next = {0};
    if (sscanf(line, "%lx-%lx %7s %*x %x:%x %lu", &next.start, &next.end, next.perms, &next.dev_major, &next.dev_minor, &next.inode) == 6) {
      keep(r, &m, &exe);
      m = next;
      m.valid = 1;
      continue;
    }
    long kb;
    if (sscanf(line, "Rss: %ld kB", &kb) == 1) m.rss_kb = kb;
    else if (sscanf(line, "Private_Dirty: %ld kB", &kb) == 1) m.private_dirty_kb = kb;
    else if (sscanf(line, "Anonymous: %ld kB", &kb) == 1) m.anonymous_kb = kb;
  }
  keep(r, &m, &exe);
  free(line);
  fclose(f);
  return 0;
}

// dropBinaryPages(): the resident bytes of the binary's mappings it advised away (0 when it
// could not read its own mappings).
static napi_value drop_binary_pages(napi_env env, napi_callback_info info) {
  struct ranges r = {0};
  double dropped = 0;
  if (find_ranges(&r) == 0) {
    for (int i = 0; i < r.count; i++) madvise((void *)r.start[i], r.end[i] - r.start[i], MADV_DONTNEED);
    dropped = (double)r.rss_kb * 1024;
  }
  napi_value result;
  napi_create_double(env, dropped, &result);
  return result;
}

// trimMalloc(): true when glibc gave memory back (false too where the C library is not glibc).
static napi_value trim_malloc(napi_env env, napi_callback_info info) {
  int released = 0;
#ifdef __GLIBC__
  released = malloc_trim(0);
#endif
  napi_value result;
  napi_get_boolean(env, released != 0, &result);
  return result;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"dropBinaryPages", NULL, drop_binary_pages, NULL, NULL, NULL, napi_default, NULL},
      {"trimMalloc", NULL, trim_malloc, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
