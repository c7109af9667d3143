return { direction = "apply", key = "block_max+block_sum", why = "softmax v1 -> v2: both block reductions, the buffer and the static_assert at once" }
