// Stand-in for <alloca.h>: see README.md.
