return { direction = "undo", key = "softmax",
  why = "softmax v6_persistent: both row loops become one block per row again and the grid rows; the result is v5_register_cache byte for byte" }
