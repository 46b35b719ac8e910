/* memhog TOTAL_MIB [MIB_PER_SEC] [HOLD_SECONDS]
 * Allocates TOTAL_MIB in 1 MiB steps at MIB_PER_SEC (0 = as fast as possible), touching every page so the
 * memory is really charged to its cgroup, then holds it (forever by default). Prints progress lines
 * "allocated N MiB" so tests and chaos scripts can follow the ramp. On SIGTERM it prints one line
 * "sigterm <ns>" (CLOCK_REALTIME in ns since the epoch, read in the handler) and exits 0: the reaction
 * benchmark reads that line from the CRI log to time when the victim actually received its signal,
 * the same way whoever sent it (containerd on a CRI StopContainer, or earlyoom's kill(2)). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Async-signal-safe only (clock_gettime, write, _exit): the line is formatted by hand in a stack
 * buffer and leaves in one write(2), bypassing stdio, whose buffer the handler may have interrupted. */
static void on_term(int sig) {
  (void)sig;
  struct timespec ts = {0, 0};
  clock_gettime(CLOCK_REALTIME, &ts);
  unsigned long long ns = (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
  static const char tag[] = "sigterm ";
  char buf[48];
  char *end = buf + sizeof buf, *p = end;
  *--p = '\n';
  do { *--p = (char)('0' + (int)(ns % 10)); ns /= 10; } while (ns != 0);
  for (int i = (int)sizeof tag - 2; i >= 0; i--) *--p = tag[i];
  ssize_t r = write(STDOUT_FILENO, p, (size_t)(end - p));
  (void)r;
  _exit(0);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: memhog TOTAL_MIB [MIB_PER_SEC] [HOLD_SECONDS]\n");
    return 2;
  }
  long total = atol(argv[1]);
  double rate = argc > 2 ? atof(argv[2]) : 0;
  long hold = argc > 3 ? atol(argv[3]) : -1;
  signal(SIGTERM, on_term);
  setvbuf(stdout, NULL, _IOLBF, 0);
  const size_t mib = 1024 * 1024;
  long page = sysconf(_SC_PAGESIZE);
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (long i = 1; i <= total; i++) {
    char *p = malloc(mib);
    if (!p) { fprintf(stderr, "malloc failed at %ld MiB\n", i); return 1; }
    for (size_t off = 0; off < mib; off += (size_t)page) p[off] = (char)(i + 1);
    if (i % 16 == 0 || i == total) printf("allocated %ld MiB\n", i);
    if (rate > 0) {
      double due = (double)i / rate;
      struct timespec now;
      clock_gettime(CLOCK_MONOTONIC, &now);
      double el = (double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9;
      if (due > el) {
        double d = due - el;
        struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
        nanosleep(&ts, NULL);
      }
    }
  }
  printf("holding %ld MiB\n", total);
  if (hold >= 0) { sleep((unsigned)hold); return 0; }
  for (;;) pause();
}
