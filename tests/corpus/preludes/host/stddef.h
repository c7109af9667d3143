// Stand-in for <stddef.h>: see README.md.
