return { direction = "apply", key = "sgemm:acc:2d", why = "sgemm v3 to v4's 8 x 8 outputs a thread from register fragments (only the header comment differs from v4)" }
