return { direction = "undo", key = "sgemm:acc:2d", why = "sgemm v4 back to v3's 8 outputs a thread (only the header comment differs from v3)" }
