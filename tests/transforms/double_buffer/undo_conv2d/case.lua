return { direction = "undo", key = "conv2d:stages", why = "conv2d v7 back to v6's single stage with two barriers a slice (only the header comment differs from v6)" }
