// Stand-in for <assert.h>: see README.md.
