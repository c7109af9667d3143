// Stand-in for <stdio.h>: see README.md. printf is NVRTC's own; host code
// also writes to stderr.
#ifndef KL_STDIO_H
#define KL_STDIO_H
typedef struct kl_file FILE;
extern FILE *stderr;
extern FILE *stdout;
int fprintf(FILE *, const char *, ...);
#endif
