return { direction = "apply", key = "scale_tiles",
         why = "the launch block cdiv(BM * BN, TM) is 512 threads, and THREADS is a #define of that value" }
