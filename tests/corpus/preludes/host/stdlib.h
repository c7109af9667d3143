// Stand-in for <stdlib.h>: see README.md.
#ifndef KL_STDLIB_H
#define KL_STDLIB_H
#include <stddef.h>
void abort(void);
void exit(int);
char *getenv(const char *);
int rand(void);
#define RAND_MAX 2147483647
#endif
