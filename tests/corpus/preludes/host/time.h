// Stand-in for <time.h>: see README.md.
