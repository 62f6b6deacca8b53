/*
 * One getaddrinfo() call, as almost every program in a pod makes it: no service, SOCK_STREAM,
 * AF_UNSPEC unless told. Built twice by build.sh: against glibc (dynamic, so glibc's NSS reads
 * /etc/nsswitch.conf) and against musl (static, musl-gcc).
 *
 *   lookup [-t] NAME [unspec|inet|inet6]
 *
 * Prints each address on its own line and exits 0, or prints the EAI_* name of the error and
 * exits 2 (the gai_strerror text goes to stderr: it differs between the two libcs, the name
 * does not). -t adds a last line "# START_US END_US": the monotonic clock (CLOCK_MONOTONIC, the
 * one every process on the machine shares), in microseconds, just before and just after the call,
 * so a caller can put the queries it saw on the call's own time line. Usage errors exit 64.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

static long long now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

/* The symbolic name of an EAI_* code. Not every libc defines every code, hence the guards. */
static const char *eai_name(int code) {
    switch (code) {
    case EAI_AGAIN: return "EAI_AGAIN";
    case EAI_BADFLAGS: return "EAI_BADFLAGS";
    case EAI_FAIL: return "EAI_FAIL";
    case EAI_FAMILY: return "EAI_FAMILY";
    case EAI_MEMORY: return "EAI_MEMORY";
    case EAI_NONAME: return "EAI_NONAME";
    case EAI_SERVICE: return "EAI_SERVICE";
    case EAI_SOCKTYPE: return "EAI_SOCKTYPE";
    case EAI_SYSTEM: return "EAI_SYSTEM";
#ifdef EAI_OVERFLOW
    case EAI_OVERFLOW: return "EAI_OVERFLOW";
#endif
#ifdef EAI_NODATA
    case EAI_NODATA: return "EAI_NODATA";
#endif
#ifdef EAI_ADDRFAMILY
    case EAI_ADDRFAMILY: return "EAI_ADDRFAMILY";
#endif
    default: return "EAI_UNKNOWN";
    }
}

static int usage(void) {
    fprintf(stderr, "usage: lookup [-t] NAME [unspec|inet|inet6]\n");
    return 64;
}

int main(int argc, char **argv) {
    int timing = 0;
    int arg = 1;
    if (arg < argc && strcmp(argv[arg], "-t") == 0) {
        timing = 1;
        arg++;
    }
    if (arg >= argc || argc - arg > 2) return usage();
    const char *name = argv[arg];
    const char *family = arg + 1 < argc ? argv[arg + 1] : "unspec";

    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    if (strcmp(family, "unspec") == 0) hints.ai_family = AF_UNSPEC;
    else if (strcmp(family, "inet") == 0) hints.ai_family = AF_INET;
    else if (strcmp(family, "inet6") == 0) hints.ai_family = AF_INET6;
    else return usage();

    struct addrinfo *list = NULL;
    long long start = now_us();
    int rc = getaddrinfo(name, NULL, &hints, &list);
    long long end = now_us();

    if (rc != 0) {
        printf("%s\n", eai_name(rc));
        fprintf(stderr, "getaddrinfo(%s): %s\n", name, gai_strerror(rc));
    } else {
        for (struct addrinfo *ai = list; ai != NULL; ai = ai->ai_next) {
            char text[INET6_ADDRSTRLEN];
            const void *addr = ai->ai_family == AF_INET6
                ? (const void *)&((const struct sockaddr_in6 *)ai->ai_addr)->sin6_addr
                : (const void *)&((const struct sockaddr_in *)ai->ai_addr)->sin_addr;
            if (inet_ntop(ai->ai_family, addr, text, sizeof text) != NULL) printf("%s\n", text);
        }
        freeaddrinfo(list);
    }
    if (timing) printf("# %lld %lld\n", start, end);
    return rc == 0 ? 0 : 2;
}
