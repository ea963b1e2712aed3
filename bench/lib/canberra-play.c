/* canberra-play FILE: play FILE with libcanberra (as canberra-gtk-play -f does) and wait. */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
typedef struct ca_context ca_context;
typedef struct ca_proplist ca_proplist;
typedef void (*ca_finish_callback_t)(ca_context *, uint32_t, int, void *);
int ca_context_create(ca_context **c);
int ca_context_destroy(ca_context *c);
int ca_proplist_create(ca_proplist **p);
int ca_proplist_sets(ca_proplist *p, const char *key, const char *value);
int ca_proplist_destroy(ca_proplist *p);
int ca_context_play_full(ca_context *c, uint32_t id, ca_proplist *p, ca_finish_callback_t cb, void *userdata);
const char *ca_strerror(int code);
static volatile int done, result;
static void finished(ca_context *c, uint32_t id, int error, void *u) { (void)c; (void)id; (void)u; result = error; done = 1; }
int main(int argc, char **argv) {
  ca_context *c; ca_proplist *p; int r;
  if (argc != 2) { fprintf(stderr, "usage: canberra-play FILE\n"); return 2; }
  if ((r = ca_context_create(&c)) < 0) { fprintf(stderr, "canberra-play: %s\n", ca_strerror(r)); return 1; }
  ca_proplist_create(&p);
  ca_proplist_sets(p, "media.filename", argv[1]);
  ca_proplist_sets(p, "canberra.cache-control", "never");
  if ((r = ca_context_play_full(c, 1, p, finished, NULL)) < 0) { fprintf(stderr, "canberra-play: %s\n", ca_strerror(r)); return 1; }
  while (!done) usleep(1000);
  ca_proplist_destroy(p);
  ca_context_destroy(c);
  if (result < 0) { fprintf(stderr, "canberra-play: %s\n", ca_strerror(result)); return 1; }
  return 0;
}
