// Stand-in for <string.h>: see README.md.
