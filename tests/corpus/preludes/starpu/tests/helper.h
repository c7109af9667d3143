// Stand-in for the tests' helper.h: their quiet-able fprintf.
#define FPRINTF(ofile, fmt, ...) fprintf(ofile, fmt, ## __VA_ARGS__)
