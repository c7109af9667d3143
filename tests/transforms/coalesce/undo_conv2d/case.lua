return { direction = "undo", key = "conv2d:i", why = "conv2d v1 back to v0's output-channel-first order with the store's subscript spelled out (only the header comment differs from v0)" }
