return { direction = "apply", key = "count_leaves:e", roundtrip = false,
  why = "apply writes the while-while loops and the DONE sentinel's #define; undo gives the if-if loop back with its standard comments (`// the root` and the two if-if lines), which this input does not have" }
